"""Only an unreachable or failing provider counts towards "provider down" (exit 3)."""

from __future__ import annotations

import pytest
from robust_support import request_for

from research_judge.clients import ScriptedClient
from research_judge.clients.resilience import ResilientClient, RetryPolicy
from research_judge.errors import ApiError, ProviderDownError, RateLimitError, TransientApiError


async def no_sleep(_: float) -> None:
    return None


def resilient(error: Exception) -> ResilientClient:
    policy = RetryPolicy(attempts=1, down_after=0.0, min_failures_for_down=3)
    return ResilientClient(ScriptedClient(lambda r: error), concurrency=1, policy=policy,
                           sleep=no_sleep)  # fmt: skip


@pytest.mark.parametrize(
    "error",
    [
        ApiError("HTTP 400: maximum context length exceeded", 400),
        ApiError("HTTP 422: unprocessable", 422),
        ApiError("the server answered with a body that is not a chat completion"),
    ],
)
async def test_request_errors_never_count_as_an_outage(error: Exception) -> None:
    client = resilient(error)
    # Once a call has succeeded, a refusal is that request's problem. (Before any success, the
    # same 4xx on every call is a setting every call lacks: test_fail_fast stops on it.)
    client.health.success()
    for _ in range(20):  # a batch of oversized sessions
        with pytest.raises(ApiError) as raised:
            await client.complete(request_for("s"))
        assert not isinstance(raised.value, ProviderDownError)


@pytest.mark.parametrize(
    "error",
    [
        TransientApiError("HTTP 503: unavailable", 503),
        TransientApiError("connection refused"),
        RateLimitError("HTTP 429", 429),
    ],
)
async def test_transport_failures_and_5xx_429_still_do(error: Exception) -> None:
    client = resilient(error)
    with pytest.raises(ProviderDownError):
        for _ in range(20):
            try:
                await client.complete(request_for("s"))
            except ProviderDownError:
                raise
            except ApiError:
                continue
