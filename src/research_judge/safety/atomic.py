"""Replace a file's whole content so a reader sees the old file or the new one, never half.

The temporary file is made by ``mkstemp`` (O_EXCL, random name) in the target's own folder, so
a symlink planted under a predictable name is never followed. A symlinked target stays a link:
the file it points to is replaced. An existing target keeps its mode; a new one gets the usual
umask-based mode (reports are meant to be shared).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .paths import check_output_target


def _new_file_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_replace(
    path: str | Path, what: str = "output", *, make_parents: bool = True
) -> Iterator[IO[bytes]]:
    """A binary file to write; on a clean exit it replaces ``path``, on an error it vanishes."""
    check_output_target(what, path)
    target = Path(os.path.realpath(path))
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = _new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, text: str, what: str = "output") -> None:
    with atomic_replace(path, what) as handle:
        handle.write(text.encode("utf-8"))
