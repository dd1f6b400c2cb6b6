"""Join judge results with human labels by session id, and account for every row left out.

The partition is exact, so the counts can be checked by hand:
every label is either compared, lost to a judge error, or names a session not in the results;
every result is either compared, lost to a judge error, or has no label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..results.model import SCORE_NAMES, Result
from ..results.rows import ResultRow, as_rows
from .labels import Labels

MAX_IDS_LISTED = 20  # enough to find the rows; a long list would drown the report


@dataclass(frozen=True)
class ExcludedGroup:
    reason: str
    ids: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.ids)

    def to_dict(self) -> dict[str, object]:
        return {
            "count": self.count,
            "reason": self.reason,
            "ids": self.ids[:MAX_IDS_LISTED],
            "ids_truncated": self.count > MAX_IDS_LISTED,
        }


@dataclass(frozen=True)
class Exclusions:
    judge_error: ExcludedGroup
    no_label: ExcludedGroup
    unknown_session: ExcludedGroup
    # Several annotators split evenly on these: no reference label, so never compared.
    annotator_tie: ExcludedGroup = field(
        default_factory=lambda: ExcludedGroup(ANNOTATOR_TIE_REASON)
    )

    def to_dict(self) -> dict[str, object]:
        return {
            "judge_error": self.judge_error.to_dict(),
            "no_label": self.no_label.to_dict(),
            "unknown_session": self.unknown_session.to_dict(),
            "annotator_tie": self.annotator_tie.to_dict(),
        }


ANNOTATOR_TIE_REASON = (
    "labelled by several annotators who split evenly: no majority label, never compared"
)


@dataclass(frozen=True)
class Paired:
    """Aligned arrays over the sessions that have both a judge verdict and a human label."""

    session_ids: list[str]
    human_pass: npt.NDArray[np.bool_]
    judge_pass: npt.NDArray[np.bool_]
    words: npt.NDArray[np.float64]
    chars: npt.NDArray[np.float64]
    # Per criterion, 1-3 scores with 0 where a side has no score (ints keep sklearn's labels exact).
    judge_scores: dict[str, npt.NDArray[np.int64]]
    human_scores: dict[str, npt.NDArray[np.int64]]
    label_criteria: tuple[str, ...]

    @property
    def n(self) -> int:
        return len(self.session_ids)


def pair(results: Sequence[Result | ResultRow], labels: Labels) -> tuple[Paired, Exclusions]:
    rows = list(as_rows(results))
    by_id = {r.session_id: r for r in rows}
    errored = [r.session_id for r in rows if not r.ok and r.session_id in labels.items]
    tied = set(labels.ties)
    no_label = [
        r.session_id for r in rows if r.session_id not in labels.items and r.session_id not in tied
    ]
    unknown = [sid for sid in labels.items if sid not in by_id]
    kept = [r for r in rows if r.ok and r.session_id in labels.items]

    def judge_score(r: ResultRow, name: str) -> int:
        return r.score(name) or 0

    paired = Paired(
        session_ids=[r.session_id for r in kept],
        human_pass=np.array([labels.items[r.session_id].label == "pass" for r in kept], bool),
        judge_pass=np.array([r.verdict == "pass" for r in kept], bool),
        words=np.array([r.words for r in kept], float),
        chars=np.array([r.chars for r in kept], float),
        judge_scores={
            name: np.array([judge_score(r, name) for r in kept], np.int64) for name in SCORE_NAMES
        },
        human_scores={
            name: np.array([labels.items[r.session_id].scores.get(name, 0) for r in kept], np.int64)
            for name in SCORE_NAMES
        },
        label_criteria=labels.criteria,
    )
    exclusions = Exclusions(
        judge_error=ExcludedGroup(
            "labelled, but the judge recorded an error or no verdict (never counted as pass "
            "or fail)",
            errored,
        ),
        no_label=ExcludedGroup("in the results, but no human label", no_label),
        unknown_session=ExcludedGroup("labelled, but the session is not in the results", unknown),
        annotator_tie=ExcludedGroup(ANNOTATOR_TIE_REASON, list(labels.ties)),
    )
    return paired, exclusions
