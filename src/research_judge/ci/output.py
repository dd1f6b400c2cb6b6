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
    # Through _files.write_atomically: an exclusive temp file beside the target, renamed over it; a
    # symlinked target stays a link and keeps its mode; a device, FIFO or folder is refused.
    try:
        write_atomically(target, text, what=what)
    except OSError as exc:
        raise OutputError(f"cannot write {what} {target}: {exc.strerror or exc}") from exc
