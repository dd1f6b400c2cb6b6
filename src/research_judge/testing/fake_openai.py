"""A small OpenAI-compatible server on 127.0.0.1, for tests and benchmarks of the real clients.

    with FakeOpenAIServer(lambda body: '{"scores": []}', latency=0.05, max_concurrent=8) as srv:
        judge = OpenAIClient("fake-model", api_key="sk-test", base_url=srv.base_url)
        ...
        assert srv.stats.rate_limited == 0

It answers ``POST /v1/chat/completions`` with a real ChatCompletion (plain content, or a tool call
when the request forces a function tool) and ``GET /v1/models``. One asyncio loop in a background
thread serves every connection (HTTP/1.1, keep-alive, ``Content-Length`` bodies), so hundreds of
concurrent requests cost little. ``latency`` sleeps without blocking other requests.

Usage is estimated at four characters a token; a system message seen before counts as cached, as
a provider's prompt cache would.

With ``context_window`` it behaves like a model with that window: a request whose prompt plus
``max_tokens`` / ``max_completion_tokens`` is over the window gets OpenAI's 400
``context_length_exceeded``, and a reply longer than the request's token cap is cut there and
sent with ``finish_reason: "length"``. ``chars_per_token`` sets how it counts (four by default;
fewer counts more tokens, like text that tokenizes badly).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from research_judge.cost.tokens import estimate_tokens
from research_judge.testing._server_thread import Closer, ServerThread

_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    413: "Content Too Large",
}

HEAD_LIMIT = 16 * 2**20
"""The most a request's line and headers may hold, in bytes."""
BODY_LIMIT = 64 * 2**20
"""The largest request body read, in bytes; a longer declared ``Content-Length`` gets 413 before
any of it is buffered (a prompt of a million tokens is a few MB)."""


@dataclass(frozen=True)
class FakeReply:
    """A reply with more than content: a finish reason (``length`` to simulate truncation) or a
    refusal."""

    content: str | None = None
    finish_reason: str = "stop"
    refusal: str | None = None


ReplyValue: TypeAlias = str | FakeReply


@runtime_checkable
class HeaderResponder(Protocol):
    """A responder that also reads the request's headers (lower-cased names), such as
    ``FakeJudge``. A ``ValueError`` it raises is the request's fault: the reply is HTTP 400."""

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> ReplyValue: ...


Responder: TypeAlias = (
    Callable[[dict[str, Any]], ReplyValue | Awaitable[ReplyValue]] | HeaderResponder
)


@dataclass
class ServerStats:
    """Counters, updated by the server thread; read them after the requests are done."""

    requests: int = 0  # chat completion requests received
    completed: int = 0  # answered 200
    refused_context: int = 0  # 400 context_length_exceeded (prompt + max_tokens over the window)
    cut: int = 0  # replies cut at the request's max tokens (finish_reason "length")
    prompt_tokens: int = 0  # counted over completed requests
    completion_tokens: int = 0
    rate_limited: int = 0  # 429s sent because max_concurrent was reached
    failed: int = 0  # answered with fail_status, or 500 because the responder raised
    in_flight: int = 0
    max_in_flight: int = 0
    connections: int = 0
    with_authorization: int = 0  # requests carrying an Authorization header (value not kept)


@dataclass(frozen=True)
class SeenRequest:
    """One chat completion request as received: the body and whether it carried credentials."""

    body: dict[str, Any]
    has_authorization: bool
    status: int


class FakeOpenAIServer(ServerThread):
    """Context manager running the server; ``base_url`` ends in ``/v1``, as clients expect.

    ``max_concurrent``: more requests than this in flight get 429 with ``Retry-After`` (the
    ``retry_after`` value, 1 s when None). ``fail_status``: every request (or the first
    ``fail_count``) gets that status, with ``Retry-After`` when ``retry_after`` is set; the
    attribute may be changed while running to take the "provider" down or bring it back.
    ``requests`` keeps the last ``keep_requests`` requests for inspection. ``port`` 0 (the
    default) takes a free one; it always listens on 127.0.0.1 only.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        max_concurrent: int | None = None,
        fail_status: int | None = None,
        fail_count: int | None = None,
        retry_after: float | None = None,
        keep_requests: int = 1000,
        port: int = 0,
        context_window: int | None = None,
        chars_per_token: float = 4.0,
        max_body: int = BODY_LIMIT,
    ) -> None:
        super().__init__("the fake OpenAI server", "fake-openai")
        self.max_body = max_body
        self.responder: Responder = responder or (lambda body: "{}")
        self.context_window = context_window
        self.chars_per_token = chars_per_token
        self.latency = latency
        self.max_concurrent = max_concurrent
        self.fail_status = fail_status
        self.fail_count = fail_count
        self.retry_after = retry_after
        self.stats = ServerStats()
        self.requests: deque[SeenRequest] = deque(maxlen=keep_requests)
        self._ids = itertools.count(1)
        self._failures_sent = 0
        self._seen_systems: set[str] = set()
        self._wanted_port = port
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        if self._port is None:
            raise RuntimeError("the fake server is not running")
        return f"http://127.0.0.1:{self._port}/v1"

    # --- the server thread ---------------------------------------------------------------

    async def _open(self) -> tuple[int, Closer]:
        # A deep backlog: a benchmark opens hundreds of connections at once. A high read limit:
        # the material header of a later counting call carries the whole claim list (hundreds
        # of KB for a long answer), past asyncio's 64 KiB default.
        server = await asyncio.start_server(
            self._connection,
            "127.0.0.1",
            self._wanted_port,
            backlog=2048,
            limit=HEAD_LIMIT,
        )

        async def close() -> None:
            server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await server.wait_closed()

        return server.sockets[0].getsockname()[1], close

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self.stats.connections += 1
        try:
            while await self._one_exchange(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away mid-request: nothing to answer
        except asyncio.CancelledError:
            # Shutdown cancels open connections. Ending normally matters: asyncio's stream
            # callback logs a traceback for every handler task that ends cancelled.
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one_exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Serve one request; False when the connection should close."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # clean close between requests
        except asyncio.LimitOverrunError:
            # Said, not a silent reset (which a client retries as a lost connection).
            message = f"request headers over {HEAD_LIMIT:,} bytes"
            await _write(writer, *_error(431, message), close=True)
            return False
        request_line, *header_lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
        parts = request_line.split(" ")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = headers.get("content-length") or "0"
        if len(parts) != 3 or not length.isdigit() or "transfer-encoding" in headers:
            # Only Content-Length bodies are read (aiohttp, httpx and the SDKs send nothing else).
            await _write(writer, *_error(400, "malformed request line or body framing"), close=True)
            return False
        method, target, version = parts
        if int(length) > self.max_body:
            # Refused from the header alone: buffering whatever size a client declares would let
            # one request take the machine's memory.
            message = f"request body of {int(length):,} bytes is over {self.max_body:,} bytes"
            await _write(writer, *_error(413, message), close=True)
            return False
        body = await reader.readexactly(int(length))
        keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        path = target.split("?", 1)[0].rstrip("/")
        if method == "POST" and path == "/v1/chat/completions":
            status, payload, extra = await self._chat(body, headers)
        elif method == "GET" and path == "/v1/models":
            status, payload, extra = 200, {"object": "list", "data": [_model("fake-model")]}, {}
        else:
            status, payload, extra = _error(404, f"no route for {method} {path}")
        await _write(writer, status, payload, extra, close=not keep_alive)
        return keep_alive

    async def _chat(
        self, raw: bytes, headers: dict[str, str]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        has_authorization = "authorization" in headers
        stats = self.stats
        stats.requests += 1
        stats.with_authorization += has_authorization
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as exc:
            return _error(400, f"invalid JSON body: {exc}")
        status, payload, extra = await self._answer(body, headers)
        self.requests.append(SeenRequest(body, has_authorization, status))
        return status, payload, extra

    async def _answer(
        self, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        stats = self.stats
        if self.fail_status is not None and (
            self.fail_count is None or self._failures_sent < self.fail_count
        ):
            self._failures_sent += 1
            stats.failed += 1
            wait = self.retry_after
            return _error(self.fail_status, "simulated provider failure", wait)
        if self.max_concurrent is not None and stats.in_flight >= self.max_concurrent:
            stats.rate_limited += 1
            wait = 1.0 if self.retry_after is None else self.retry_after
            return _error(429, "simulated rate limit: too many requests in flight", wait)
        if self.context_window is not None:
            refusal = self._over_window(body)
            if refusal is not None:
                stats.refused_context += 1
                return refusal
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        # The reply leaves ``latency`` after the request arrived: the responder's work and the
        # building of the completion are done inside that time, not added to it, so a
        # benchmark's "ideal" is really ideal.
        loop = asyncio.get_running_loop()
        due = loop.time() + self.latency
        try:
            if isinstance(self.responder, HeaderResponder):
                try:
                    reply: Any = self.responder.respond(body, headers)
                except ValueError as exc:
                    stats.failed += 1
                    return _error(400, str(exc))
            else:
                reply = self.responder(body)
            if inspect.isawaitable(reply):
                reply = await reply
            fake = reply if isinstance(reply, FakeReply) else FakeReply(content=reply)
            if self.context_window is not None:
                fake = self._cut(body, fake)
            completion = self._completion(body, fake)
            if self.latency > 0:
                await asyncio.sleep(max(0.0, due - loop.time()))
        except Exception as exc:  # a broken responder is the test's bug: say so in the 500
            stats.failed += 1
            return _error(500, f"responder raised {type(exc).__name__}: {exc}")
        finally:
            stats.in_flight -= 1
        stats.completed += 1
        stats.prompt_tokens += completion["usage"]["prompt_tokens"]
        stats.completion_tokens += completion["usage"]["completion_tokens"]
        # A provider caches a prefix once a request using it has been served, so requests that
        # arrived together all pay for it in full.
        if (system := _system_text(body)) is not None:
            self._seen_systems.add(system)
        return 200, completion, {}

    def _completion(self, body: dict[str, Any], reply: FakeReply) -> dict[str, Any]:
        prompt, cached = self._prompt_tokens(body.get("messages") or [])
        completion = self._count(reply.content or reply.refusal or "")
        return chat_completion(body, reply, next(self._ids), prompt, cached, completion)

    def _prompt_tokens(self, messages: list[Any]) -> tuple[int, int]:
        texts = [text_of(m.get("content")) if isinstance(m, dict) else "" for m in messages]
        total = sum(self._count(t) for t in texts)
        system = _system_text({"messages": messages})
        cached = self._count(system) if system in self._seen_systems else 0
        return total, cached

    def _count(self, text: str | None) -> int:
        if not text:
            return 0
        if self.chars_per_token == 4.0:
            return estimate_tokens(text)
        return math.ceil(len(text) / self.chars_per_token)

    def _over_window(
        self, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        """OpenAI's refusal when prompt + output cap is over the window (the schema counts too)."""
        assert self.context_window is not None
        prompt, _ = self._prompt_tokens(body.get("messages") or [])
        fmt = body.get("response_format") or {}
        prompt += self._count(json.dumps(fmt.get("json_schema") or body.get("tools") or ""))
        cap = _token_cap(body)
        if prompt + cap <= self.context_window:
            return None
        message = (
            f"This model's maximum context length is {self.context_window} tokens. However, you "
            f"requested {prompt + cap} tokens ({prompt} in the messages, {cap} in the "
            "completion). Please reduce the length of the messages or completion."
        )
        error = {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
        return 400, {"error": error}, {}

    def _cut(self, body: dict[str, Any], reply: FakeReply) -> FakeReply:
        """A reply longer than the request's output cap is cut there, as a model would stop."""
        cap = _token_cap(body)
        text = reply.content or ""
        if not cap or self._count(text) <= cap:
            return reply
        self.stats.cut += 1
        keep = int(cap * self.chars_per_token)
        return FakeReply(content=text[:keep], finish_reason="length")


def chat_completion(
    body: dict[str, Any], reply: FakeReply, number: int, prompt: int, cached: int, completion: int
) -> dict[str, Any]:
    """The chat completion (the ``number``-th) answering ``body`` with ``reply``, token counts
    as given: the fake server's direct answers and the fake batch server's lines alike."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
    finish = reply.finish_reason
    if reply.refusal is not None:
        message.update(content=None, refusal=reply.refusal)
    elif (tool := _forced_tool(body)) is not None:
        function = {"name": tool, "arguments": reply.content or ""}
        call = {"id": f"call_{number}", "type": "function", "function": function}
        message.update(content=None, tool_calls=[call])
        finish = "tool_calls" if finish == "stop" else finish
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "fake-model")),
        "system_fingerprint": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def _token_cap(body: dict[str, Any]) -> int:
    cap = body.get("max_completion_tokens", body.get("max_tokens"))
    return cap if isinstance(cap, int) and cap > 0 else 0


def _system_text(body: dict[str, Any]) -> str | None:
    """The text of the first message when it is a system (or developer) message."""
    messages = body.get("messages") or []
    first = messages[0] if messages else None
    if isinstance(first, dict) and first.get("role") in ("system", "developer"):
        return text_of(first.get("content"))
    return None


def _forced_tool(body: dict[str, Any]) -> str | None:
    """The function the request forces (or its only tool), else None."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        return str(name) if name else None
    tools = body.get("tools") or []
    if choice in (None, "required") and len(tools) == 1 and isinstance(tools[0], dict):
        name = (tools[0].get("function") or {}).get("name")
        return str(name) if name else None
    return None


def text_of(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content)


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "fake"}


def _error(
    status: int, message: str, retry_after: float | None = None
) -> tuple[int, dict[str, Any], dict[str, str]]:
    kind = "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "error"
    headers: dict[str, str] = {}
    if retry_after is not None:
        # Retry-After proper is whole seconds; the -ms header keeps the exact value.
        headers["Retry-After"] = str(math.ceil(retry_after))
        headers["retry-after-ms"] = str(round(retry_after * 1000))
    return status, {"error": {"message": message, "type": kind, "code": None}}, headers


async def _write(
    writer: asyncio.StreamWriter,
    status: int,
    payload: dict[str, Any],
    extra_headers: dict[str, str],
    *,
    close: bool,
) -> None:
    data = json.dumps(payload).encode("utf-8")
    lines = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
        "Content-Type: application/json",
        f"Content-Length: {len(data)}",
        f"Connection: {'close' if close else 'keep-alive'}",
        *(f"{name}: {value}" for name, value in extra_headers.items()),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)
    await writer.drain()
