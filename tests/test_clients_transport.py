"""Both network clients default to the SDKs' aiohttp transport, and ``aclose()`` releases it."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from research_judge.clients.anthropic import AnthropicJudge
from research_judge.clients.base import JudgeRequest, Message
from research_judge.clients.openai import OpenAIJudge
from research_judge.errors import ApiError
from research_judge.testing import FakeOpenAIServer

REQUEST = JudgeRequest(
    call="scoring",
    system="instructions",
    messages=(Message("user", "material"),),
    schema_name="scores",
    schema={"type": "object"},
    session_id="s-1",
)
# (judge class, the SDK's aiohttp client class)
CLIENTS: dict[str, tuple[Any, type[httpx2.AsyncClient]]] = {
    "openai": (OpenAIJudge, openai.DefaultAioHttpClient),
    "anthropic": (AnthropicJudge, anthropic.DefaultAioHttpClient),
}


async def round_trip_then_close(provider: str, base_url: str) -> httpx2.AsyncClient:
    """One real HTTP exchange (aiohttp opens its session on the first request), then aclose().

    Returns the SDK's HTTP client; the judge itself is dropped with this frame.
    """
    judge_class, aiohttp_client = CLIENTS[provider]
    judge = judge_class("fake-model", api_key="sk-test-123456", base_url=base_url)
    # No public accessor: the SDK keeps its HTTP client as ``_client``.
    http_client = judge._client._client
    assert isinstance(http_client, aiohttp_client), type(http_client).__mro__
    if provider == "openai":
        await judge.complete(REQUEST)
    else:  # the fake server has no /v1/messages: a 404, but still a real round trip
        with pytest.raises(ApiError, match="HTTP 404"):
            await judge.complete(REQUEST)
    assert not http_client.is_closed
    await judge.aclose()
    return http_client


@pytest.mark.parametrize("provider", sorted(CLIENTS))
async def test_default_transport_is_aiohttp_and_aclose_closes_it(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    # aiohttp warns "Unclosed client session" / "Unclosed connector" when it collects an open
    # one; a closed judge must leave nothing for it to find.
    with (
        FakeOpenAIServer(lambda body: "{}") as server,
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always", ResourceWarning)
        http_client = await round_trip_then_close(provider, server.base_url)
        gc.collect()
    assert server.stats.connections >= 1
    assert http_client.is_closed
    unclosed = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == []
