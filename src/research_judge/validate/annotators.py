"""Several annotators: each session's reference label, and how far the people agree.

A judge cannot be expected to agree with a team more than its members agree with each other, so
the agreement among annotators on the sessions several of them labelled is the ceiling the
judge's kappa is read against (MT-Bench states its judge that way: GPT-4 agrees with experts
85% of the time, experts with each other 81%).

- Reference label: the majority of a session's annotators; an even split has none and is left
  out of every comparison (counted as a tie). One annotator's label is its own majority.
- Scores: per criterion, the median of the annotators who scored it when that median is a whole
  score (an even split between two levels gives none).
- Human-human agreement, on the sessions labelled by two or more: Cohen's kappa for each pair of
  annotators (with the interval ``validate`` gives the judge), and for more than two annotators
  Krippendorff's alpha (nominal), which allows sessions labelled by different numbers of people,
  with a bootstrap interval over sessions.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..stats.intervals import Interval, percentile_interval

if TYPE_CHECKING:
    from .agreement import PassFailStats
    from .labels import HumanLabel

# A bootstrap interval may leave out resamples without a statistic only while they could not
# fill a 2.5% tail by themselves (as `stability` does for Fleiss' kappa).
MAX_UNDEFINED_SHARE = 0.025


def reference_labels(
    annotations: Mapping[str, Mapping[str, HumanLabel]],
) -> tuple[dict[str, HumanLabel], list[str]]:
    """Majority label per session (in first-seen order) and the sessions that tied."""
    from .labels import HumanLabel

    items: dict[str, HumanLabel] = {}
    ties: list[str] = []
    for session_id, by_annotator in annotations.items():
        labels = list(by_annotator.values())
        passes = sum(h.label == "pass" for h in labels)
        fails = len(labels) - passes
        if passes == fails:
            ties.append(session_id)
            continue
        scores: dict[str, int] = {}
        for name in {n for h in labels for n in h.scores}:
            given = sorted(h.scores[name] for h in labels if name in h.scores)
            middle = (given[(len(given) - 1) // 2] + given[len(given) // 2]) / 2
            if middle.is_integer():
                scores[name] = int(middle)
        first = min(labels, key=lambda h: h.line)
        items[session_id] = HumanLabel(
            session_id, "pass" if passes > fails else "fail", scores, first.line
        )
    return items, ties


@dataclass(frozen=True)
class PairAgreement:
    first: str
    second: str
    n: int
    raw_agreement: float | None
    kappa: float | None
    kappa_ci: Interval | None
    undefined: str | None  # why kappa or its interval is missing

    def to_dict(self) -> dict[str, object]:
        return {
            "annotators": [self.first, self.second],
            "n": self.n,
            "raw_agreement": self.raw_agreement,
            "cohen_kappa": self.kappa,
            "cohen_kappa_ci": self.kappa_ci,
            "undefined": self.undefined,
        }


@dataclass
class HumanAgreement:
    """How far the annotators agree with each other: the ceiling for the judge's kappa."""

    annotators: list[str]
    n_overlap: int  # sessions labelled by two or more annotators
    ties: list[str]
    pairs: list[PairAgreement]
    statistic: str  # "cohen_kappa" for two annotators, "krippendorff_alpha" for more
    value: float | None
    ci: Interval | None
    undefined: str | None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "annotators": self.annotators,
            "n_overlap": self.n_overlap,
            "ties": len(self.ties),
            "statistic": self.statistic,
            "value": self.value,
            "ci": self.ci,
            "undefined": self.undefined,
            "pairs": [p.to_dict() for p in self.pairs],
        }


def human_agreement(
    annotations: Mapping[str, Mapping[str, HumanLabel]],
    ties: list[str],
    *,
    seed: int,
    n_boot: int,
) -> HumanAgreement | None:
    """None unless some session was labelled by two or more annotators."""
    from .agreement import pass_fail_stats

    overlap = {sid: by for sid, by in annotations.items() if len(by) >= 2}
    if not overlap:
        return None
    names = sorted({name for by in overlap.values() for name in by})
    pairs: list[PairAgreement] = []
    warnings: list[str] = []
    for first, second in itertools.combinations(names, 2):
        both = [by for by in overlap.values() if first in by and second in by]
        if not both:
            continue
        x = np.array([by[first].label == "pass" for by in both], bool)
        y = np.array([by[second].label == "pass" for by in both], bool)
        # The judge's own machinery, one annotator in the judge's seat: the same kappa, the
        # same intervals (bootstrap stratified by the first annotator's label, boundary ones at
        # perfect agreement) and the same null-with-reason when one of them used one label.
        s = pass_fail_stats(x, y, seed=seed, n_boot=n_boot)
        why = s.cohen_kappa_undefined or (None if s.cohen_kappa_ci else "no interval")
        pairs.append(
            PairAgreement(
                first, second, len(both), s.raw_agreement, s.cohen_kappa, s.cohen_kappa_ci, why
            )
        )
        if s.cohen_kappa_undefined:
            warnings.append(
                f"annotators {first} and {second}: kappa undefined ({s.cohen_kappa_undefined})"
            )
    if len(names) == 2:
        [only] = pairs
        value, ci, undefined, statistic = only.kappa, only.kappa_ci, only.undefined, "cohen_kappa"
    else:
        counts = np.array(
            [
                [
                    sum(h.label == "pass" for h in by.values()),
                    sum(h.label == "fail" for h in by.values()),
                ]
                for by in overlap.values()
            ],
            dtype=np.int64,
        )
        value, ci, undefined = _alpha_with_interval(counts, seed=seed, n_boot=n_boot)
        statistic = "krippendorff_alpha"
    if undefined:
        warnings.append(f"human-human {statistic}: {undefined}")
    return HumanAgreement(
        names, len(overlap), list(ties), pairs, statistic, value, ci, undefined, warnings
    )


def krippendorff_alpha(counts: npt.NDArray[np.int64]) -> float | None:
    """Krippendorff's alpha for nominal pass/fail labels; ``counts[u] = (passes, fails)`` of
    session u, which needs two or more labels. None when every label is the same."""
    values = _alpha(counts.astype(float), np.ones((1, counts.shape[0])))
    return None if np.isnan(values[0]) else float(values[0])


def _alpha(
    counts: npt.NDArray[np.float64], weights: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    # weights[r, u]: how many times resample r drew session u. With the coincidence matrix of
    # two categories, alpha = 1 - (n - 1) * D / (2 n_pass n_fail), where D sums over sessions
    # the disagreeing ordered pairs 2 p_u f_u / (m_u - 1) and n counts every pairable label.
    passes, fails = counts[:, 0], counts[:, 1]
    m = passes + fails
    disagreement = weights @ (2 * passes * fails / (m - 1))
    n_pass, n_fail = weights @ passes, weights @ fails
    n = n_pass + n_fail
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (n - 1) * disagreement / (2 * n_pass * n_fail)
    return np.asarray(np.where((n_pass == 0) | (n_fail == 0), np.nan, alpha), dtype=np.float64)


def _alpha_with_interval(
    counts: npt.NDArray[np.int64], *, seed: int, n_boot: int
) -> tuple[float | None, Interval | None, str | None]:
    alpha = krippendorff_alpha(counts)
    if alpha is None:
        return None, None, "every annotator gave every overlapping session the same label"
    if n_boot <= 0:
        return alpha, None, "bootstrap disabled: no interval"
    rng = np.random.default_rng(seed)
    units = counts.shape[0]
    weights = rng.multinomial(units, np.full(units, 1 / units), size=n_boot).astype(float)
    values = _alpha(counts.astype(float), weights)
    undefined = int(np.sum(np.isnan(values)))
    if undefined > MAX_UNDEFINED_SHARE * n_boot:
        return (
            alpha,
            None,
            f"{undefined} of {n_boot} resamples drew only sessions with one label throughout, "
            "where alpha is undefined; no interval",
        )
    ci = percentile_interval(values)
    if ci is None or ci[1] - ci[0] <= 1e-12:
        return alpha, None, "every resample gave the same alpha (no disagreement to resample)"
    return alpha, ci, None


def ceiling_sentence(judge: PassFailStats, humans: HumanAgreement) -> str:
    """The judge's agreement with the annotators beside theirs with each other, e.g. "the judge
    agrees with your annotators at kappa 0.52 [0.31, 0.70]; they agree with each other at 0.61
    [0.40, 0.78], n = 40 labelled twice"."""

    def value(x: float | None, ci: Interval | None, why: str | None) -> str:
        if x is None:
            return f"undefined ({why})" if why else "undefined"
        return f"{x:.2f}" + ("" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]")

    ours = value(judge.cohen_kappa, judge.cohen_kappa_ci, judge.cohen_kappa_undefined)
    theirs = value(humans.value, humans.ci, humans.undefined if humans.value is None else None)
    if humans.statistic == "cohen_kappa":
        overlap = f"n = {humans.n_overlap} labelled twice"
        with_each_other = f"at {theirs}"
    else:
        overlap = (
            f"n = {humans.n_overlap} labelled by two or more of {len(humans.annotators)} annotators"
        )
        with_each_other = f"at Krippendorff's alpha {theirs}"
    ties = f"; {len(humans.ties)} tied session(s) left out" if humans.ties else ""
    return (
        f"Human ceiling: the judge agrees with your annotators at kappa {ours} "
        f"(majority label, n = {judge.table.n}); they agree with each other "
        f"{with_each_other}, {overlap}{ties}"
    )
