"""Output paths checked before anything is read or written.

``grade X --out X`` once read the input's only line as a torn results line and cut it to nothing;
``report R --html R`` replaced the results with HTML; ``--md /dev/stdout`` run as root replaced a
device node with a regular file. Every verb therefore names its inputs and outputs up front and
has them checked here: an output may not resolve to an input or to another output, and an
existing output must be a regular file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ..errors import ConfigError, OutputError

Named = tuple[str, "str | Path | None"]


def _identity(path: str | Path) -> tuple[str, tuple[int, int] | None]:
    """The real path (symlinks resolved) and, when it exists, its (device, inode)."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return real, None
    return real, (st.st_dev, st.st_ino)


def _same(a: tuple[str, tuple[int, int] | None], b: tuple[str, tuple[int, int] | None]) -> bool:
    # The inode catches hard links; the real path catches a file that does not exist yet.
    return a[0] == b[0] or (a[1] is not None and a[1] == b[1])


def check_distinct(inputs: Iterable[Named], outputs: Iterable[Named]) -> None:
    """Refuse an output that is one of the inputs or another output (links followed).

    Each item is ``(what, path)``, e.g. ``("--out", "results.jsonl")``; ``None`` paths and ``-``
    (standard output) are skipped.
    """
    ins = [(what, p, _identity(p)) for what, p in inputs if p is not None and str(p) != "-"]
    outs = [(what, p, _identity(p)) for what, p in outputs if p is not None and str(p) != "-"]
    for i, (what, path, ident) in enumerate(outs):
        for in_what, in_path, in_ident in ins:
            if _same(ident, in_ident):
                raise ConfigError(
                    f"{what} {path} is the same file as {in_what} {in_path}: refusing to "
                    "overwrite an input; choose another output path"
                )
        for other_what, other_path, other_ident in outs[i + 1 :]:
            if _same(ident, other_ident):
                raise ConfigError(
                    f"{what} {path} and {other_what} {other_path} are the same file: one would "
                    "overwrite the other; give each its own path"
                )


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "something else"


def check_output_target(what: str, path: str | Path) -> None:
    """Refuse an existing output that is not a regular file (after following links).

    Writing to a device or FIFO is never what a results file or report wants: ``/dev/full``
    would be read as one endless line, a FIFO would block, a device node would be replaced.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"cannot write {what} {path}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(
            f"{what} {path}: exists and is not a regular file ({_kind(st.st_mode)}); not "
            "replacing it (research-judge writes only regular files)"
        )
