"""The results file of a run: resume from it, append to it safely, leave it in input order.

Lines are appended in input order (through the engine's reorder buffer) and handed to the OS as
they are drained, so a killed run leaves a valid prefix plus at most one torn last line. On the
next run the torn line is cut off, every complete line is kept, and only the missing sessions are
sent.
If a run regraded sessions that already had a line (``--retry-errors``, a changed judge), the
file is rewritten once at the end, atomically, in input order with one line per session.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from .._files import atomic_file
from .._validation import describe_validation_error
from ..errors import ErrorKind, InputFileError
from ..safety import check_output_target
from .model import Result

# Errors that say nothing about the session itself: worth another try on any resume (an
# offloaded text that could not be read may be there, or readable, next time).
TRANSIENT_ERROR_KINDS = frozenset({ErrorKind.API, ErrorKind.INTERNAL, ErrorKind.CONTENT_REF})


@dataclass(slots=True)
class _Line:
    session_id: str
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class _Seen:
    """Just what resume needs of an earlier result (not the result: 100k of those is a lot)."""

    fingerprint: str
    errored: bool
    error_kind: ErrorKind | None


@dataclass
class ExistingResults:
    """What a previous run left: the latest result per session."""

    seen: dict[str, _Seen] = field(default_factory=dict)
    repaired: bool = False  # a torn last line was cut off, or a missing final newline added

    def reusable(self, session_id: str, fingerprint: str, retry_errors: bool) -> bool:
        """True when the earlier result can stand for this run; False means grade again."""
        old = self.seen.get(session_id)
        if old is None or old.fingerprint != fingerprint:
            return False
        return not (old.errored and (retry_errors or old.error_kind in TRANSIENT_ERROR_KINDS))


class ResultsFile:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lines: list[_Line] = []
        self._handle: IO[bytes] | None = None
        self._end = 0  # where the next appended line starts (tracked: tell() is a syscall)
        self._pending = False
        self.broken = False  # a write failed: nothing more is written, nothing rewritten

    def load(self) -> ExistingResults:
        """Read what is there (streamed), cutting off a torn last line.

        A line that does not parse is only forgivable at the very end, where a killed run
        leaves it; anywhere else it is an error and the file is left alone.
        """
        existing = ExistingResults()
        # Before any read: /dev/full would be read as one endless line, a FIFO would block.
        check_output_target("results file", self.path)
        if not self.path.exists():
            return existing
        offset, torn_at, unterminated = 0, -1, False
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                start, offset = offset, offset + len(raw)
                if torn_at >= 0:  # the bad line was not the last one after all
                    raise InputFileError(
                        self.path, "not a valid result line; refusing to resume over it", number - 1
                    )
                if not raw.strip():
                    continue
                try:
                    result = Result.model_validate_json(raw)
                except ValidationError as exc:
                    if raw.endswith(b"\n"):
                        # Complete, yet unreadable: damage to report, never to cut away.
                        raise InputFileError(
                            self.path,
                            f"not a valid result line ({describe_validation_error(exc, limit=1)}); "
                            "refusing to resume over it",
                            number,
                        ) from None
                    torn_at = start
                    continue
                existing.seen[result.session_id] = _Seen(
                    result.judge.fingerprint if result.judge else "",
                    result.error is not None,
                    result.error_kind,
                )
                self._lines.append(_Line(result.session_id, start, len(raw)))
                unterminated = not raw.endswith(b"\n")  # only the file's last line can be
        if torn_at >= 0:
            existing.repaired = True
            with self.path.open("r+b") as handle:
                handle.truncate(torn_at)
        elif unterminated:
            # A complete result whose newline was never written: finish the line.
            with self.path.open("ab") as handle:
                handle.write(b"\n")
            self._lines[-1].length += 1
            existing.repaired = True
        return existing

    def append(self, result: Result) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("ab")
            self._end = self._handle.tell()
        data = result.to_json_line().encode("utf-8")
        try:
            self._handle.write(data)
        except OSError:
            self.broken = True
            raise
        self._lines.append(_Line(result.session_id, self._end, len(data)))
        self._end += len(data)
        self._pending = True

    def flush(self) -> None:
        """Hand written lines to the OS: a killed process then loses nothing already written.

        (fsync, which only matters if the machine itself goes down, is left to ``close``.)
        """
        if self._handle is not None and self._pending:
            try:
                self._handle.flush()
            except OSError:
                self.broken = True
                raise
            self._pending = False

    def close(self) -> None:
        if self._handle is None:
            return
        if self.broken:
            # Whatever is still buffered cannot be written; what reached the file stays.
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
            return
        try:
            self.flush()
            os.fsync(self._handle.fileno())
        except OSError:
            self.broken = True
            self.close()
            raise
        self._handle.close()
        self._handle = None

    def finalize(self, input_order: list[str]) -> bool:
        """Leave one line per session, sessions of this input first and in its order.

        Lines for sessions not in this input (an earlier, larger run) are kept after them.
        Returns True when the file had to be rewritten.
        """
        self.close()
        if self.broken:
            return False  # never rewrite a file we could not write to
        # The usual case (a fresh or cleanly resumed run): already one line per session, in
        # order. Checking that needs no maps, which matter at 100k sessions.
        if len(self._lines) == len(input_order) and all(
            line.session_id == sid for line, sid in zip(self._lines, input_order, strict=True)
        ):
            return False
        latest: dict[str, _Line] = {line.session_id: line for line in self._lines}
        rank = {sid: i for i, sid in enumerate(input_order)}
        wanted = sorted(latest.values(), key=lambda ln: rank.get(ln.session_id, len(rank)))
        if [ln.offset for ln in wanted] == [ln.offset for ln in self._lines]:
            return False
        # Through a temporary file: a symlinked results file stays a link, and keeps its mode.
        with self.path.open("rb") as src, atomic_file(self.path, what="results file") as dst:
            for line in wanted:
                src.seek(line.offset)
                dst.write(src.read(line.length))
        position = 0
        self._lines = []
        for line in wanted:
            self._lines.append(_Line(line.session_id, position, line.length))
            position += line.length
        return True
