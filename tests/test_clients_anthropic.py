"""AnthropicClient through the real anthropic SDK, offline via httpx2.MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest

from anthropic_support import KEY, SCHEMA, VERDICTS
from research_judge.clients.anthropic import AnthropicClient
from research_judge.clients.base import JudgeRequest, Message, Usage
from research_judge.errors import (
    ApiError,
    ConfigError,
    JudgeRefusal,
    RateLimitError,
    TransientApiError,
)


def make_request(**changes: Any) -> JudgeRequest:
    fields: dict[str, Any] = {
        "call": "counting",
        "system": "Static judging instructions.",
        "messages": (Message("user", "Session material."),),
        "schema_name": "verdicts",
        "schema": SCHEMA,
        "max_output_tokens": 2048,
        "temperature": 0.0,
        "session_id": "s-0007",
    }
    fields.update(changes)
    return JudgeRequest(**fields)


def message(
    content: list[dict[str, Any]],
    *,
    stop: str = "tool_use",
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 5},
    }


def tool_use(payload: dict[str, Any], name: str = "verdicts") -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": payload}


class Transport:
    def __init__(self, answer: Callable[[httpx2.Request], httpx2.Response]) -> None:
        self.seen: list[httpx2.Request] = []
        self._answer = answer

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(request)
        return self._answer(request)

    def body(self) -> dict[str, Any]:
        return json.loads(self.seen[-1].content)  # type: ignore[no-any-return]


def answering(body: dict[str, Any], status: int = 200, **headers: str) -> Transport:
    return Transport(lambda request: httpx2.Response(status, json=body, headers=headers))


def judge_for(transport: Transport, mode: Any = "tool") -> AnthropicClient:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(transport.handler))
    return AnthropicClient("claude-test", api_key=KEY, mode=mode, http_client=client)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    yield


async def test_tool_mode_caches_the_system_prefix_and_forces_a_strict_tool() -> None:
    transport = answering(message([tool_use(VERDICTS)]))
    judge = judge_for(transport)
    response = await judge.complete(make_request())
    body = transport.body()
    assert transport.seen[0].url.path == "/v1/messages"
    assert body["system"] == [
        {
            "type": "text",
            "text": "Static judging instructions.",
            "cache_control": {"type": "ephemeral"},
        }
    ]
    assert body["messages"] == [{"role": "user", "content": "Session material."}]
    assert body["max_tokens"] == 2048
    [tool] = body["tools"]
    assert tool["name"] == "verdicts"
    assert tool["input_schema"] == SCHEMA
    assert tool["strict"] is True
    assert body["tool_choice"] == {"type": "tool", "name": "verdicts"}
    assert "output_config" not in body
    assert "temperature" not in body  # this SDK version has no temperature parameter
    assert json.loads(response.content) == VERDICTS
    assert response.stop_reason == "tool_use"
    await judge.aclose()


async def test_native_mode_sends_output_config_and_returns_the_text() -> None:
    text = json.dumps(VERDICTS)
    transport = answering(message([{"type": "text", "text": text}], stop="end_turn"))
    response = await judge_for(transport, "native").complete(make_request())
    body = transport.body()
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert "tools" not in body and "tool_choice" not in body
    assert response.content == text


async def test_usage_counts_cache_writes_and_reads_as_input() -> None:
    usage = {
        "input_tokens": 100,
        "output_tokens": 40,
        "cache_creation_input_tokens": 500,
        "cache_read_input_tokens": 2000,
    }
    transport = answering(message([tool_use(VERDICTS)], usage=usage))
    response = await judge_for(transport).complete(make_request())
    assert response.usage == Usage(input_tokens=2600, cached_input_tokens=2000, output_tokens=40)


@pytest.mark.parametrize(
    ("body", "mode", "expected"),
    [
        (message([tool_use(VERDICTS)], stop="max_tokens"), "tool", "truncated"),
        (message([], stop="refusal"), "tool", "refused"),
        (message([{"type": "text", "text": "{}"}], stop="end_turn"), "tool", "did not call"),
        (message([tool_use(VERDICTS, name="other")]), "tool", "did not call"),
        (message([], stop="end_turn"), "native", "empty"),
    ],
)
async def test_unusable_replies_raise_judge_refusal(
    body: dict[str, Any], mode: str, expected: str
) -> None:
    with pytest.raises(JudgeRefusal, match=expected) as caught:
        await judge_for(answering(body), mode).complete(make_request())
    assert "s-0007" in str(caught.value)


def error_body(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}}


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limit_error"), (529, "overloaded_error")])
async def test_rate_limit_and_overload_carry_retry_after(status: int, kind: str) -> None:
    transport = answering(error_body(kind, "slow down"), status, **{"retry-after": "30"})
    with pytest.raises(RateLimitError) as caught:
        await judge_for(transport).complete(make_request())
    assert caught.value.status == status
    assert caught.value.retry_after == 30.0  # as given: the engine applies its own cap
    assert len(transport.seen) == 1


async def test_server_error_is_transient_and_not_retried_by_the_sdk() -> None:
    transport = answering(error_body("api_error", "internal"), 500)
    with pytest.raises(TransientApiError) as caught:
        await judge_for(transport).complete(make_request())
    assert not isinstance(caught.value, RateLimitError)
    assert len(transport.seen) == 1


async def test_authentication_error_is_final_and_hides_the_key() -> None:
    transport = answering(error_body("authentication_error", f"invalid x-api-key {KEY}"), 401)
    with pytest.raises(ApiError) as caught:
        await judge_for(transport).complete(make_request())
    assert not isinstance(caught.value, TransientApiError)
    assert KEY not in str(caught.value)
    assert "ANTHROPIC_API_KEY" in str(caught.value)


async def test_connection_error_is_transient() -> None:
    def fail(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused")

    with pytest.raises(TransientApiError, match="could not connect"):
        await judge_for(Transport(fail)).complete(make_request())


def test_missing_key_names_the_environment_variable() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicClient("claude-test")


def test_unknown_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="native"):
        AnthropicClient("claude-test", api_key=KEY, mode="json_schema")  # type: ignore[arg-type]


async def test_base_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://gateway.internal:9000")
    transport = answering(message([tool_use(VERDICTS)]))
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(transport.handler))
    judge = AnthropicClient("claude-test", api_key=KEY, http_client=client)
    await judge.complete(make_request())
    assert str(transport.seen[0].url) == "http://gateway.internal:9000/v1/messages"
    assert KEY not in repr(judge)
