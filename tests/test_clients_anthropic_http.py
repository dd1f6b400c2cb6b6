"""AnthropicClient end to end over real HTTP: the real anthropic SDK on its aiohttp transport
against the fake Messages API on 127.0.0.1 (``research_judge.testing.FakeBatchServer``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from anthropic_support import KEY, SCHEMA, VERDICTS
from research_judge.clients.anthropic import AnthropicClient
from research_judge.clients.base import JudgeRequest, Message
from research_judge.errors import ApiError, JudgeRefusal, RateLimitError, TransientApiError
from research_judge.testing import FakeReply
from research_judge.testing.fake_batches import FakeBatchServer

REQUEST = JudgeRequest(
    call="counting",
    system="Static judging instructions.",
    messages=(Message("user", "Session material."),),
    schema_name="verdicts",
    schema=SCHEMA,
    session_id="s-0007",
)


async def ask(srv: FakeBatchServer, mode: Any = "tool") -> Any:
    judge = AnthropicClient("claude-test", api_key=KEY, base_url=srv.anthropic_base_url, mode=mode)
    try:
        return await judge.complete(REQUEST)
    finally:
        await judge.aclose()


@pytest.mark.parametrize("mode", ["tool", "native"])
async def test_both_modes_round_trip_the_reply_and_its_usage(mode: Any) -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> str:
        seen.append(body)
        return json.dumps(VERDICTS, ensure_ascii=False)

    with FakeBatchServer(responder) as srv:
        response = await ask(srv, mode)
    assert json.loads(response.content) == VERDICTS
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    [body] = seen
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    if mode == "tool":
        assert body["tool_choice"] == {"type": "tool", "name": "verdicts"}
    else:
        assert body["output_config"]["format"]["schema"] == SCHEMA
    assert srv.stats.message_requests == 1


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (FakeReply(content='{"verdicts": []', finish_reason="length"), "truncated"),
        (FakeReply(refusal="I will not grade this."), "refused"),
    ],
)
async def test_truncated_and_refused_replies_raise_judge_refusal(
    reply: FakeReply, expected: str
) -> None:
    with FakeBatchServer(lambda body: reply) as srv, pytest.raises(JudgeRefusal, match=expected):
        await ask(srv)


@pytest.mark.parametrize("status", [429, 529])
async def test_rate_limit_and_overload_carry_retry_after(status: int) -> None:
    with (
        FakeBatchServer(fail_status=status, retry_after=7) as srv,
        pytest.raises(RateLimitError) as caught,
    ):
        await ask(srv)
    assert caught.value.retry_after == 7
    assert srv.stats.message_requests == 1  # the SDK did not retry on its own


async def test_a_server_error_is_transient_and_an_auth_error_final_without_the_key() -> None:
    with FakeBatchServer(fail_status=500) as srv, pytest.raises(TransientApiError):
        await ask(srv)
    with FakeBatchServer(fail_status=401) as srv, pytest.raises(ApiError) as caught:
        await ask(srv)
    assert not isinstance(caught.value, TransientApiError)
    assert caught.value.status == 401 and KEY not in str(caught.value)
