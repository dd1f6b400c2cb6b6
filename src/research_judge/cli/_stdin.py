"""``-`` as an input file: standard input, spooled to a temporary file first.

A grade run reads its sessions more than once (a progress count, a seeded sample, the run), and
standard input can be read only once; the copy lives in a temporary folder named after it
(``research-judge-stdin-*/stdin.jsonl``, which is the name errors then show) and is removed when
the run ends, whatever happens.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STDIN = "-"


@contextmanager
def spooled_stdin(name: str = "stdin.jsonl") -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="research-judge-stdin-") as folder:
        path = Path(folder) / name
        with path.open("wb") as handle:
            shutil.copyfileobj(sys.stdin.buffer, handle)
        yield path
