"""Output paths checked before anything is read or written.

``grade X --out X`` once read the input's only line as a torn results line and cut it to nothing;
``report R --html R`` replaced the results with HTML; ``--md /dev/stdout`` run as root replaced a
device node with a regular file. Every verb therefore names its inputs and outputs up front and
has them checked here: an output may not resolve to an input or to another output, and an
existing output must be a regular file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

# One copy: the atomic writer refuses non-regular targets itself, and the verbs check up front.
from .._files import check_output_target
from ..errors import ConfigError

__all__ = ["check_distinct", "check_output_target"]

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
