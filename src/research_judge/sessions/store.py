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
"""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from ..errors import ConfigError, ContentRefError
from .model import Reference, Session


class ContentStore(Protocol):
    root: str

    async def read(self, key: str) -> bytes: ...


def open_store(root: str) -> ContentStore:
    """A folder path, or ``s3://bucket[/prefix]``."""
    if root.startswith("s3://"):
        return S3Store(root)
    if "://" in root:
        raise ConfigError(f"--store {root!r}: use a folder or s3://bucket/prefix")
    return FolderStore(root)


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
    def __init__(self, root: str | Path) -> None:
        self.path = Path(root)
        if not self.path.is_dir():
            raise ConfigError(f"--store {root}: no such folder")
        self.root = str(self.path)

    async def read(self, key: str) -> bytes:
        return await asyncio.to_thread((self.path / key).read_bytes)


class S3Store:
    def __init__(self, root: str) -> None:
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

    async def read(self, key: str) -> bytes:
        data: bytes = await asyncio.to_thread(self._fs.cat_file, f"{self._base}/{key}")
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
