"""The on-disk response cache: recordings that are consulted before the network.

Keyed exactly like recordings (the hash of the rendered request, provider and model), so a
re-run after a crash, or after a policy change, costs nothing for the calls already answered.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError, ReplayMissError
from .base import JudgeClient, JudgeRequest, JudgeResponse
from .recording import RecordingClient, ReplayClient


class CachingClient:
    def __init__(self, inner: JudgeClient, directory: str | Path) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        path = Path(directory)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create cache directory {path}: {exc}") from exc
        self._lookup = ReplayClient(path, provider=self.provider, model=self.model)
        self._store = RecordingClient(inner, path)
        self.hits = 0

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        try:
            response = await self._lookup.complete(request)
        except ReplayMissError:
            return await self._store.complete(request)
        self.hits += 1
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()
