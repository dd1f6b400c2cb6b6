"""Writing one output (a JUnit file, a report): ``-`` is stdout, anything else a file replaced
in one step, so a CI step never reads half of it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from .._files import write_atomically
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
        # Through an unpredictable temporary name created exclusively beside the target (never
        # follows a planted link), then one atomic rename.
        write_atomically(path, text)
    except OSError as exc:
        raise OutputError(f"cannot write {what} {path}: {exc.strerror or exc}") from exc
