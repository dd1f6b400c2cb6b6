"""The on-disk response cache: recordings that are consulted before the network.

Keyed exactly like recordings (the hash of the rendered request, provider and model), so a
re-run after a crash, or after a policy change, costs nothing for the calls already answered.

Only replies the judge accepted are stored (told through ``reply_checked``): a reply that failed
validation is never served again, and a cached one that fails is dropped. An entry that cannot be
read is a miss, replaced by the next accepted reply.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError, InputFileError, ReplayMissError
from .base import JudgeClient, JudgeRequest, JudgeResponse
from .recording import RecordingClient, ReplayClient, exchange_for
from .wrapper import WrapperClient


class CachingClient(WrapperClient):
    def __init__(self, inner: JudgeClient, directory: str | Path) -> None:
        super().__init__(inner)  # its variant: another server or mode never shares entries
        path = Path(directory)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create cache directory {path}: {exc}") from exc
        self.path = path
        self._lookup = ReplayClient(
            path, provider=self.provider, model=self.model, variant=self.variant
        )
        self._store = RecordingClient(inner, path)
        self.hits = 0

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        try:
            response = await self._lookup.complete(request)
        except (ReplayMissError, InputFileError):  # absent, or unreadable: ask the provider
            return await self.inner.complete(request)
        self.hits += 1
        return response

    def reply_checked(self, request: JudgeRequest, response: JudgeResponse, valid: bool) -> None:
        if valid and not response.cached:
            exchange = exchange_for(request, response, self.provider, self.model, self.variant)
            self._store.write(exchange)
        elif not valid and response.cached:
            key = request.key(self.provider, self.model, self.variant)
            (self.path / f"{key}.json").unlink(missing_ok=True)
        super().reply_checked(request, response, valid)
