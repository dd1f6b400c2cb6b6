"""Pass/fail agreement between the judge and the humans: the 2x2 table and what follows from it.

Kappa is the headline, but a single number hides the failure this tool exists to catch: a judge
that agrees on nearly every human pass and few human fails (lenient). So the per-class agreement
rates, specific agreement, and an exact McNemar test of the direction of disagreement are always
reported beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from ..stats.intervals import (
    BootstrapCounts,
    FloatArray,
    Interval,
    kappa_from_counts,
    kappa_se,
    normal_interval,
    percentile_interval,
    stratified_bootstrap,
    wilson,
)
from ..stats.paired import mcnemar_exact

Direction = Literal["lenient", "strict", "balanced"]
LANDIS_KOCH = (  # upper bound of each band, Landis & Koch (1977)
    (0.0, "poor"),
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
)


def landis_koch(kappa: float | None) -> str | None:
    if kappa is None:
        return None
    if kappa < 0:
        return "poor"
    return next(name for bound, name in LANDIS_KOCH[1:] if kappa <= bound + 1e-12)


@dataclass(frozen=True)
class Table2x2:
    a: int  # human pass, judge pass
    b: int  # human pass, judge fail
    c: int  # human fail, judge pass
    d: int  # human fail, judge fail

    @classmethod
    def from_arrays(cls, human: npt.NDArray[np.bool_], judge: npt.NDArray[np.bool_]) -> Table2x2:
        return cls(
            a=int(np.sum(human & judge)),
            b=int(np.sum(human & ~judge)),
            c=int(np.sum(~human & judge)),
            d=int(np.sum(~human & ~judge)),
        )

    @property
    def n(self) -> int:
        return self.a + self.b + self.c + self.d

    def to_dict(self) -> dict[str, dict[str, int]]:
        return {
            "human_pass": {"judge_pass": self.a, "judge_fail": self.b},
            "human_fail": {"judge_pass": self.c, "judge_fail": self.d},
        }


@dataclass(frozen=True)
class McNemar:
    judge_pass_human_fail: int
    judge_fail_human_pass: int
    p_value: float
    direction: Direction


@dataclass
class PassFailStats:
    table: Table2x2
    raw_agreement: float | None = None
    raw_agreement_ci: Interval | None = None
    cohen_kappa: float | None = None
    cohen_kappa_ci: Interval | None = None
    cohen_kappa_ci_method: str = "none"
    cohen_kappa_ci_bootstrap: Interval | None = None
    cohen_kappa_ci_analytic: Interval | None = None
    cohen_kappa_se: float | None = None
    # Why cohen_kappa is None, in a few words, for the text report and the sample-size guidance.
    cohen_kappa_undefined: str | None = None
    # Set when no disagreement (or no agreement) was observed: the analytic SE is then 0 and the
    # bootstrap cannot vary, so the interval is the boundary one (see _boundary_interval).
    cohen_kappa_boundary: str | None = None
    cohen_kappa_ci_boundary: Interval | None = None
    agreement_on_human_pass: float | None = None
    agreement_on_human_pass_ci: Interval | None = None
    agreement_on_human_fail: float | None = None
    agreement_on_human_fail_ci: Interval | None = None
    positive_agreement: float | None = None
    positive_agreement_ci: Interval | None = None
    negative_agreement: float | None = None
    negative_agreement_ci: Interval | None = None
    judge_pass_rate: float | None = None
    judge_pass_rate_ci: Interval | None = None
    human_pass_rate: float | None = None
    human_pass_rate_ci: Interval | None = None
    alignment: float | None = None
    alignment_ci: Interval | None = None
    mcnemar: McNemar | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def kappa_band(self) -> str | None:
        return landis_koch(self.cohen_kappa)

    @property
    def kappa_ci_low_band(self) -> str | None:
        return landis_koch(self.cohen_kappa_ci[0] if self.cohen_kappa_ci else None)


def pass_fail_stats(
    human: npt.NDArray[np.bool_], judge: npt.NDArray[np.bool_], *, seed: int, n_boot: int
) -> PassFailStats:
    t = Table2x2.from_arrays(human, judge)
    s = PassFailStats(table=t)
    if t.n == 0:
        s.cohen_kappa_undefined = "nothing to compare"
        s.warnings.append(
            "no session has both a judge verdict and a human label: nothing to compare"
        )
        return s
    s.raw_agreement, s.raw_agreement_ci = (t.a + t.d) / t.n, wilson(t.a + t.d, t.n)
    s.judge_pass_rate, s.judge_pass_rate_ci = (t.a + t.c) / t.n, wilson(t.a + t.c, t.n)
    s.human_pass_rate, s.human_pass_rate_ci = (t.a + t.b) / t.n, wilson(t.a + t.b, t.n)
    s.agreement_on_human_pass = _ratio(t.a, t.a + t.b)
    s.agreement_on_human_pass_ci = wilson(t.a, t.a + t.b)
    s.agreement_on_human_fail = _ratio(t.d, t.c + t.d)
    s.agreement_on_human_fail_ci = wilson(t.d, t.c + t.d)
    s.positive_agreement, s.negative_agreement, s.alignment = (
        _defined(float(x)) for x in _specific_agreement(t.a, t.b, t.c, t.d)
    )
    s.mcnemar = _mcnemar(t)
    _explain_missing_classes(s)
    _kappa(s)
    if n_boot > 0:
        _bootstrap(s, stratified_bootstrap(t.a, t.b, t.c, t.d, n_boot, np.random.default_rng(seed)))
    else:
        s.warnings.append("bootstrap disabled (0 resamples): bootstrap intervals not computed")
    s.cohen_kappa_ci, s.cohen_kappa_ci_method = (
        (s.cohen_kappa_ci_bootstrap, f"stratified bootstrap percentile, {n_boot} resamples")
        if s.cohen_kappa_ci_bootstrap is not None
        else (s.cohen_kappa_ci_analytic, "analytic (normal, Fleiss-Cohen-Everitt SE)")
        if s.cohen_kappa_ci_analytic is not None
        else (s.cohen_kappa_ci_boundary, BOUNDARY_METHOD)
        if s.cohen_kappa_ci_boundary is not None
        else (None, "none")
    )
    _keep_monotone(s)
    return s


# Near perfect agreement the percentile bootstrap and the normal interval are too narrow on few
# labels: the stratified bootstrap of [[1, 0], [1, 4]] gives [0.18, 1.00], narrower and more
# trusting than the boundary interval [-0.41, 1.00] of the perfect [[1, 0], [0, 5]].
MONOTONE_METHOD = "; lower end capped at that of perfect agreement with either side's pass rates"


def _keep_monotone(s: PassFailStats) -> None:
    """A table's kappa interval never starts above that of perfect agreement at either side's
    pass rates.

    Perfect agreement is at least as good evidence as any table with one of the same margins,
    so its (boundary) interval bounds theirs from below. Every table one disagreement away from
    a perfect one shares one side's pass rates with it, so the intervals are monotone across
    the perfect-agreement boundary. Away from the boundary the perfect tables' intervals start
    far higher and nothing changes.
    """
    t, ci = s.table, s.cohen_kappa_ci
    if ci is None or s.cohen_kappa_boundary is not None:
        return
    lows = [
        bound[0]
        for passes in (t.a + t.b, t.a + t.c)  # humans' margins, the judge's margins
        if (bound := _boundary_interval(Table2x2(passes, 0, 0, t.n - passes))) is not None
    ]
    low = min([ci[0], *lows])
    if low < ci[0]:
        s.cohen_kappa_ci = (low, ci[1])
        s.cohen_kappa_ci_method += MONOTONE_METHOD


def _ratio(num: int, den: int) -> float | None:
    return num / den if den > 0 else None


def _defined(value: float) -> float | None:
    return None if math.isnan(value) else value


def _specific_agreement(
    a: FloatArray | float, b: FloatArray | float, c: FloatArray | float, d: FloatArray | float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Positive and negative specific agreement and EvalGen alignment (the harmonic mean of
    fails caught and passes not wrongly failed), for one table or arrays of resampled ones.

    NaN where undefined: no human pass or fail for alignment, no pass (fail) at all for the
    positive (negative) agreement. One formula serves the estimate and its bootstrap.
    """
    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    with np.errstate(divide="ignore", invalid="ignore"):
        p_pos = 2 * a / (2 * a + b + c)
        p_neg = 2 * d / (2 * d + b + c)
        fails_caught, passes_kept = d / (c + d), a / (a + b)
        total = fails_caught + passes_kept
        alignment = np.where(total == 0, 0.0, 2 * fails_caught * passes_kept / total)
    return p_pos, p_neg, alignment


def _mcnemar(t: Table2x2) -> McNemar:
    # The same exact test `compare` runs on pass->fail against fail->pass; here the discordant
    # pairs are judge pass / human fail (c) against judge fail / human pass (b).
    test = mcnemar_exact(t.c, t.b, t.n)
    assert test.p_value is not None  # defined whenever t.n > 0, which the caller guarantees
    direction: Direction = "lenient" if t.c > t.b else "strict" if t.b > t.c else "balanced"
    return McNemar(t.c, t.b, test.p_value, direction)


def _explain_missing_classes(s: PassFailStats) -> None:
    t = s.table
    if t.a + t.b == 0:
        s.warnings.append(
            "no human passes: agreement on human passes, positive agreement and alignment "
            "are undefined"
        )
    if t.c + t.d == 0:
        s.warnings.append(
            "no human fails: agreement on human fails, negative agreement and alignment are "
            "undefined, and leniency cannot be measured"
        )


def _kappa(s: PassFailStats) -> None:
    t = s.table
    # The same counts formula the bootstrap uses (tested equal to scikit-learn's score).
    kappa = float(kappa_from_counts(t.a, t.b, t.c, t.d))
    if math.isnan(kappa):
        s.cohen_kappa_undefined = "judge and humans both gave every session the same label"
        s.warnings.append(
            f"cohen_kappa undefined: {s.cohen_kappa_undefined} (chance agreement is 1)"
        )
        return
    one_sided = [
        who
        for who, used in (("humans", (t.a + t.b, t.c + t.d)), ("judge", (t.a + t.c, t.b + t.d)))
        if 0 in used
    ]
    if one_sided:
        # Contract: kappa is null when one side uses a single label. Arithmetic would give 0.0,
        # but that 0 is forced by the data and says nothing about agreement.
        s.cohen_kappa_undefined = f"{' and '.join(one_sided)} used a single label"
        s.warnings.append(
            f"cohen_kappa undefined: {s.cohen_kappa_undefined}, so kappa would be 0 by "
            "construction and says nothing about agreement; read agreement on human passes and "
            "on human fails instead"
        )
        return
    s.cohen_kappa = kappa
    s.cohen_kappa_se = kappa_se(t.a, t.b, t.c, t.d)
    boundary = _at_boundary(t)
    if boundary is not None:
        # With no disagreement (or no agreement) the large-sample SE collapses to 0 and the
        # bootstrap cannot vary, so both would print [1, 1] (or [-1, -1]) from a handful of
        # labels: certainty the data cannot give.
        s.cohen_kappa_boundary = boundary
        s.cohen_kappa_ci_boundary = _boundary_interval(t)
        s.warnings.append(
            f"cohen_kappa_ci: {boundary}, so kappa's standard error is 0 and resampling cannot "
            f"vary; the interval is the Wilson interval of raw agreement over {t.n} labels "
            "carried through kappa with both pass rates held fixed"
        )
        return
    if s.cohen_kappa_se is not None:
        s.cohen_kappa_ci_analytic = normal_interval(s.cohen_kappa, s.cohen_kappa_se)


BOUNDARY_METHOD = (
    "boundary: Wilson interval of raw agreement through kappa, pass rates held fixed "
    "(no disagreement or no agreement observed)"
)


def _boundary_interval(t: Table2x2) -> Interval | None:
    """Kappa's interval when the table sits on a boundary (b = c = 0, or a = d = 0).

    Kappa = (po - pe) / (1 - pe) rises with the raw agreement po at fixed pass rates, so the
    Wilson interval of po (which stays honest at 0% and 100%) maps to one for kappa. It ignores
    the uncertainty of the pass rates, which is small beside that of po here: 2 labels give
    [-0.32, 1.00], 100 labels split 60/40 give [0.92, 1.00].
    """
    po_ci = wilson(t.a + t.d, t.n)
    pe = ((t.a + t.b) * (t.a + t.c) + (t.c + t.d) * (t.b + t.d)) / (t.n * t.n)
    if po_ci is None or pe >= 1:
        return None
    low, high = ((po - pe) / (1 - pe) for po in po_ci)
    return (max(-1.0, low), min(1.0, high))


def _at_boundary(t: Table2x2) -> str | None:
    if t.b + t.c == 0:
        return "the judge agreed with the humans on every session (no disagreement observed)"
    if t.a + t.d == 0:
        return "the judge disagreed with the humans on every session (no agreement observed)"
    return None


def _bootstrap(s: PassFailStats, boot: BootstrapCounts) -> None:
    a, b, c, d = boot.a, boot.b, boot.c, boot.d
    p_pos, p_neg, alignment = _specific_agreement(a, b, c, d)
    t = s.table
    withheld: dict[str, list[str]] = {}

    def interval(values: npt.NDArray[np.float64], name: str) -> Interval | None:
        # Resampling within human classes keeps some statistics fixed (see _why_fixed), so a
        # zero-width interval here means "unknown", not "certain".
        ci = percentile_interval(values)
        if ci is not None and ci[1] - ci[0] <= 1e-12:
            withheld.setdefault(_why_fixed(name, t), []).append(name)
            return None
        return ci

    if s.cohen_kappa_ci_analytic is not None:  # both raters used both labels, off the boundary
        s.cohen_kappa_ci_bootstrap = interval(kappa_from_counts(a, b, c, d), "cohen_kappa")
    if s.positive_agreement is not None:
        s.positive_agreement_ci = interval(p_pos, "positive_agreement")
    if s.negative_agreement is not None:
        s.negative_agreement_ci = interval(p_neg, "negative_agreement")
    if s.alignment is not None:
        s.alignment_ci = interval(alignment, "alignment")
    for reason, names in withheld.items():
        s.warnings.append(f"no bootstrap interval for {', '.join(names)}: {reason}")
    if boot.size < 1000:
        s.warnings.append(
            f"only {boot.size} bootstrap resamples: interval ends vary between seeds; "
            "use 10000 for a report"
        )


def _why_fixed(name: str, t: Table2x2) -> str:
    """Why resampling within human classes cannot move this statistic, from the table itself."""
    unanimous = "the judge gave the same verdict to every item of each human class"
    if (t.a == 0 or t.b == 0) and (t.c == 0 or t.d == 0):
        return f"{unanimous}, so resampling shows no variation"
    if name == "positive_agreement" and t.a == 0:
        return "no session was passed by both the judge and the humans, so every resample gives 0"
    if name == "negative_agreement" and t.d == 0:
        return "no session was failed by both the judge and the humans, so every resample gives 0"
    if name == "alignment" and (t.a == 0 or t.d == 0):
        missed = "human passes" if t.a == 0 else "human fails"
        return f"the judge agreed on none of the {missed}, so every resample gives 0"
    return "every resample gave the same value"
