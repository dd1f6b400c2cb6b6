"""One run per results file: an exclusive lock held for the whole run.

Two ``grade`` runs on one ``--out`` once both graded everything (twice the spend) and
interleaved their lines. The lock is ``flock`` on a small file beside the output,
``.<name>.lock``, holding the owner's pid so the second run can say who has it. The kernel drops
the lock when the process dies, so a killed run never leaves a stale lock behind.

A name is not a file: two hard links, or one file seen through a bind mount, have two names and
two lock files, and two graders on them once both ran (every session billed twice, duplicate
lines). So an existing results file is also locked itself (``flock`` on its inode, which every
name of it shares). A file that does not exist yet has no other name to be reached by.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

from ..errors import OutputError


class OutputLock:
    def __init__(self, path: str | Path) -> None:
        target = Path(os.path.realpath(path))  # two names for one file share one lock
        self.path = target.with_name(f".{target.name}.lock")
        self.output = Path(path)
        self._fd: int | None = None
        self._file_fd: int | None = None

    def acquire(self) -> None:
        self._lock_name()
        try:
            self._lock_file()
        except BaseException:
            self.release()
            raise

    def _lock_file(self) -> None:
        # O_NONBLOCK: a FIFO planted as the output must not block here (it is refused later).
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(self.output, flags)
        except OSError:
            return  # no file yet (or none we can open): the writer reports what is wrong
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputError(
                f"{self.output} is being written by another research-judge run under another "
                "name (a hard link or a mount of the same file); wait for it to finish or "
                "choose another --out"
            ) from None
        self._file_fd = fd

    def _lock_name(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                fd = os.open(
                    self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
                )
            except OSError as exc:
                raise OutputError(f"cannot lock {self.output}: {exc.strerror}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise OutputError(
                    f"{self.output} is being written by another research-judge run "
                    f"(pid {holder}); wait for it to finish or choose another --out"
                ) from None
            # The previous owner may have removed the lock file between our open and our lock:
            # then we hold a lock on a file nobody else will see. Start again.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._file_fd is not None:
            os.close(self._file_fd)
            self._file_fd = None
        if self._fd is None:
            return
        # Removed while still held, so no newcomer can lock the file we are about to drop.
        self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutputLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
