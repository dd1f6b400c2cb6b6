"""Write converted sessions safely: a temp file beside the output, renamed into place at the end.

A failed or interrupted conversion leaves no half-written output (and any earlier file at that
path untouched); an output path that is one of the inputs is refused before anything is read.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Any

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
    def __init__(self, out: Path) -> None:
        self.out = out
        self.count = 0
        self._tmp: str | None = None
        self._handle: IO[str] | None = None

    def __enter__(self) -> SessionsWriter:
        directory = self.out.parent
        try:
            fd, self._tmp = tempfile.mkstemp(
                dir=directory, prefix=f".{self.out.name}.", suffix=".tmp"
            )
        except OSError as exc:
            raise ConfigError(f"cannot write {self.out}: {exc.strerror or exc}") from exc
        self._handle = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
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
        assert self._handle is not None and self._tmp is not None
        try:
            if kind is None:
                self._handle.flush()
                os.fsync(self._handle.fileno())
            self._handle.close()
            if kind is None:
                # mkstemp makes the file private (0600); a sessions file gets the usual mode.
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(self._tmp, 0o666 & ~umask)
                os.replace(self._tmp, self.out)
                self._tmp = None
        finally:
            if self._tmp is not None:
                Path(self._tmp).unlink(missing_ok=True)
