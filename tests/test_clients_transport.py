"""Both network clients send over aiohttp, keep connections alive, and ``aclose()`` releases
everything (aiohttp warns "Unclosed client session" for anything left open)."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator

import anthropic
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


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    yield


def unclosed(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


async def test_openai_reuses_one_connection_and_aclose_releases_it() -> None:
    with (
        FakeOpenAIServer(lambda body: "{}") as server,
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always", ResourceWarning)
        judge = OpenAIJudge("fake-model", api_key="sk-test-123456", base_url=server.base_url)
        for _ in range(3):
            await judge.complete(REQUEST)
        await judge.aclose()
        await judge.aclose()  # twice is harmless
        del judge
        gc.collect()
    assert server.stats.completed == 3
    assert server.stats.connections == 1  # keep-alive: one connection for every call
    assert unclosed(caught) == []


async def test_openai_can_be_used_again_after_aclose() -> None:
    # The session belongs to the event loop it was opened in; after aclose a new one is opened.
    with FakeOpenAIServer(lambda body: "{}") as server:
        judge = OpenAIJudge("fake-model", api_key="sk-test-123456", base_url=server.base_url)
        await judge.complete(REQUEST)
        await judge.aclose()
        await judge.complete(REQUEST)
        await judge.aclose()
    assert server.stats.completed == 2


async def test_anthropic_uses_the_sdks_aiohttp_client_and_aclose_closes_it() -> None:
    with (
        FakeOpenAIServer(lambda body: "{}") as server,
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always", ResourceWarning)
        judge = AnthropicJudge("fake-model", api_key="sk-test-123456", base_url=server.base_url)
        # No public accessor: the SDK keeps its HTTP client as ``_client``.
        http_client = judge._client._client
        assert isinstance(http_client, anthropic.DefaultAioHttpClient)
        # The fake server has no /v1/messages: a 404, but still a real round trip.
        with pytest.raises(ApiError, match="HTTP 404"):
            await judge.complete(REQUEST)
        assert not http_client.is_closed
        await judge.aclose()
        del judge
        gc.collect()
    assert server.stats.connections >= 1
    assert http_client.is_closed
    assert unclosed(caught) == []
