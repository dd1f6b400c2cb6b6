"""Per-criterion agreement on the 1-3 scores, for criteria the humans scored too.

Scores are ordinal, so besides exact agreement we report within-one agreement and weighted
kappa. The table is always laid out on the fixed scale ``[1, 2, 3]``: the weights follow the
label order, and letting it be inferred is how string-coded scores end up with a silently wrong
weighted kappa. Both are a few lines of numpy, the same arithmetic as scikit-learn's
``confusion_matrix`` and ``cohen_kappa_score`` (the tests hold them to it): importing
``sklearn.metrics`` costs more than a second of start-up for a 3x3 table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..stats.intervals import Interval, wilson

SCALE = [1, 2, 3]


@dataclass
class CriterionAgreement:
    criterion: str
    n: int
    table: list[list[int]]  # rows: human 1..3, columns: judge 1..3
    exact_agreement: float | None = None
    exact_agreement_ci: Interval | None = None
    within_one_agreement: float | None = None
    linear_kappa: float | None = None
    quadratic_kappa: float | None = None
    mean_human: float | None = None
    mean_judge: float | None = None
    mean_shift: float | None = None  # judge minus human: > 0 means the judge scores higher
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "n": self.n,
            "table": self.table,
            "table_axes": "rows: human score 1-3, columns: judge score 1-3",
            "exact_agreement": self.exact_agreement,
            "exact_agreement_ci": self.exact_agreement_ci,
            "within_one_agreement": self.within_one_agreement,
            "linear_weighted_kappa": self.linear_kappa,
            "quadratic_weighted_kappa": self.quadratic_kappa,
            "mean_human": self.mean_human,
            "mean_judge": self.mean_judge,
            "mean_shift": self.mean_shift,
        }


def criterion_agreement(
    criterion: str, human: npt.NDArray[np.int64], judge: npt.NDArray[np.int64]
) -> CriterionAgreement:
    """Agreement on one criterion; 0 in either array means "no score" and drops that session."""
    both = (human > 0) & (judge > 0)
    h, j = human[both], judge[both]
    n = int(h.size)
    counts = confusion_table(h, j)
    out = CriterionAgreement(criterion=criterion, n=n, table=[[int(x) for x in r] for r in counts])
    if n == 0:
        out.warnings.append(
            f"{criterion}: no session has both a human and a judge score; agreement undefined"
        )
        return out
    exact = int(np.sum(h == j))
    out.exact_agreement, out.exact_agreement_ci = exact / n, wilson(exact, n)
    out.within_one_agreement = float(np.mean(np.abs(h - j) <= 1))
    out.mean_human, out.mean_judge = float(h.mean()), float(j.mean())
    out.mean_shift = float(np.mean(j - h))
    # Weighted kappa is undefined exactly when expected disagreement is zero, which happens only
    # when both raters used one and the same score for every session.
    if len(set(h.tolist()) | set(j.tolist())) == 1:
        out.warnings.append(
            f"{criterion}: weighted kappa undefined: judge and humans gave every session "
            f"the same score ({int(h[0])})"
        )
        return out
    single = [who for who, used in (("humans", h), ("judge", j)) if np.unique(used).size == 1]
    if single:
        # As for the pass/fail kappa: arithmetic gives 0 here, forced by the data, so null.
        out.warnings.append(
            f"{criterion}: weighted kappa undefined: {' and '.join(single)} used a single score, "
            "so it would be 0 by construction and says nothing about agreement; read exact and "
            "within-one agreement instead"
        )
        return out
    out.linear_kappa = weighted_kappa(counts, "linear")
    out.quadratic_kappa = weighted_kappa(counts, "quadratic")
    return out


def confusion_table(
    human: npt.NDArray[np.int64], judge: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Counts on the fixed scale: rows human 1..3, columns judge 1..3; other values not counted."""
    on_scale = np.isin(human, SCALE) & np.isin(judge, SCALE)
    table = np.zeros((len(SCALE), len(SCALE)), dtype=np.int64)
    np.add.at(table, (human[on_scale] - SCALE[0], judge[on_scale] - SCALE[0]), 1)
    return table


def weighted_kappa(table: npt.NDArray[np.int64], weights: Literal["linear", "quadratic"]) -> float:
    """Cohen's weighted kappa of a confusion table, weights by distance in label order.

    1 - sum(w * observed) / sum(w * expected), with expected the outer product of the margins
    over n; the caller rules out the tables where the expected disagreement is zero.
    """
    observed = table.astype(np.float64)
    expected = np.outer(observed.sum(axis=0), observed.sum(axis=1)) / observed.sum()
    index = np.zeros(table.shape) + np.arange(table.shape[0])
    distance = np.abs(index - index.T) if weights == "linear" else (index - index.T) ** 2
    return float(1 - np.sum(distance * observed) / np.sum(distance * expected))
