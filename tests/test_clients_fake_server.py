"""The fake OpenAI-compatible server: wire shape, concurrency limits, failures, shutdown."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx2
import pytest
from openai.types.chat import ChatCompletion

from research_judge.clients.base import JudgeRequest, Message
from research_judge.clients.openai import OpenAIClient
from research_judge.errors import RateLimitError
from research_judge.testing import FakeOpenAIServer, FakeReply

BODY: dict[str, Any] = {
    "model": "fake-model",
    "messages": [{"role": "system", "content": "s" * 40}, {"role": "user", "content": "u" * 8}],
}


async def post(client: httpx2.AsyncClient, url: str, body: dict[str, Any]) -> httpx2.Response:
    return await client.post(f"{url}/chat/completions", json=body)


async def test_answers_a_valid_chat_completion_with_usage() -> None:
    with FakeOpenAIServer(lambda body: '{"ok": true}') as server:
        async with httpx2.AsyncClient() as client:
            first = await post(client, server.base_url, BODY)
            second = await post(client, server.base_url, BODY)
    assert first.status_code == 200
    completion = ChatCompletion.model_validate(first.json())
    assert completion.choices[0].message.content == '{"ok": true}'
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "fake-model"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 3)
    cached = second.json()["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached == 10  # the 40-character system message, seen before
    assert server.stats.connections == 1  # keep-alive reused the connection


async def test_a_prompt_is_cached_only_once_a_request_using_it_was_served() -> None:
    with FakeOpenAIServer(lambda body: "{}", latency=0.2) as server:
        async with httpx2.AsyncClient() as client:
            together = await asyncio.gather(
                *(post(client, server.base_url, BODY) for _ in range(3))
            )
            later = await post(client, server.base_url, BODY)
    cached = [r.json()["usage"]["prompt_tokens_details"]["cached_tokens"] for r in together]
    assert cached == [0, 0, 0]  # all three arrived before any was served
    assert later.json()["usage"]["prompt_tokens_details"]["cached_tokens"] == 10


async def test_a_reply_leaves_latency_after_its_request_arrived_whatever_the_responder_costs() -> (
    None
):
    def slow_responder(body: dict[str, Any]) -> str:
        time.sleep(0.3)  # the responder's own work happens inside the latency
        return "{}"

    with FakeOpenAIServer(slow_responder, latency=0.5) as server:
        async with httpx2.AsyncClient() as client:
            started = time.perf_counter()
            reply = await post(client, server.base_url, BODY)
            elapsed = time.perf_counter() - started
    assert reply.status_code == 200
    assert 0.5 <= elapsed < 0.7  # not 0.8: the responder's 0.3 s was spent inside the 0.5 s


async def test_forced_tool_gets_a_tool_call_and_refusals_are_sent_as_such() -> None:
    tool = {"type": "function", "function": {"name": "scores", "parameters": {}}}
    forced = {
        **BODY,
        "tools": [tool],
        "tool_choice": {"type": "function", "function": {"name": "scores"}},
    }
    replies = iter(['{"score": 1}', FakeReply(refusal="no")])
    with FakeOpenAIServer(lambda body: next(replies)) as server:
        async with httpx2.AsyncClient() as client:
            tool_reply = (await post(client, server.base_url, forced)).json()
            refusal = (await post(client, server.base_url, BODY)).json()
    message = tool_reply["choices"][0]["message"]
    assert message["content"] is None
    assert message["tool_calls"][0]["function"] == {"name": "scores", "arguments": '{"score": 1}'}
    assert refusal["choices"][0]["message"]["refusal"] == "no"


async def test_50_concurrent_requests_over_a_limit_of_6_get_429_with_retry_after() -> None:
    with FakeOpenAIServer(
        lambda body: "{}", latency=0.5, max_concurrent=6, retry_after=2
    ) as server:
        async with httpx2.AsyncClient(limits=httpx2.Limits(max_connections=100)) as client:
            replies = await asyncio.gather(
                *(post(client, server.base_url, BODY) for _ in range(50))
            )
    statuses = [r.status_code for r in replies]
    limited = [r for r in replies if r.status_code == 429]
    assert statuses.count(200) + len(limited) == 50
    assert len(limited) >= 30  # at most 6 run at once; the rest are turned away
    assert all(r.headers["retry-after"] == "2" for r in limited)
    assert all(r.headers["retry-after-ms"] == "2000" for r in limited)
    assert server.stats.max_in_flight <= 6
    assert server.stats.rate_limited == len(limited)
    assert server.stats.requests == 50


async def test_the_real_client_sees_rate_limits_with_their_retry_after() -> None:
    request = JudgeRequest(
        call="scoring",
        system="sys",
        messages=(Message("user", "hi"),),
        schema_name="scores",
        schema={"type": "object"},
    )
    with FakeOpenAIServer(lambda body: "{}", latency=0.5, max_concurrent=6, retry_after=0.5) as srv:
        judge = OpenAIClient("fake-model", api_key="sk-test", base_url=srv.base_url)
        outcomes = await asyncio.gather(
            *(judge.complete(request) for _ in range(50)), return_exceptions=True
        )
        await judge.aclose()
    limited = [o for o in outcomes if isinstance(o, RateLimitError)]
    assert len(limited) == srv.stats.rate_limited > 0
    assert {o.retry_after for o in limited} == {0.5}
    assert len(outcomes) - len(limited) == srv.stats.completed


async def test_latency_overlaps_instead_of_queueing() -> None:
    with FakeOpenAIServer(lambda body: "{}", latency=0.3) as server:
        async with httpx2.AsyncClient() as client:
            started = time.perf_counter()
            replies = await asyncio.gather(
                *(post(client, server.base_url, BODY) for _ in range(20))
            )
            elapsed = time.perf_counter() - started
    assert all(r.status_code == 200 for r in replies)
    assert elapsed < 2.0  # twenty in a row would take 6 s
    assert server.stats.max_in_flight > 1


async def test_fail_status_for_the_first_requests_then_recovery() -> None:
    with FakeOpenAIServer(lambda body: "{}", fail_status=503, fail_count=2) as server:
        async with httpx2.AsyncClient() as client:
            statuses = [(await post(client, server.base_url, BODY)).status_code for _ in range(3)]
            server.fail_status, server.fail_count = 500, None  # the provider goes down for good
            down = await post(client, server.base_url, BODY)
    assert statuses == [503, 503, 200]
    assert down.status_code == 500
    assert "retry-after" not in down.headers  # only sent when retry_after is set
    assert down.json()["error"]["message"] == "simulated provider failure"
    assert server.stats.failed == 3


async def test_a_broken_responder_becomes_a_500_naming_the_error() -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("missing")

    with FakeOpenAIServer(broken) as server:
        async with httpx2.AsyncClient() as client:
            reply = await post(client, server.base_url, BODY)
    assert reply.status_code == 500
    assert "KeyError" in reply.json()["error"]["message"]


async def test_authorization_presence_is_counted_but_its_value_not_kept() -> None:
    with FakeOpenAIServer() as server:
        async with httpx2.AsyncClient() as client:
            await client.post(
                f"{server.base_url}/chat/completions",
                json=BODY,
                headers={"Authorization": "Bearer sk-secret-abcdef"},
            )
            await post(client, server.base_url, BODY)
    assert server.stats.with_authorization == 1
    assert [r.has_authorization for r in server.requests] == [True, False]
    assert "sk-secret" not in repr(list(server.requests)) + repr(server.stats)


async def test_other_routes_and_bad_bodies() -> None:
    with FakeOpenAIServer() as server:
        async with httpx2.AsyncClient() as client:
            models = await client.get(f"{server.base_url}/models")
            missing = await client.post(f"{server.base_url}/embeddings", json={})
            bad = await client.post(f"{server.base_url}/chat/completions", content=b"{not json")
    assert models.json()["data"][0]["id"] == "fake-model"
    assert missing.status_code == 404
    assert bad.status_code == 400


async def test_the_server_stops_when_the_block_exits() -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
        async with httpx2.AsyncClient() as client:
            assert (await post(client, url, BODY)).status_code == 200
    async with httpx2.AsyncClient() as client:
        with pytest.raises(httpx2.ConnectError):
            await post(client, url, BODY)
    with pytest.raises(RuntimeError, match="not running"):
        _ = FakeOpenAIServer().base_url


def test_async_responders_are_awaited() -> None:
    async def responder(body: dict[str, Any]) -> str:
        await asyncio.sleep(0.01)
        return json.dumps({"n": len(body["messages"])})

    with FakeOpenAIServer(responder) as server:
        reply = httpx2.post(f"{server.base_url}/chat/completions", json=BODY)
    assert reply.json()["choices"][0]["message"]["content"] == '{"n": 2}'


async def test_malformed_framing_gets_a_400_and_a_closed_connection() -> None:
    with FakeOpenAIServer() as server:
        host, port = server.base_url.split("//")[1].split("/")[0].split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: lots\r\n\r\n")
        await writer.drain()
        answer = await reader.read()  # the server closes after answering
        writer.close()
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert server.stats.requests == 0
