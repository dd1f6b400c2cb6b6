"""Writing one output (a JUnit file, a report): ``-`` is stdout, anything else a file replaced
in one step, so a CI step never reads half of it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from ..errors import OutputError

STDOUT = "-"


def write_output(target: str | Path, text: str, what: str, stdout: TextIO | None = None) -> None:
    """Write ``text`` to ``target``; ``-`` is ``stdout`` (default: ``sys.stdout``)."""
    if str(target) == STDOUT:
        stream = sys.stdout if stdout is None else stdout
        stream.write(text)
        stream.flush()
        return
    path = Path(target)
    if path.exists() and not path.is_file():
        raise OutputError(f"{what} {path}: exists and is not a regular file; not replacing it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # An unpredictable name created exclusively in the target's folder: never follows a
        # planted link, and the rename is atomic on one filesystem.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"cannot write {what} {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {what} {path}: {exc.strerror or exc}") from exc
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
