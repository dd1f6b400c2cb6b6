"""Write converted sessions safely: a temp file beside the output, renamed into place at the end.

A failed or interrupted conversion leaves no half-written output (and any earlier file at that
path untouched); an output path that is one of the inputs is refused before anything is read.
The writing itself is ``safety.atomic_replace``'s: an exclusive temp file, a symlinked output kept
a link, its mode kept; a device, FIFO or folder refused.
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ...errors import ConfigError, OutputError
from ...safety import atomic_replace, check_output_target


def check_output(out: Path, inputs: list[Path]) -> None:
    for path in inputs:
        if out.resolve() == path.resolve() or (
            out.exists() and path.exists() and os.path.samefile(out, path)
        ):
            raise ConfigError(f"--out {out} is one of the inputs; it would be overwritten")
    check_output_target("--out", out)  # a folder, device or FIFO is refused


class SessionsWriter:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.count = 0
        self._replace: AbstractContextManager[IO[bytes]] | None = None
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> SessionsWriter:
        self._replace = atomic_replace(self.out, "--out", make_parents=False)
        try:
            self._handle = self._replace.__enter__()
        except OSError as exc:
            raise OutputError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
        return self

    def write(self, session: dict[str, Any]) -> None:
        assert self._handle is not None
        try:
            self._handle.write((json.dumps(session, ensure_ascii=False) + "\n").encode("utf-8"))
        except OSError as exc:  # disk full, quota: the temp file goes, any earlier output stays
            raise OutputError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
        self.count += 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._replace is not None
        try:
            self._replace.__exit__(kind, exc, tb)
        except OSError as error:
            raise OutputError(f"cannot write {self.out}: {error.strerror or error}") from error
