"""Write converted sessions safely: a temp file beside the output, renamed into place at the end.

A failed or interrupted conversion leaves no half-written output (and any earlier file at that
path untouched); an output path that is one of the inputs is refused before anything is read.
``-`` streams the sessions to stdout instead (``convert ... --out - | ...``).
"""

from __future__ import annotations

import io
import json
import os
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ..._files import atomic_file
from ...errors import ConfigError, OutputError

STDOUT = "-"


def check_output(out: Path, inputs: list[Path]) -> None:
    if str(out) == STDOUT:
        return
    for path in inputs:
        if out.resolve() == path.resolve() or (
            out.exists() and path.exists() and os.path.samefile(out, path)
        ):
            raise ConfigError(f"--out {out} is one of the inputs; it would be overwritten")
    if out.exists() and not out.is_file():
        raise OutputError(f"--out {out}: exists and is not a regular file; not replacing it")


class SessionsWriter:
    """Sessions written as JSON lines to ``out``, which appears, complete, on a clean exit
    (``-``: streamed to stdout)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.count = 0
        self._file: AbstractContextManager[IO[bytes]] | None = None
        self._handle: IO[str] | None = None

    def __enter__(self) -> SessionsWriter:
        if str(self.out) == STDOUT:
            self._handle = sys.stdout
            return self
        self._file = atomic_file(self.out)
        try:
            raw = self._file.__enter__()
        except OSError as exc:
            raise OutputError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
        self._handle = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        return self

    def write(self, session: dict[str, Any]) -> None:
        assert self._handle is not None
        self._handle.write(json.dumps(session, ensure_ascii=False) + "\n")
        self.count += 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._handle is not None
        if self._file is None:  # stdout: nothing to rename, and not ours to close
            self._handle.flush()
            return
        assert isinstance(self._handle, io.TextIOWrapper)
        try:
            self._handle.flush()
            self._handle.detach()  # atomic_file closes (and on success renames) the file itself
        except OSError as error:
            self._file.__exit__(type(error), error, error.__traceback__)  # removes the temp file
            raise OutputError(f"cannot write {self.out}: {error.strerror or error}") from error
        try:
            self._file.__exit__(kind, exc, tb)
        except OSError as error:
            raise OutputError(f"cannot write {self.out}: {error.strerror or error}") from error
