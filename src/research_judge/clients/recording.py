"""Record judge exchanges to disk and answer from them later, without the network.

A recording is readable JSON keyed by ``JudgeRequest.key(provider, model)``, the hash of exactly
what was asked, so a replay answers the same question with the same reply whatever the session id.
Two layouts, both readable by ``ReplayClient``:

- a directory with one ``<key>.json`` per exchange (written atomically: temp file + rename);
- a single ``.jsonl`` file, one exchange per line (appended; the last line for a key wins).

Only successful replies are recorded; an error is not, so replaying it is a miss. Requests hold no
credentials and nothing else is stored, so recordings are safe to commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from research_judge._files import write_atomically
from research_judge._validation import describe_validation_error
from research_judge.clients.base import (
    JudgeClient,
    JudgeRequest,
    JudgeResponse,
    Usage,
)
from research_judge.clients.wrapper import WrapperClient
from research_judge.errors import ConfigError, InputFileError, OutputError, ReplayMissError
from research_judge.safety import jsonin

JSONL_SUFFIX = ".jsonl"


class RecordedUsage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0


class RecordedResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")
    content: str
    usage: RecordedUsage = RecordedUsage()
    stop_reason: str | None = None


class Exchange(BaseModel):
    """One recorded request and its reply, as stored on disk."""

    model_config = ConfigDict(extra="ignore")
    key: str
    provider: str
    model: str
    request: dict[str, Any]
    response: RecordedResponse
    session_id: str = ""


def exchange_for(
    request: JudgeRequest, response: JudgeResponse, provider: str, model: str, variant: str = ""
) -> Exchange:
    usage = response.usage
    return Exchange(
        key=request.key(provider, model, variant),
        provider=provider,
        model=model,
        request=request.canonical(provider, model, variant),
        response=RecordedResponse(
            content=response.content,
            usage=RecordedUsage(
                input_tokens=usage.input_tokens,
                cached_input_tokens=usage.cached_input_tokens,
                output_tokens=usage.output_tokens,
            ),
            stop_reason=response.stop_reason,
        ),
        session_id=request.session_id,
    )


class RecordingClient(WrapperClient):
    """Forwards to ``inner`` and saves every successful exchange under ``path``."""

    def __init__(self, inner: JudgeClient, path: str | Path) -> None:
        super().__init__(inner)
        self.path = Path(path)
        self._jsonl = self.path.suffix == JSONL_SUFFIX
        target_dir = self.path.parent if self._jsonl else self.path
        try:
            target_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create recording directory {target_dir}: {exc}") from exc

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        response = await self.inner.complete(request)
        # Small synchronous writes: they finish before another task runs, so JSONL lines from
        # concurrent calls never interleave.
        self.write(exchange_for(request, response, self.provider, self.model, self.variant))
        return response

    def write(self, exchange: Exchange) -> None:
        try:
            self._write(exchange)
        except OSError as exc:  # disk full, read-only: the run must stop, not lose replies
            raise OutputError(
                f"cannot write recording to {self.path}: {exc.strerror or exc}"
            ) from exc

    def _write(self, exchange: Exchange) -> None:
        data = exchange.model_dump()
        # Readable UTF-8 as a rule; escaped ASCII when a reply holds a lone surrogate, which
        # UTF-8 cannot carry but a JSON escape can (and replay gives it back unchanged).
        ascii_only = jsonin.find_surrogate(data) is not None
        if self._jsonl:
            line = json.dumps(data, sort_keys=True, ensure_ascii=ascii_only)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
            return
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=ascii_only)
        # Private: an exchange holds session text, which may not be everyone's to read.
        write_atomically(self.path / f"{exchange.key}.json", text + "\n", private=True)


class ReplayClient:
    """Answers only from recordings (a directory or a ``.jsonl`` file); never touches the network.

    A directory is read lazily, one file per requested key; a JSONL file is read at start.
    """

    def __init__(self, source: str | Path, *, provider: str, model: str, variant: str = "") -> None:
        self.provider = provider
        self.model = model
        self.variant = variant  # the endpoint and mode recorded against (``clients.variant``)
        self.source = Path(source)
        self._loaded: dict[str, Exchange] = {}
        if self.source.is_file():
            self._loaded = _read_jsonl(self.source)
        elif not self.source.is_dir():
            raise ConfigError(f"replay source {self.source} does not exist")
        self.hits = 0

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        key = request.key(self.provider, self.model, self.variant)
        exchange = self._loaded.get(key) or self._read_file(key)
        if exchange is None:
            against = f", {self.variant}" if self.variant else ""
            raise ReplayMissError(
                f"no recorded judge exchange for session {request.session_id!r} "
                f"({request.call} call, {self.provider}/{self.model}{against}, key {key}) "
                f"in {self.source} (recordings are keyed on the endpoint and output mode too: "
                "replay with the same --base-url and --mode as the recording run)"
            )
        self.hits += 1
        recorded = exchange.response
        usage = Usage(**recorded.usage.model_dump())
        return JudgeResponse(recorded.content, usage, recorded.stop_reason, cached=True)

    def _read_file(self, key: str) -> Exchange | None:
        if not self.source.is_dir():
            return None
        path = self.source / f"{key}.json"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFileError(path, f"cannot read recording: {exc}") from exc
        exchange = _parse(text, path, None)
        if exchange.key != key:
            raise InputFileError(path, f"recorded key {exchange.key} does not match the file name")
        self._loaded[key] = exchange
        return exchange

    async def aclose(self) -> None:
        return None


def _parse(text: str, path: Path, line: int | None) -> Exchange:
    try:
        # json.loads, not pydantic's parser: only it reads back a lone surrogate's escape.
        return Exchange.model_validate(jsonin.loads(text, allow_surrogates=True))
    except jsonin.UnusableJson as exc:
        raise InputFileError(path, f"not a recorded exchange ({exc})", line) from None
    except ValidationError as exc:
        problem = describe_validation_error(exc, limit=4, root="exchange")
        raise InputFileError(path, f"not a recorded exchange ({problem})", line) from None


def _read_jsonl(path: Path) -> dict[str, Exchange]:
    exchanges: dict[str, Exchange] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                exchange = _parse(line, path, number)
                exchanges[exchange.key] = exchange
    return exchanges
