"""Offloaded tool results: read a reference's ``content_ref`` from a folder or an S3 bucket.

Agents that keep large tool results out of their context write them to object storage and leave
a stub; ``convert --stub-pattern`` turns the stub into ``content_ref`` and ``grade --store ROOT``
reads the text back when the session is graded. ``ROOT`` is a folder or ``s3://bucket/prefix``
for any S3-compatible store (AWS, Cloudflare R2, MinIO), read through fsspec/s3fs: the library
the Python data stack already uses for object storage, which takes the endpoint and credentials
from the standard AWS environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, profiles, ...).

Texts are read into memory for the session being graded; no copy is kept but the judge's prompts
themselves (in the response cache under the user's cache dir, and in a --record folder). The
response cache keys on the rendered prompt, so it keys on the resolved text.

The store is as hostile as the logs (a store folder inside a checked-out repository is where a
planted link arrives), and whatever is read goes to the judge, the cache and the recordings. So a
folder read refuses a real path outside the root (``env.txt -> /proc/self/environ``), anything
that is not a regular file (a FIFO would block the read for ever) and any object over the size
cap; it reads in bounded chunks, so a file that grows or lies about its size (procfs says 0)
still stops at the cap. Reads run in daemon threads: a read stuck in the kernel or the network
never holds up the end of a run (SIGTERM, Ctrl-C).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, TypeVar

from ..errors import ConfigError, ContentRefError
from ..safety.settings import DEFAULT_MAX_REF_BYTES
from .model import Reference, Session

_CHUNK = 1 << 20

T = TypeVar("T")


class StoreRefusal(Exception):
    """An object the store will not read (outside the root, not a file, too big): the why."""


class ContentStore(Protocol):
    root: str

    async def read(self, key: str) -> bytes: ...


def open_store(root: str, max_bytes: int = DEFAULT_MAX_REF_BYTES) -> ContentStore:
    """A folder path, or ``s3://bucket[/prefix]``; objects over ``max_bytes`` are refused."""
    if max_bytes <= 0:
        raise ConfigError(f"--max-ref-bytes must be a positive number of bytes, not {max_bytes}")
    if root.startswith("s3://"):
        return S3Store(root, max_bytes)
    if "://" in root:
        raise ConfigError(f"--store {root!r}: use a folder or s3://bucket/prefix")
    return FolderStore(root, max_bytes)


async def in_daemon_thread(work: Callable[[], T]) -> T:
    """``await work()`` run in a daemon thread of its own.

    Unlike ``asyncio.to_thread``, nothing waits for the thread: the event loop's executor is
    joined when ``asyncio.run`` ends, and interpreter exit joins every pool thread, so one read
    blocked for ever (a FIFO, a hung network mount) would keep a cancelled run alive. An
    abandoned thread's answer is dropped.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(value: T | None, error: BaseException | None) -> None:
        if future.done():  # the awaiting task was cancelled
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)  # type: ignore[arg-type]

    def target() -> None:
        try:
            value = work()
        except BaseException as exc:  # handed to the awaiting task, raised there
            _call_soon(loop, settle, None, exc)
        else:
            _call_soon(loop, settle, value, None)

    threading.Thread(target=target, name="research-judge-store", daemon=True).start()
    return await future


def _call_soon(loop: asyncio.AbstractEventLoop, *args: Any) -> None:
    # A closed loop: the run ended without this answer.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(*args)


def store_key(content_ref: str, root: str) -> str:
    """The key of ``content_ref`` below ``root``: a relative key, or a URI under the root.

    Session text is data: a key may not climb out of the root (``..``) or name another place.
    """
    key = content_ref
    if "://" in key:
        prefix = root.rstrip("/") + "/"
        if not key.startswith(prefix):
            raise ValueError(f"it is a URI outside the store {root}")
        key = key[len(prefix) :]
    parts = PurePosixPath(key).parts
    if not parts or key.startswith("/") or "\\" in key or ".." in parts:
        raise ValueError("a key must be a relative path inside the store, without '..'")
    return key


class FolderStore:
    def __init__(self, root: str | Path, max_bytes: int = DEFAULT_MAX_REF_BYTES) -> None:
        self.path = Path(root)
        if not self.path.is_dir():
            raise ConfigError(f"--store {root}: no such folder")
        self.root = str(self.path)
        self.max_bytes = max_bytes
        self._real = os.path.realpath(self.path)

    async def read(self, key: str) -> bytes:
        return await in_daemon_thread(lambda: self._read(key))

    def _read(self, key: str) -> bytes:
        real = os.path.realpath(self.path / key)
        if os.path.commonpath([self._real, real]) != self._real:
            raise StoreRefusal(f"its real path {real} is outside the store")
        # O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the last component
        # is the file checked above, not a link swapped in since.
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(real, flags)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise StoreRefusal(f"not a regular file ({_kind(info.st_mode)})")
            if info.st_size > self.max_bytes:
                raise StoreRefusal(_too_big(info.st_size, self.max_bytes))
            return _read_capped(fd, self.max_bytes)
        finally:
            os.close(fd)


def _read_capped(fd: int, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while chunk := os.read(fd, _CHUNK):
        size += len(chunk)
        if size > limit:
            raise StoreRefusal(_too_big(None, limit))
        parts.append(chunk)
    return b"".join(parts)


def _too_big(size: int | None, limit: int) -> str:
    known = f"{size:,} bytes" if size is not None else "more than that"
    return f"too large ({known}; the cap is {limit:,} bytes, raise it with --max-ref-bytes)"


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):  # fmt: skip
        if test(mode):
            return name
    return "not a file"


class S3Store:
    def __init__(self, root: str, max_bytes: int = DEFAULT_MAX_REF_BYTES) -> None:
        try:
            import s3fs
        except ImportError:
            raise ConfigError(
                "--store s3://... needs the optional S3 support: pip install 'research-judge[s3]'"
            ) from None
        self.root = root.rstrip("/")
        self._base = self.root.removeprefix("s3://")
        if not self._base:
            raise ConfigError(f"--store {root!r}: name a bucket, e.g. s3://bucket/prefix")
        # A fresh client, not fsspec's shared instance, so settings read at start-up apply.
        self._fs: Any = s3fs.S3FileSystem(skip_instance_cache=True)
        self.max_bytes = max_bytes

    async def read(self, key: str) -> bytes:
        # One byte past the cap is asked for: a longer answer means the object is too big,
        # without fetching the rest.
        path = f"{self._base}/{key}"
        data: bytes = await in_daemon_thread(
            lambda: self._fs.cat_file(path, start=0, end=self.max_bytes + 1)
        )
        if len(data) > self.max_bytes:
            raise StoreRefusal(_too_big(None, self.max_bytes))
        return data


async def resolve_session(session: Session, store: ContentStore | None) -> Session:
    """The session with every ``content_ref`` replaced by the text it points at.

    The references are read concurrently; the first that cannot be read raises
    ``ContentRefError`` naming it (other sessions are unaffected).
    """
    offloaded = session.offloaded
    if not offloaded:
        return session
    if store is None:
        ref = offloaded[0]
        raise ContentRefError(
            ref.id,
            str(ref.content_ref),
            "no store given (grade --store FOLDER or s3://bucket/prefix)",
        )
    texts = await asyncio.gather(*(_read(ref, store) for ref in offloaded))
    by_id = {ref.id: text for ref, text in zip(offloaded, texts, strict=True)}
    trajectory = [
        ref.model_copy(update={"content": by_id[ref.id], "content_ref": None})
        if ref.id in by_id
        else ref
        for ref in session.trajectory
    ]
    return session.model_copy(update={"trajectory": trajectory})


async def _read(ref: Reference, store: ContentStore) -> str:
    assert ref.content_ref is not None

    def failed(why: str) -> ContentRefError:
        return ContentRefError(ref.id, str(ref.content_ref), f"{why} (store {store.root})")

    try:
        key = store_key(ref.content_ref, store.root)
    except ValueError as exc:
        raise failed(str(exc)) from None
    try:
        data = await store.read(key)
    except StoreRefusal as exc:
        raise failed(str(exc)) from None
    except FileNotFoundError:
        raise failed("no such object") from None
    except PermissionError as exc:
        raise failed(f"access denied, check the store's credentials: {_why(exc)}") from None
    except Exception as exc:  # the store's own errors (network, credentials) name themselves
        raise failed(_why(exc)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise failed(f"not UTF-8 text (byte {exc.start + 1})") from None


def _why(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
