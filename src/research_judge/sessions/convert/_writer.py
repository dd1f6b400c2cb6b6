"""Write converted sessions safely: a temp file beside the output, renamed into place at the end.

A failed or interrupted conversion leaves no half-written output (and any earlier file at that
path untouched); an output path that is one of the inputs is refused before anything is read.
The writing itself is ``_files.atomic_file``'s: an exclusive temp file, a symlinked output kept
a link, its mode kept; a device, FIFO or folder refused. ``-`` streams the sessions to stdout
instead (``convert ... --out - | ...``).
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ..._files import atomic_file, check_replaceable
from ...errors import ConfigError, OutputError
from ...safety import check_output_target

STDOUT = "-"


def check_output(out: Path, inputs: list[Path], *, force: bool = False) -> None:
    if str(out) == STDOUT:
        return
    for path in inputs:
        if out.resolve() == path.resolve() or (
            out.exists() and path.exists() and os.path.samefile(out, path)
        ):
            raise ConfigError(f"--out {out} is one of the inputs; it would be overwritten")
    check_output_target("--out", out)  # a folder, device or FIFO is refused
    check_replaceable("--out", out, _sessions_file, force=force)


def _sessions_file(head: bytes) -> bool:
    """Sessions JSONL, as this writer makes it: a JSON object whose first key is the id."""
    return head.lstrip().startswith(b'{"id":')


class SessionsWriter:
    """Sessions written as JSON lines to ``out``, which appears, complete, on a clean exit
    (``-``: streamed to stdout)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.count = 0
        self._replace: AbstractContextManager[IO[bytes]] | None = None
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> SessionsWriter:
        if str(self.out) == STDOUT:
            return self
        self._replace = atomic_file(self.out, what="--out")
        try:
            self._handle = self._replace.__enter__()
        except OSError as exc:
            raise OutputError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
        return self

    def write(self, session: dict[str, Any]) -> None:
        self.write_line(json.dumps(session, ensure_ascii=False, allow_nan=False) + "\n")

    def write_line(self, line: str) -> None:
        """One session, already serialised (one JSON line ending in a newline)."""
        try:
            if self._handle is None:  # stdout
                sys.stdout.write(line)
            else:
                self._handle.write(line.encode("utf-8"))
        except BrokenPipeError:
            raise  # `convert --out - | head`: the reader left; the CLI ends quietly (exit 141)
        except OSError as exc:  # disk full, quota: the temp file goes, any earlier output stays
            raise OutputError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
        self.count += 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._replace is None:  # stdout: nothing to rename, and not ours to close
            sys.stdout.flush()
            return
        try:
            self._replace.__exit__(kind, exc, tb)
        except OSError as error:
            raise OutputError(f"cannot write {self.out}: {error.strerror or error}") from error
