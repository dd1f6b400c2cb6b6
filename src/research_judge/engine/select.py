"""Which sessions a run grades: all, those whose metadata match, a seeded sample, or a shard.

The sample is chosen by hashing (seed, session id) and keeping the N smallest hashes: it does not
depend on line order, and a file that grows keeps most of the same sample, so a cheap layer run on
every change looks at the same sessions each time.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, InputFileError

if TYPE_CHECKING:  # the grade flags read Selection's defaults at --help time: no pydantic then
    from ..sessions.model import Session


@dataclass(frozen=True)
class Selection:
    where: Mapping[str, str] = field(default_factory=dict)
    sample: int | None = None
    seed: int = 0
    shard: tuple[int, int] | None = None  # (I, N): only the sessions of shard I of N

    def __post_init__(self) -> None:
        if self.sample is not None and self.sample < 1:
            raise ConfigError(f"--sample must be at least 1, got {self.sample}")

    def matches(self, session: Session) -> bool:
        if self.shard is not None:
            # Imported here: `grade --help` reads Selection's defaults; sessions/ is pydantic.
            from ..sessions.shards import shard_of

            if shard_of(session.id, self.shard[1]) != self.shard[0]:
                return False
        return all(str(session.metadata.get(k)) == v for k, v in self.where.items())

    def sample_key(self, session_id: str) -> bytes:
        return hashlib.sha256(f"{self.seed}\0{session_id}".encode()).digest()


def parse_where(items: list[str]) -> dict[str, str]:
    """``["tier=smoke", "domain=energy"]`` -> ``{"tier": "smoke", "domain": "energy"}``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--where takes KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def sampled_ids(path: Path, selection: Selection) -> set[str] | None:
    """The ids a sampled run keeps (one streaming pass over the file), or None for 'all'."""
    if selection.sample is None:
        return None
    from ..sessions.model import Session, iter_sessions

    keyed = (
        (selection.sample_key(item.id), item.id)
        for _, item in iter_sessions(path)
        if isinstance(item, Session) and selection.matches(item)
    )
    # nsmallest keeps a heap of N, so memory stays bounded by the sample, not the file.
    return {sid for _, sid in heapq.nsmallest(selection.sample, keyed)}


def selected(sessions: Sequence[Session], selection: Selection) -> list[Session]:
    """The sessions of a list a run grades, in order: what ``selected_sessions`` keeps of a
    file holding them (the same matches, the same sample for a seed)."""
    matching = [s for s in sessions if selection.matches(s)]
    if selection.sample is None:
        return matching
    keyed = ((selection.sample_key(s.id), s.id) for s in matching)
    keep = {sid for _, sid in heapq.nsmallest(selection.sample, keyed)}
    return [s for s in matching if s.id in keep]


def selected_sessions(path: str | Path, selection: Selection) -> Iterator[Session | InputFileError]:
    """The sessions a run grades, in file order, with every bad line as its error."""
    from ..sessions.model import iter_sessions

    keep = sampled_ids(Path(path), selection)
    for _, item in iter_sessions(path):
        if isinstance(item, InputFileError) or (
            selection.matches(item) and (keep is None or item.id in keep)
        ):
            yield item
