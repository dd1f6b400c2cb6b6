"""Which judge graded each run, and whether it is the same judge on both sides.

A delta between two runs graded by different judges (another model, another prompt) mixes the
agent's change with the judge's, so the comparison must say so loudly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..results.model import JudgeInfo, Result
from ..results.rows import ResultRow


@dataclass(frozen=True)
class JudgeIdentity:
    provider: str
    model: str
    prompts: tuple[tuple[str, str], ...]  # (prompt role, sha256), sorted by role
    fingerprint: str

    @classmethod
    def of(cls, info: JudgeInfo) -> JudgeIdentity:
        prompts = tuple(sorted((role, ref.sha256) for role, ref in info.prompts.items()))
        return cls(info.provider, info.model, prompts, info.fingerprint)

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "prompts": dict(self.prompts),
            "fingerprint": self.fingerprint,
        }


@dataclass(frozen=True)
class RunJudges:
    """Every judge identity seen in one run, most frequent first."""

    counts: tuple[tuple[JudgeIdentity, int], ...]

    @classmethod
    def of(cls, results: Iterable[Result | ResultRow]) -> RunJudges:
        # Rows of one file share their JudgeInfo objects: each is turned into an identity once.
        objects: dict[int, tuple[JudgeInfo, int]] = {}
        for r in results:
            if r.judge is not None:
                info, n = objects.get(id(r.judge), (r.judge, 0))
                objects[id(r.judge)] = (info, n + 1)
        seen: Counter[JudgeIdentity] = Counter()
        for info, n in objects.values():  # in order of first appearance, as most_common keeps
            seen[JudgeIdentity.of(info)] += n
        return cls(tuple(seen.most_common()))

    @property
    def main(self) -> JudgeIdentity | None:
        return self.counts[0][0] if self.counts else None

    @property
    def mixed(self) -> bool:
        return len(self.counts) > 1

    def to_dict(self) -> dict[str, Any] | None:
        if self.main is None:
            return None
        out = self.main.to_dict()
        out["sessions"] = self.counts[0][1]
        out["mixed"] = self.mixed
        if self.mixed:
            out["variants"] = [{**ident.to_dict(), "sessions": n} for ident, n in self.counts]
        return out


def judge_changed(baseline: RunJudges, current: RunJudges) -> bool | None:
    """True when the two runs were not graded by the same set of judges; None when unknown."""
    if baseline.main is None or current.main is None:
        return None
    return {i for i, _ in baseline.counts} != {i for i, _ in current.counts}


def describe_change(old: JudgeIdentity, new: JudgeIdentity) -> list[str]:
    """Human-readable list of what differs between two judge identities."""
    parts: list[str] = []
    if (old.provider, old.model) != (new.provider, new.model):
        parts.append(f"model {old.provider}/{old.model} -> {new.provider}/{new.model}")
    old_prompts, new_prompts = dict(old.prompts), dict(new.prompts)
    for role in sorted(old_prompts.keys() | new_prompts.keys()):
        before, after = old_prompts.get(role), new_prompts.get(role)
        if before != after:
            parts.append(f"{role} prompt {_short(before)} -> {_short(after)}")
    if old.fingerprint != new.fingerprint and not parts:
        parts.append(f"fingerprint {_short(old.fingerprint)} -> {_short(new.fingerprint)}")
    return parts


def _short(digest: str | None) -> str:
    return digest[:12] if digest else "none"
