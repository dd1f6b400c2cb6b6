"""Files in and out: reading a whole input file as text (or why not), and writing a file all at
once, so a reader (or a crash) sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .errors import InputFileError


def read_text(path: str | Path, what: str) -> str:
    """The file's text; an unreadable or undecodable file raises ``InputFileError`` naming it.

    ``what`` names the file's role in the message ("cannot read task file: ...").
    """
    try:
        # utf-8-sig: editors on Windows like to start files with a byte-order mark.
        return Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputFileError(path, f"cannot read {what}: {reason}") from exc


@contextmanager
def atomic_file(
    path: str | Path, *, private: bool = False, replace: bool = True, parents: bool = True
) -> Iterator[IO[bytes]]:
    """A binary handle whose content replaces ``path`` when the block ends without an error.

    The data goes to a temporary file beside ``path`` (same file system, so the final rename is
    atomic), is fsynced, then renamed over ``path``; on an error the temporary file is removed
    and ``path`` is untouched. The new file keeps the old one's permissions, or gets the usual
    umask-based ones; ``private`` makes it readable by its owner only (0600). With ``replace``
    False an existing ``path`` is never replaced, even one created meanwhile: the file is linked
    into place, and ``FileExistsError`` says someone was first. ``parents`` creates missing
    folders; without it a missing folder is an ``OSError``.
    """
    target = Path(path)
    if parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600 if private else _permissions_for(target))
        if replace:
            os.replace(tmp, target)
        else:
            os.link(tmp, target)  # refuses an existing target, unlike rename
            Path(tmp).unlink()
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomically(
    path: str | Path,
    text: str,
    *,
    private: bool = False,
    replace: bool = True,
    parents: bool = True,
) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` all at once (see ``atomic_file``)."""
    with atomic_file(path, private=private, replace=replace, parents=parents) as handle:
        handle.write(text.encode("utf-8"))


def _permissions_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    # Reading the umask means setting it; done once, at the first write that needs it.
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0o022)
        os.umask(_UMASK)
    return _UMASK


_UMASK: int | None = None
