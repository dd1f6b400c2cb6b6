"""Files in and out: reading a whole input file as text (or why not), and writing a file all at
once, so a reader (or a crash) sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .errors import ConfigError, InputFileError, OutputError

_HEAD = 8192  # what is read of an existing output to tell whose it is


def read_text(path: str | Path, what: str, *, newline: str | None = None) -> str:
    """The file's text; an unreadable or undecodable file raises ``InputFileError`` naming it.

    ``what`` names the file's role in the message ("cannot read task file: ..."). ``newline``
    is ``open``'s: ``""`` keeps line ends as written (a CSV reader needs a quoted ``\r``).
    """
    try:
        # utf-8-sig: editors on Windows like to start files with a byte-order mark.
        with open(path, encoding="utf-8-sig", newline=newline) as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputFileError(path, f"cannot read {what}: {reason}") from exc


@contextmanager
def atomic_file(
    path: str | Path,
    *,
    private: bool = False,
    replace: bool = True,
    parents: bool = True,
    what: str = "output",
) -> Iterator[IO[bytes]]:
    """A binary handle whose content replaces ``path`` when the block ends without an error.

    The data goes to a temporary file made by ``mkstemp`` (O_EXCL, unpredictable name) in the
    target's own folder, so the final rename is atomic and a symlink planted under a guessable
    name is never followed; it is fsynced, then renamed over ``path``; on an error the temporary
    file is removed and ``path`` is untouched. A symlinked ``path`` stays a link: the file it
    points to is replaced. An existing target that is not a regular file (a folder, device,
    FIFO) is refused with ``OutputError`` naming ``what``. The new file keeps the old one's
    permissions, or gets the usual umask-based ones; ``private`` makes it readable by its owner
    only (0600). With ``replace`` False an existing ``path`` is never replaced, even one created
    meanwhile: the file is linked into place, and ``FileExistsError`` says someone was first.
    ``parents`` creates missing folders; without it a missing folder is an ``OSError``.
    """
    check_output_target(what, path)
    # A link to be replaced is written through; a no-replace write puts the file at ``path``
    # itself, so even a dangling link there counts as taken.
    target = Path(os.path.realpath(path)) if replace else Path(path)
    if parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600 if private else _permissions_for(target))
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
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
    what: str = "output",
) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` all at once (see ``atomic_file``)."""
    with atomic_file(path, private=private, replace=replace, parents=parents, what=what) as handle:
        handle.write(text.encode("utf-8"))


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


def _permissions_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read fresh (a test or a user may change it between writes)."""
    # Linux shows it without changing it; elsewhere reading it means setting and restoring it.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_replaceable(
    what: str, path: str | Path, ours: Callable[[bytes], bool], *, force: bool = False
) -> None:
    """An existing output file is replaced only when it is this writer's own kind of output.

    ``ours`` is shown the file's first bytes and says whether this writer made such a file (a
    research-judge report, a JUnit file research-judge wrote, a sessions file). Anything else
    (a labels CSV someone filled in, a hand-written page) is refused before any work is done,
    unless ``force``. An empty file holds nothing to lose; a missing one nothing at all;
    what is not a regular file is ``check_output_target``'s to refuse. One rule for every
    writer, as ``validate --suggest-out`` (which never replaces a file) already kept.
    """
    if force or str(path) == "-":
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return  # missing, or unreadable: the write itself says what is wrong
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
            return
        head = os.read(fd, _HEAD)
    finally:
        os.close(fd)
    if not ours(head):
        raise ConfigError(
            f"{what} {path}: already exists and is not an earlier output of this command; not "
            "replacing it (choose another path, or pass --force to replace it)"
        )
