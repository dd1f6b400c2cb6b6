"""Per-criterion distributions: counts of 1/2/3 for scores, histograms for ratios."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..results.model import RATIO_NAMES, SCORE_NAMES, Result
from ..results.rows import ResultRow, as_rows
from .svg import BarChart, bar_chart

# Five equal-width bins over [0, 1]; the last one is closed so a ratio of exactly 1 lands in it.
RATIO_BINS = 5
_BIN_LABELS = tuple(f"{i / RATIO_BINS:.1f}-{(i + 1) / RATIO_BINS:.1f}" for i in range(RATIO_BINS))


@dataclass(frozen=True)
class CriteriaCharts:
    scores: tuple[BarChart, ...]
    ratios: tuple[BarChart, ...]


def criteria_charts(results: Sequence[Result | ResultRow]) -> CriteriaCharts:
    graded = [r for r in as_rows(results) if r.ok]
    return CriteriaCharts(
        scores=tuple(_score_chart(name, graded) for name in SCORE_NAMES),
        ratios=tuple(_ratio_chart(name, graded) for name in RATIO_NAMES),
    )


def ratio_bin(value: float) -> int:
    """Index of the histogram bin holding a ratio in [0, 1]."""
    return min(int(value * RATIO_BINS), RATIO_BINS - 1)


def _score_chart(name: str, graded: Sequence[ResultRow]) -> BarChart:
    counts = {1: 0, 2: 0, 3: 0}
    missing = 0
    for r in graded:
        score = r.score(name)
        if score is not None:
            counts[score] += 1
        else:
            missing += 1
    note = f"{missing} without a score" if missing else ""
    return bar_chart(name, [(str(s), n) for s, n in counts.items()], note=note)


def _ratio_chart(name: str, graded: Sequence[ResultRow]) -> BarChart:
    counts = [0] * RATIO_BINS
    undefined = 0
    for r in graded:
        value = r.criterion_value(name)
        if value is None:
            undefined += 1
        else:
            counts[ratio_bin(value)] += 1
    # A null ratio means "nothing to count" (no references, no claims), not a low value.
    note = f"{undefined} undefined (nothing to count)" if undefined else ""
    # Wider than the score charts: five bins with range labels need the room.
    return bar_chart(name, list(zip(_BIN_LABELS, counts, strict=True)), width=300, note=note)
