"""OpenAIClient over real HTTP on 127.0.0.1: a stub server that states each answer, and the fake
OpenAI server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

from research_judge.clients.base import JudgeRequest, JudgeResponse, Message, Usage
from research_judge.clients.openai import OpenAIClient
from research_judge.errors import (
    ApiError,
    ConfigError,
    JudgeRefusal,
    RateLimitError,
    TransientApiError,
)
from research_judge.testing import FakeOpenAIServer, FakeReply

from http_stub import Answer, Seen, StubServer, closed_port_url, json_answer, text_answer

KEY = "sk-test-0123456789abcdef"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "integer"}, "note": {"type": ["string", "null"]}},
    "required": ["score", "note"],
    "additionalProperties": False,
}
REPLY = '{"score": 3, "note": null}'
ENV_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")


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


@asynccontextmanager
async def serving(
    answer: Answer, mode: Any = "json_schema", **options: Any
) -> AsyncIterator[tuple[OpenAIClient, StubServer]]:
    """A judge pointed at a stub server answering with ``answer``; closed on the way out."""
    async with StubServer(answer) as server:
        judge = OpenAIClient(
            "gpt-test", api_key=KEY, base_url=server.base_url, mode=mode, **options
        )
        try:
            yield judge, server
        finally:
            await judge.aclose()


async def reply_to(answer: Answer, mode: Any = "json_schema") -> JudgeResponse:
    async with serving(answer, mode) as (judge, _):
        return await judge.complete(make_request())


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    proxies = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
    for name in (*ENV_VARS, *proxies, *(p.lower() for p in proxies)):
        monkeypatch.delenv(name, raising=False)
    yield


# --- request shape and content per mode ------------------------------------------------------


async def test_json_schema_mode_sends_strict_schema_system_first_and_limits() -> None:
    field = {"token_limit_field": "max_completion_tokens"}
    async with serving(json_answer(completion()), **field) as (judge, server):
        response = await judge.complete(make_request())
    [sent] = server.seen
    body = sent.json()
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["user-agent"].startswith("research-judge/")
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


async def test_temperature_none_is_not_sent_and_max_tokens_field_is_selectable() -> None:
    async with serving(json_answer(completion()), token_limit_field="max_tokens") as (judge, srv):
        await judge.complete(make_request(temperature=None))
    body = srv.body()
    assert "temperature" not in body
    assert body["max_tokens"] == 777
    assert "max_completion_tokens" not in body


async def test_json_object_mode_sends_the_schema_llama_cpp_style() -> None:
    async with serving(json_answer(completion()), "json_object") as (judge, server):
        response = await judge.complete(make_request())
    assert server.body()["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert response.content == REPLY


async def test_tool_mode_forces_one_function_and_returns_its_arguments() -> None:
    answer = json_answer(completion(content=None, tool_args='{"score": 2, "note": "ok"}'))
    async with serving(answer, "tool") as (judge, server):
        response = await judge.complete(make_request())
    body = server.body()
    assert "response_format" not in body
    [tool] = body["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "scores"
    assert tool["function"]["parameters"] == SCHEMA
    assert body["tool_choice"] == {"type": "function", "function": {"name": "scores"}}
    assert response.content == '{"score": 2, "note": "ok"}'


async def test_tool_mode_falls_back_to_content_when_the_server_ignores_the_tool() -> None:
    response = await reply_to(json_answer(completion(content=REPLY)), "tool")
    assert response.content == REPLY


def test_the_schema_part_follows_each_request() -> None:
    judge = OpenAIClient("gpt-test", api_key=KEY)
    other_schema = {**SCHEMA, "required": ["score"]}
    other = judge.request_body(make_request(schema=other_schema))["response_format"]
    assert other["json_schema"]["schema"] is other_schema
    assert judge.request_body(make_request())["response_format"]["json_schema"]["schema"] is SCHEMA
    tools = OpenAIClient("gpt-test", api_key=KEY, mode="tool")
    for call in ("scoring", "counting"):
        function = tools.request_body(make_request(call=call))["tools"][0]["function"]
        assert call in function["description"]


def test_unknown_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="json_schema"):
        OpenAIClient("m", api_key=KEY, mode="xml")  # type: ignore[arg-type]


# --- usage, truncation, refusal --------------------------------------------------------------


async def test_usage_keeps_cached_tokens_inside_input_tokens() -> None:
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 50,
        "total_tokens": 1250,
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    response = await reply_to(json_answer(completion(usage=usage)))
    assert response.usage == Usage(input_tokens=1200, cached_input_tokens=1024, output_tokens=50)


async def test_missing_usage_or_details_count_as_zero() -> None:
    bare = await reply_to(json_answer(completion()))
    assert bare.usage == Usage()
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    no_details = await reply_to(json_answer(completion(usage=usage)))
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
        await reply_to(json_answer(body))
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
    async with serving(json_answer(error_body("slow down"), 429, **headers)) as (judge, server):
        with pytest.raises(RateLimitError) as caught:
            await judge.complete(make_request())
    assert caught.value.retry_after == wait
    assert caught.value.status == 429
    assert "s-0042" in str(caught.value)
    assert len(server.seen) == 1


async def test_exhausted_quota_429_is_not_retryable() -> None:
    answer = json_answer(error_body("You exceeded your quota", "insufficient_quota"), 429)
    with pytest.raises(ApiError) as caught:
        await reply_to(answer)
    assert not isinstance(caught.value, TransientApiError)


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503])
async def test_server_errors_are_transient_and_never_retried_here(status: int) -> None:
    answer = json_answer(error_body("boom"), status, **{"retry-after": "2"})
    async with serving(answer) as (judge, server):
        with pytest.raises(TransientApiError) as caught:
            await judge.complete(make_request())
    assert not isinstance(caught.value, RateLimitError)
    assert caught.value.status == status
    assert caught.value.retry_after == 2.0
    assert len(server.seen) == 1  # the engine retries; the client never does behind its back


@pytest.mark.parametrize(
    ("status", "hint"),
    [(401, "OPENAI_API_KEY"), (403, "OPENAI_API_KEY"), (404, "model name"), (400, "HTTP 400")],
)
async def test_client_errors_are_final_and_never_show_the_key(status: int, hint: str) -> None:
    # OpenAI's real 401 quotes the key it was given; ours must not pass it on.
    with pytest.raises(ApiError) as caught:
        await reply_to(json_answer(error_body(f"Incorrect API key provided: {KEY}."), status))
    assert not isinstance(caught.value, TransientApiError)
    assert caught.value.status == status
    assert KEY not in str(caught.value)
    assert KEY[:12] not in str(caught.value)
    assert hint in str(caught.value)


@pytest.mark.parametrize(
    "answer",
    [
        text_answer("<html>gateway login</html>"),
        json_answer({"choices": [{"message": "not an object"}]}),
    ],
)
async def test_a_200_that_is_not_a_chat_completion_is_a_final_error(answer: Answer) -> None:
    # e.g. a base URL pointing at a web page or proxy: retrying would not help.
    with pytest.raises(ApiError, match="not a chat completion") as caught:
        await reply_to(answer)
    assert not isinstance(caught.value, TransientApiError)
    assert "s-0042" in str(caught.value)


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        (json_answer({"error": "plain text error"}, 502), "plain text error"),
        (json_answer(["odd"], 502), "odd"),
        (json_answer({"detail": "x"}, 502), "detail"),
        (text_answer("<html>Bad Gateway</html>", 502), "Bad Gateway"),
        (text_answer("", 502), "no details given"),
    ],
)
async def test_unusual_error_bodies_still_map_cleanly(answer: Answer, detail: str) -> None:
    with pytest.raises(TransientApiError, match="HTTP 502") as caught:
        await reply_to(answer)
    assert detail in str(caught.value)


async def test_redirects_are_not_followed() -> None:
    # aiohttp would follow a 302 by re-sending the POST as a GET; a redirect is a wrong base URL.
    redirect = json_answer({}, 302, Location="/elsewhere")
    async with serving(redirect) as (judge, server):
        with pytest.raises(ApiError, match="HTTP 302") as caught:
            await judge.complete(make_request())
    assert not isinstance(caught.value, TransientApiError)
    assert "redirected to /elsewhere" in str(caught.value)
    assert [s.path for s in server.seen] == ["/v1/chat/completions"]


async def test_a_refused_connection_is_transient() -> None:
    judge = OpenAIClient("gpt-test", api_key=KEY, base_url=closed_port_url())
    with pytest.raises(TransientApiError, match="could not connect") as caught:
        await judge.complete(make_request())
    await judge.aclose()
    assert "s-0042" in str(caught.value)
    assert "Cannot connect to host 127.0.0.1" in str(caught.value)  # aiohttp's reason, passed on


async def test_a_connection_dropped_mid_exchange_is_transient_and_said_so() -> None:
    def hang_up(seen: Seen) -> web.StreamResponse:
        assert seen.request.transport is not None
        seen.request.transport.close()  # the server goes away before answering
        return web.Response()

    async with serving(hang_up) as (judge, server):
        with pytest.raises(TransientApiError, match="lost the connection") as caught:
            await judge.complete(make_request())
    assert "s-0042" in str(caught.value)
    assert len(server.seen) == 1


async def test_a_reply_slower_than_the_timeout_is_transient() -> None:
    async def slow(seen: Seen) -> web.StreamResponse:
        await asyncio.sleep(2)
        return web.json_response(completion())

    async with serving(slow, timeout=0.2) as (judge, server):
        with pytest.raises(TransientApiError, match="timed out"):
            await judge.complete(make_request())
    assert len(server.seen) == 1


# --- configuration ---------------------------------------------------------------------------


def test_missing_key_names_the_environment_variable() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIClient("m")


@pytest.mark.parametrize(
    "url", ["localhost:8000/v1", "ftp://host/v1", "http:///v1", "/v1", "http://h/v1?key=1"]
)
def test_a_base_url_that_is_not_http_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError, match="not an http"):
        OpenAIClient("m", api_key=KEY, base_url=url)


def test_the_default_endpoint_is_openai() -> None:
    assert OpenAIClient("m", api_key=KEY).base_url == "https://api.openai.com/v1"


async def test_key_base_url_organization_and_project_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-123456")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-abc")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-xyz")
    async with StubServer(json_answer(completion())) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        judge = OpenAIClient("m")
        await judge.complete(make_request())
        await judge.aclose()
    [sent] = server.seen
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-from-env-123456"
    assert sent.headers["openai-organization"] == "org-abc"
    assert sent.headers["openai-project"] == "proj-xyz"
    assert "sk-from-env" not in repr(judge)


# --- through real HTTP: the fake server --------------------------------------------------------


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "tool"])
async def test_every_mode_round_trips_through_the_fake_server(mode: Any) -> None:
    def responder(body: dict[str, Any]) -> str:
        return json.dumps({"score": len(body["messages"]), "note": body["messages"][0]["content"]})

    with FakeOpenAIServer(responder) as server:
        judge = OpenAIClient("local-model", api_key=KEY, base_url=server.base_url, mode=mode)
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
        judge = OpenAIClient("m", api_key=KEY, base_url=server.base_url)
        with pytest.raises(JudgeRefusal, match="truncated"):
            await judge.complete(make_request())
        server.fail_status = 503
        server.retry_after = 4
        with pytest.raises(TransientApiError) as caught:
            await judge.complete(make_request())
        await judge.aclose()
    assert caught.value.status == 503
    assert caught.value.retry_after == 4.0


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "tool"])
async def test_the_low_level_post_sends_what_the_sdks_create_sends(mode: Any) -> None:
    # The client skips create()'s per-request transform; the wire must not notice: same path,
    # same body bytes, same headers (the SDK's per-request retry counter and idempotency key aside).
    request = make_request()
    async with serving(json_answer(completion()), mode) as (judge, server):
        await judge.complete(request)
        await judge.sdk.chat.completions.with_raw_response.create(
            **judge.request_body(request), extra_headers=judge._headers(request)
        )
    ours, sdks = server.seen
    assert (ours.method, ours.path) == (sdks.method, sdks.path) == ("POST", "/v1/chat/completions")
    assert ours.body == sdks.body
    # Per request: the retry counter, the timeout hint, the idempotency key; and the marker
    # with_raw_response adds for itself (the old path's, not part of the call).
    varying = {
        "x-stainless-retry-count",
        "x-stainless-read-timeout",
        "idempotency-key",
        "x-stainless-raw-response",
    }
    assert {k.lower(): v for k, v in ours.headers.items() if k.lower() not in varying} == {
        k.lower(): v for k, v in sdks.headers.items() if k.lower() not in varying
    }
