"""OpenAIJudge through the real openai SDK, offline: httpx2.MockTransport and the fake server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest

from research_judge.clients.base import JudgeRequest, Message, Usage
from research_judge.clients.openai import OpenAIJudge
from research_judge.errors import (
    ApiError,
    ConfigError,
    JudgeRefusal,
    RateLimitError,
    TransientApiError,
)
from research_judge.testing import FakeOpenAIServer, FakeReply

KEY = "sk-test-0123456789abcdef"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "integer"}, "note": {"type": ["string", "null"]}},
    "required": ["score", "note"],
    "additionalProperties": False,
}
REPLY = '{"score": 3, "note": null}'


def make_request(**changes: Any) -> JudgeRequest:
    fields: dict[str, Any] = {
        "call": "scoring",
        "system": "You are a strict judge.",
        "messages": (
            Message("user", "Grade this answer."),
            Message("assistant", "not json"),
            Message("user", "That was not JSON; answer again."),
        ),
        "schema_name": "scores",
        "schema": SCHEMA,
        "max_output_tokens": 777,
        "temperature": 0.0,
        "session_id": "s-0042",
    }
    fields.update(changes)
    return JudgeRequest(**fields)


def completion(
    content: str | None = REPLY,
    *,
    finish: str = "stop",
    refusal: str | None = None,
    tool_args: str | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if tool_args is not None:
        call = {"name": "scores", "arguments": tool_args}
        message["tool_calls"] = [{"id": "call_1", "type": "function", "function": call}]
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


class Transport:
    """A MockTransport that keeps every request and answers with the given function."""

    def __init__(self, answer: Callable[[httpx2.Request], httpx2.Response]) -> None:
        self.seen: list[httpx2.Request] = []
        self._answer = answer

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(request)
        return self._answer(request)

    def body(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.seen[index].content)  # type: ignore[no-any-return]


def judge_for(transport: Transport, mode: Any = "json_schema") -> OpenAIJudge:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(transport.handler))
    return OpenAIJudge("gpt-test", api_key=KEY, mode=mode, http_client=client)


def answering(body: dict[str, Any], status: int = 200, **headers: str) -> Transport:
    return Transport(lambda request: httpx2.Response(status, json=body, headers=headers))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield


# --- request shape and content per mode ------------------------------------------------------


async def test_json_schema_mode_sends_strict_schema_system_first_and_limits() -> None:
    transport = answering(completion())
    judge = judge_for(transport)
    response = await judge.complete(make_request())
    sent = transport.seen[0]
    body = transport.body()
    assert sent.url.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "gpt-test"
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert body["messages"][0]["content"] == "You are a strict judge."
    assert body["messages"][3]["content"] == "That was not JSON; answer again."
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "scores", "schema": SCHEMA, "strict": True},
    }
    assert body["max_completion_tokens"] == 777
    assert body["temperature"] == 0.0
    assert "tools" not in body
    assert response.content == REPLY
    assert response.stop_reason == "stop"
    assert response.cached is False
    await judge.aclose()


async def test_temperature_none_is_not_sent_and_max_tokens_field_is_selectable() -> None:
    transport = answering(completion())
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(transport.handler))
    judge = OpenAIJudge("m", api_key=KEY, http_client=client, token_limit_field="max_tokens")
    await judge.complete(make_request(temperature=None))
    body = transport.body()
    assert "temperature" not in body
    assert body["max_tokens"] == 777
    assert "max_completion_tokens" not in body


async def test_json_object_mode_sends_the_schema_llama_cpp_style() -> None:
    transport = answering(completion())
    response = await judge_for(transport, "json_object").complete(make_request())
    assert transport.body()["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert response.content == REPLY


async def test_tool_mode_forces_one_function_and_returns_its_arguments() -> None:
    transport = answering(completion(content=None, tool_args='{"score": 2, "note": "ok"}'))
    response = await judge_for(transport, "tool").complete(make_request())
    body = transport.body()
    assert "response_format" not in body
    [tool] = body["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "scores"
    assert tool["function"]["parameters"] == SCHEMA
    assert body["tool_choice"] == {"type": "function", "function": {"name": "scores"}}
    assert response.content == '{"score": 2, "note": "ok"}'


async def test_tool_mode_falls_back_to_content_when_the_server_ignores_the_tool() -> None:
    transport = answering(completion(content=REPLY))
    response = await judge_for(transport, "tool").complete(make_request())
    assert response.content == REPLY


def test_the_schema_part_follows_each_request() -> None:
    judge = judge_for(answering(completion()))
    other_schema = {**SCHEMA, "required": ["score"]}
    other = judge.request_body(make_request(schema=other_schema))["response_format"]
    assert other["json_schema"]["schema"] is other_schema
    assert judge.request_body(make_request())["response_format"]["json_schema"]["schema"] is SCHEMA
    tools = judge_for(answering(completion()), "tool")
    for call in ("scoring", "counting"):
        function = tools.request_body(make_request(call=call))["tools"][0]["function"]
        assert call in function["description"]


def test_unknown_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="json_schema"):
        OpenAIJudge("m", api_key=KEY, mode="xml")  # type: ignore[arg-type]


# --- usage, truncation, refusal --------------------------------------------------------------


async def test_usage_keeps_cached_tokens_inside_input_tokens() -> None:
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 50,
        "total_tokens": 1250,
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    response = await judge_for(answering(completion(usage=usage))).complete(make_request())
    assert response.usage == Usage(input_tokens=1200, cached_input_tokens=1024, output_tokens=50)


async def test_missing_usage_or_details_count_as_zero() -> None:
    bare = await judge_for(answering(completion())).complete(make_request())
    assert bare.usage == Usage()
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    no_details = await judge_for(answering(completion(usage=usage))).complete(make_request())
    assert no_details.usage == Usage(10, 0, 2)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (completion('{"score": 3, "no', finish="length"), "truncated at max_output_tokens"),
        (completion(None, refusal="I cannot grade this."), "refused: I cannot grade this"),
        (completion(None, finish="content_filter"), "content filter"),
        (completion(None), "empty"),
        ({**completion(), "choices": []}, "no choices"),
    ],
)
async def test_unusable_replies_raise_judge_refusal(body: dict[str, Any], expected: str) -> None:
    with pytest.raises(JudgeRefusal, match=expected) as caught:
        await judge_for(answering(body)).complete(make_request())
    assert "s-0042" in str(caught.value)


# --- errors ----------------------------------------------------------------------------------


def error_body(message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "error", "code": code}}


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({}, None),
    ],
)
async def test_429_is_a_rate_limit_carrying_retry_after(
    headers: dict[str, str], wait: float | None
) -> None:
    transport = answering(error_body("slow down"), 429, **headers)
    with pytest.raises(RateLimitError) as caught:
        await judge_for(transport).complete(make_request())
    assert caught.value.retry_after == wait
    assert caught.value.status == 429
    assert "s-0042" in str(caught.value)
    assert len(transport.seen) == 1


async def test_exhausted_quota_429_is_not_retryable() -> None:
    transport = answering(error_body("You exceeded your quota", "insufficient_quota"), 429)
    with pytest.raises(ApiError) as caught:
        await judge_for(transport).complete(make_request())
    assert not isinstance(caught.value, TransientApiError)


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503])
async def test_server_errors_are_transient_and_sdk_retries_are_off(status: int) -> None:
    transport = answering(error_body("boom"), status, **{"retry-after": "2"})
    with pytest.raises(TransientApiError) as caught:
        await judge_for(transport).complete(make_request())
    assert not isinstance(caught.value, RateLimitError)
    assert caught.value.status == status
    assert caught.value.retry_after == 2.0
    assert len(transport.seen) == 1  # the SDK did not retry behind our back


@pytest.mark.parametrize(
    ("status", "hint"),
    [(401, "OPENAI_API_KEY"), (403, "OPENAI_API_KEY"), (404, "model name"), (400, "HTTP 400")],
)
async def test_client_errors_are_final_and_never_show_the_key(status: int, hint: str) -> None:
    # OpenAI's real 401 quotes the key it was given; ours must not pass it on.
    transport = answering(error_body(f"Incorrect API key provided: {KEY}."), status)
    with pytest.raises(ApiError) as caught:
        await judge_for(transport).complete(make_request())
    assert not isinstance(caught.value, TransientApiError)
    assert caught.value.status == status
    assert KEY not in str(caught.value)
    assert KEY[:12] not in str(caught.value)
    assert hint in str(caught.value)


@pytest.mark.parametrize(
    "answer",
    [
        httpx2.Response(200, text="<html>gateway login</html>"),
        httpx2.Response(200, json={"choices": [{"message": "not an object"}]}),
    ],
)
async def test_a_200_that_is_not_a_chat_completion_is_a_final_error(
    answer: httpx2.Response,
) -> None:
    # e.g. a base URL pointing at a web page or proxy: retrying would not help.
    with pytest.raises(ApiError, match="not a chat completion") as caught:
        await judge_for(Transport(lambda request: answer)).complete(make_request())
    assert not isinstance(caught.value, TransientApiError)
    assert "s-0042" in str(caught.value)


@pytest.mark.parametrize("body", [{"error": "plain text error"}, ["odd"], {"detail": "x"}])
async def test_unusual_error_bodies_still_map_cleanly(body: Any) -> None:
    with pytest.raises(TransientApiError, match="HTTP 502"):
        await judge_for(answering(body, 502)).complete(make_request())


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (httpx2.ConnectError("refused"), "could not connect"),
        (httpx2.ReadTimeout("slow"), "timed out"),
    ],
)
async def test_network_failures_are_transient(error: Exception, words: str) -> None:
    def fail(request: httpx2.Request) -> httpx2.Response:
        raise error

    transport = Transport(fail)
    with pytest.raises(TransientApiError, match=words):
        await judge_for(transport).complete(make_request())
    assert len(transport.seen) == 1


# --- configuration ---------------------------------------------------------------------------


def test_missing_key_names_the_environment_variable() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIJudge("m")


async def test_key_and_base_url_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-123456")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://judge.internal:8080/v1")
    transport = answering(completion())
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(transport.handler))
    judge = OpenAIJudge("m", http_client=client)
    await judge.complete(make_request())
    assert str(transport.seen[0].url) == "http://judge.internal:8080/v1/chat/completions"
    assert transport.seen[0].headers["authorization"] == "Bearer sk-from-env-123456"
    assert "sk-from-env" not in repr(judge)


# --- through real HTTP: the fake server --------------------------------------------------------


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "tool"])
async def test_every_mode_round_trips_through_the_fake_server(mode: Any) -> None:
    def responder(body: dict[str, Any]) -> str:
        return json.dumps({"score": len(body["messages"]), "note": body["messages"][0]["content"]})

    with FakeOpenAIServer(responder) as server:
        judge = OpenAIJudge("local-model", api_key=KEY, base_url=server.base_url, mode=mode)
        first = await judge.complete(make_request())
        second = await judge.complete(make_request())
        await judge.aclose()
    assert json.loads(first.content) == {"score": 4, "note": "You are a strict judge."}
    assert first.usage.input_tokens > 0 and first.usage.cached_input_tokens == 0
    assert second.usage.cached_input_tokens > 0  # same system prompt: the fake caches it
    assert server.stats.with_authorization == 2
    seen = list(server.requests)
    assert all(KEY not in json.dumps(r.body) for r in seen)
    assert ("tools" in seen[0].body) == (mode == "tool")


async def test_fake_server_truncation_and_outage_map_to_our_errors() -> None:
    with FakeOpenAIServer(lambda body: FakeReply('{"score"', finish_reason="length")) as server:
        judge = OpenAIJudge("m", api_key=KEY, base_url=server.base_url)
        with pytest.raises(JudgeRefusal, match="truncated"):
            await judge.complete(make_request())
        server.fail_status = 503
        server.retry_after = 4
        with pytest.raises(TransientApiError) as caught:
            await judge.complete(make_request())
        await judge.aclose()
    assert caught.value.status == 503
    assert caught.value.retry_after == 4.0
