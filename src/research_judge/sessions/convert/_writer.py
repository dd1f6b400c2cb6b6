"""Write converted sessions safely: a temp file beside the output, renamed into place at the end.

A failed or interrupted conversion leaves no half-written output (and any earlier file at that
path untouched); an output path that is one of the inputs is refused before anything is read.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ..._files import atomic_file
from ...errors import ConfigError


def check_output(out: Path, inputs: list[Path]) -> None:
    for path in inputs:
        if out.resolve() == path.resolve() or (
            out.exists() and path.exists() and os.path.samefile(out, path)
        ):
            raise ConfigError(f"--out {out} is one of the inputs; it would be overwritten")
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory")


class SessionsWriter:
    """Sessions written as JSON lines to ``out``, which appears, complete, on a clean exit."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.count = 0
        self._file: AbstractContextManager[IO[bytes]] | None = None
        self._handle: io.TextIOWrapper | None = None

    def __enter__(self) -> SessionsWriter:
        self._file = atomic_file(self.out)
        try:
            raw = self._file.__enter__()
        except OSError as exc:
            raise ConfigError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
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
        assert self._handle is not None and self._file is not None
        self._handle.flush()
        self._handle.detach()  # atomic_file closes (and on success renames) the file itself
        self._file.__exit__(kind, exc, tb)
