"""Join the results of ``grade --shard I/N`` runs into one results file, in input order.

Each shard's results are in the order of the sessions file, restricted to that shard's sessions
(``sessions.shards.shard_of``). The sessions file then says the order of the whole: for each of
its ids in turn, the shard the id hashes to must have it as its next line, or not have it at all
(a session that shard's run left out: a bad line, a --where or --sample, a run not finished).
Nothing is held but one line per shard, so a million results merge in constant memory.

Refused, with nothing written: a file that is not one shard of N (its ids hash to different
shards, N being the number of files given), two files of the same shard (overlapping), shards
graded by different judges, a shard line that the sessions file does not have where it should
(another sessions file, or a shard edited by hand).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from .._files import atomic_file
from .._validation import describe_validation_error
from ..errors import ConfigError, InputFileError
from ..sessions.shards import shard_of
from .model import JudgeInfo


class _Head(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: str
    judge: JudgeInfo | None = None


@dataclass(frozen=True)
class Merged:
    sessions: int  # lines written
    shards: int


class _Shard:
    """One shard file, read a line at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._handle = path.open("rb")
        except OSError as exc:
            raise InputFileError(path, f"cannot read results: {exc.strerror or exc}") from exc
        self.number = 0
        self.index = 0  # which shard of N it is, from its first line
        self.line: bytes | None = None
        self.head: _Head | None = None
        self.advance()

    def advance(self) -> None:
        for raw in self._handle:
            self.number += 1
            if not raw.strip():
                continue
            try:
                self.head = _Head.model_validate_json(raw)
            except ValidationError as exc:
                raise InputFileError(
                    self.path, describe_validation_error(exc, limit=1), self.number
                ) from exc
            self.line = raw if raw.endswith(b"\n") else raw + b"\n"
            return
        self.line = self.head = None
        self._handle.close()

    def close(self) -> None:
        self._handle.close()


def _judges(path: Path) -> set[str]:
    """The judge fingerprints one shard's lines carry (errors with no judge aside)."""
    out: set[str] = set()
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                head = _Head.model_validate_json(raw)
            except ValidationError as exc:
                raise InputFileError(path, describe_validation_error(exc, limit=1), number) from exc
            if head.judge is not None:
                out.add(head.judge.fingerprint or head.judge.model_dump_json())
    return out


def _session_ids(path: Path) -> Iterator[str]:
    from ..sessions.model import Session, iter_sessions

    for _, item in iter_sessions(path):
        if isinstance(item, Session):
            yield item.id


def merge_shards(shards: Sequence[str | Path], sessions: str | Path, out: str | Path) -> Merged:
    """Write the shards' results to ``out`` in the order of ``sessions``; see the module doc."""
    paths = [Path(p) for p in shards]
    if not paths:
        raise ConfigError("merge needs at least one shard")
    count = len(paths)
    judges = {p: _judges(p) for p in paths}
    distinct = {j for found in judges.values() for j in found}
    if len(distinct) > 1:
        listing = "; ".join(f"{p}: {', '.join(sorted(j)) or 'none'}" for p, j in judges.items())
        raise ConfigError(
            f"the shards were graded by different judges ({listing}): regrade them with one "
            "judge before merging"
        )
    open_shards = [_Shard(p) for p in paths]
    try:
        by_index = _index(open_shards, count)
        written = 0
        with atomic_file(out, what="--out") as handle:
            for sid in _session_ids(Path(sessions)):
                shard = by_index.get(shard_of(sid, count))
                if shard is None or shard.head is None or shard.head.session_id != sid:
                    continue
                assert shard.line is not None
                handle.write(shard.line)
                written += 1
                shard.advance()
                if shard.head is not None and shard_of(shard.head.session_id, count) != shard.index:
                    raise _not_one_shard(shard, count)
            left = [s for s in open_shards if s.head is not None]
            if left:
                s = left[0]
                assert s.head is not None
                raise InputFileError(
                    s.path,
                    f"session {s.head.session_id!r} is not where {sessions} puts it (another "
                    "sessions file, or lines out of order): nothing written",
                    s.number,
                )
        return Merged(written, count)
    finally:
        for s in open_shards:
            s.close()


def _index(shards: list[_Shard], count: int) -> dict[int, _Shard]:
    """Which shard of ``count`` each file is (from its first line); two files of one shard are
    overlapping shards."""
    out: dict[int, _Shard] = {}
    for s in shards:
        if s.head is None:
            continue  # an empty shard: nothing of it to place
        index = shard_of(s.head.session_id, count)
        if index in out:
            raise ConfigError(
                f"{out[index].path} and {s.path} are the same shard ({index}/{count}): "
                "overlapping shards are not merged"
            )
        s.index = index
        out[index] = s
    return out


def _not_one_shard(shard: _Shard, count: int) -> InputFileError:
    assert shard.head is not None
    return InputFileError(
        shard.path,
        f"session {shard.head.session_id!r} belongs to another shard of {count}: give every "
        f"shard of one `grade --shard I/{count}` split, each once",
        shard.number,
    )
