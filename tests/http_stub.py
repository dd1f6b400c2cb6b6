"""A scriptable HTTP server on 127.0.0.1 for the network clients' tests.

    async with StubServer(lambda seen: json_answer({"ok": True})) as server:
        ... OpenAIClient(..., base_url=server.base_url) ...
        server.seen[0].json()

Every request is kept (method, path, headers, body) and answered by a function of it, so a test
states exactly what the provider says, over real HTTP through the client's real transport.
"""

from __future__ import annotations

import inspect
import json
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web
from aiohttp.test_utils import RawTestServer
from multidict import CIMultiDictProxy


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    target: str  # the request target as sent: an absolute URL when it came through a proxy
    headers: CIMultiDictProxy[str]
    body: bytes
    request: web.BaseRequest = field(repr=False, compare=False)  # to misbehave with

    def json(self) -> Any:
        return json.loads(self.body)


Answer = Callable[[Seen], web.StreamResponse | Awaitable[web.StreamResponse]]


def json_answer(body: Any, status: int = 200, **headers: str) -> Answer:
    """Always answer ``body`` as JSON with this status and these headers."""
    return lambda seen: web.json_response(body, status=status, headers=headers)


def text_answer(text: str, status: int = 200) -> Answer:
    return lambda seen: web.Response(text=text, status=status)


class StubServer:
    def __init__(self, answer: Answer, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.seen: list[Seen] = []
        self._ssl = ssl_context
        scheme = "https" if ssl_context is not None else "http"
        self._server = RawTestServer(self._handle, host="127.0.0.1", scheme=scheme)

    @property
    def base_url(self) -> str:
        return str(self._server.make_url("/v1"))

    @property
    def origin(self) -> str:
        return str(self._server.make_url(""))

    def body(self, index: int = -1) -> Any:
        return self.seen[index].json()

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        body = await request.read()
        seen = Seen(request.method, request.path, request.raw_path, request.headers, body, request)
        self.seen.append(seen)
        reply = self.answer(seen)
        return await reply if inspect.isawaitable(reply) else reply

    async def __aenter__(self) -> StubServer:
        await self._server.start_server(ssl=self._ssl)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._server.close()


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (the port was just bound and released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
