"""The judge's claims matched to the experts' claim sentences, in code.

A judge finds its own claims; ExpertQA's experts labelled the answer's sentences. Each pair is
scored by the Jaccard overlap of their words (citation markers and case ignored); pairs are
taken best first, each claim at most once, down to ``MIN_OVERLAP``. What is left is reported,
never dropped: expert claims no judge claim matches (``missed``) and judge claims matching no
expert claim (``invented``: split, merged or made-up claims).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MIN_OVERLAP = 0.5
_MARKER = re.compile(r"\[[^\]\n]{1,12}\]")
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Alignment:
    pairs: tuple[tuple[int, int], ...]  # (judge claim index, expert claim index)
    missed: tuple[int, ...]  # expert claims with no judge claim
    invented: tuple[int, ...]  # judge claims with no expert claim


def tokens(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(_MARKER.sub(" ", text).casefold()))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def align(judge: Sequence[str], expert: Sequence[str], minimum: float = MIN_OVERLAP) -> Alignment:
    judged = [tokens(t) for t in judge]
    labelled = [tokens(t) for t in expert]
    candidates = sorted(
        (-overlap(j, e), i, k)
        for i, j in enumerate(judged)
        for k, e in enumerate(labelled)
        if overlap(j, e) >= minimum
    )
    pairs: list[tuple[int, int]] = []
    used_judge: set[int] = set()
    used_expert: set[int] = set()
    for _, i, k in candidates:
        if i in used_judge or k in used_expert:
            continue
        pairs.append((i, k))
        used_judge.add(i)
        used_expert.add(k)
    return Alignment(
        tuple(sorted(pairs)),
        tuple(k for k in range(len(expert)) if k not in used_expert),
        tuple(i for i in range(len(judge)) if i not in used_judge),
    )
