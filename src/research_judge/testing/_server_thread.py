"""A fake server's life on its own thread: one event loop per server, started and stopped from
synchronous test code (``with FakeOpenAIServer(...) as server:``) without touching the caller's
loop. Each fake says how it listens (``_open``); starting, the ready handshake, a startup failure
and stopping are the same for all of them, written once here.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Self

# How a fake stops listening once asked to (close the server, end its connections).
Closer = Callable[[], Awaitable[None]]


class ServerThread:
    """Runs ``_open`` on a fresh event loop in a daemon thread until ``stop()``."""

    def __init__(self, what: str, thread_name: str) -> None:
        self._what = what  # "the fake OpenAI server": for the messages
        self._thread_name = thread_name
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    async def _open(self) -> tuple[int, Closer]:
        """Start listening on 127.0.0.1; the port and how to stop (raise OSError on failure)."""
        raise NotImplementedError

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError(f"{self._what} did not start within 10 s")
        if self._startup_error is not None:
            raise RuntimeError(f"{self._what} failed: {self._startup_error}")
        return self

    def stop(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        try:
            port, close = await self._open()
        except OSError as exc:
            self._startup_error = exc
            self._ready.set()
            return
        self._port = port
        self._ready.set()
        await self._stop.wait()
        await close()
