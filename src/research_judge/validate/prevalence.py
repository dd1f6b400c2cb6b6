"""The run's true pass rate, corrected for the judge's measured errors (Rogan-Gladen).

A judge that passes 90% of human passes and also 40% of human fails reports too high a pass
rate. With its sensitivity (agreement on human passes) and specificity (agreement on human fails)
measured on the labelled sessions, the prevalence of "pass" among all graded sessions is

    corrected = (raw + specificity - 1) / (sensitivity + specificity - 1),

clipped to [0, 1] (Rogan & Gladen 1978). The interval carries the uncertainty of all three
inputs: each is drawn from its Jeffreys distribution, Beta(x + 1/2, n - x + 1/2) for x of n (the
raw rate over the whole run, sensitivity and specificity over the labelled human classes), and
the interval is the percentiles of the clipped estimate. Jeffreys rather than a binomial at the
observed rate: a judge that got all 10 human fails right has specificity 10/10, and a binomial
at 1.0 never draws anything else, so the interval would carry none of the doubt 10 labels leave
(Wilson says [0.72, 1]). Away from 0 and 1 the two agree. With the bootstrap off, the delta
method gives a normal interval instead, and none when a rate is 0 or 1 (no width to carry).
The three are treated as independent, which is slightly conservative when the labelled sessions
are part of the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..stats.intervals import Z95, Interval, percentile_interval, wilson
from .agreement import Table2x2

# If more resamples than this share have a judge no better than chance, the correction is not
# estimable from these labels and no interval is given.
MAX_UNDEFINED_SHARE = 0.025


@dataclass
class CorrectedPassRate:
    raw: float | None  # the judge's pass rate over every graded session of the results
    raw_ci: Interval | None
    n_graded: int
    value: float | None = None
    ci: Interval | None = None
    method: str = "none"
    undefined: str | None = None  # why value (or ci) is None

    def to_dict(self) -> dict[str, object]:
        return {
            "corrected_pass_rate": self.value,
            "corrected_pass_rate_ci": self.ci,
            "corrected_pass_rate_method": self.method,
            "corrected_pass_rate_undefined": self.undefined,
            "run_pass_rate": self.raw,
            "run_pass_rate_ci": self.raw_ci,
            "run_graded": self.n_graded,
        }


def rogan_gladen(raw: float, sensitivity: float, specificity: float) -> float | None:
    youden = sensitivity + specificity - 1
    if youden <= 0:
        return None
    return min(1.0, max(0.0, (raw + specificity - 1) / youden))


def corrected_pass_rate(
    passed: int, graded: int, table: Table2x2, *, seed: int, n_boot: int
) -> CorrectedPassRate:
    """``passed`` of ``graded`` sessions in the whole run; ``table`` from the labelled ones."""
    out = CorrectedPassRate(
        raw=passed / graded if graded else None, raw_ci=wilson(passed, graded), n_graded=graded
    )
    n_pass, n_fail = table.a + table.b, table.c + table.d
    if graded == 0:
        out.undefined = "no graded session in the results"
        return out
    if n_pass == 0 or n_fail == 0:
        missing = "passes" if n_pass == 0 else "fails"
        out.undefined = f"no human {missing} labelled, so the judge's error rate there is unknown"
        return out
    sens, spec = table.a / n_pass, table.d / n_fail
    value = rogan_gladen(passed / graded, sens, spec)
    if value is None:
        out.undefined = (
            f"the judge is no better than chance on the labelled sessions (agreement on human "
            f"passes {sens:.2f} + on human fails {spec:.2f} <= 1), so nothing can be corrected"
        )
        return out
    out.value = value
    if n_boot > 0:
        out.ci, out.method, why = _bootstrap(passed, graded, table, seed=seed, n_boot=n_boot)
    else:
        out.ci, out.method, why = _delta(passed / graded, graded, sens, n_pass, spec, n_fail)
    if out.ci is None:
        out.undefined = why
    return out


def _bootstrap(
    passed: int, graded: int, t: Table2x2, *, seed: int, n_boot: int
) -> tuple[Interval | None, str, str | None]:
    rng = np.random.default_rng(seed)
    n_pass, n_fail = t.a + t.b, t.c + t.d
    raw = _jeffreys(rng, passed, graded, n_boot)
    sens = _jeffreys(rng, t.a, n_pass, n_boot)
    spec = _jeffreys(rng, t.d, n_fail, n_boot)
    youden = sens + spec - 1
    method = (
        f"parametric bootstrap percentile, {n_boot} resamples (raw rate, sensitivity and "
        "specificity each drawn from its Jeffreys Beta(x + 1/2, n - x + 1/2))"
    )
    undefined = float(np.mean(youden <= 0))
    if undefined > MAX_UNDEFINED_SHARE:
        return (
            None,
            method,
            f"in {100 * undefined:.0f}% of resamples the judge is no better than chance: too "
            "few labels to bound the corrected rate",
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.clip((raw + spec - 1) / youden, 0.0, 1.0)
    ci = percentile_interval(values[youden > 0])
    return ci, method, None if ci is not None else "no usable resample"


def _jeffreys(
    rng: np.random.Generator, successes: int, n: int, size: int
) -> npt.NDArray[np.float64]:
    return rng.beta(successes + 0.5, n - successes + 0.5, size)


def _delta(
    raw: float, graded: int, sens: float, n_pass: int, spec: float, n_fail: int
) -> tuple[Interval | None, str, str | None]:
    method = "delta method (normal; raw rate, sensitivity, specificity)"
    at_edge = [
        name
        for name, p in (("raw rate", raw), ("sensitivity", sens), ("specificity", spec))
        if p in (0.0, 1.0)
    ]
    if at_edge:
        # Its binomial variance p (1 - p) / n is 0 there, which would pass the rate off as known
        # exactly; the bootstrap (Jeffreys draws) has no such blind spot.
        return (
            None,
            method,
            f"{' and '.join(at_edge)} observed at 0 or 1, where the delta method gives no width; "
            "use the bootstrap",
        )
    youden = sens + spec - 1
    theta = (raw + spec - 1) / youden  # unclipped: the derivatives are of the formula
    variance = (
        raw * (1 - raw) / graded
        + theta**2 * sens * (1 - sens) / n_pass
        + (1 - theta) ** 2 * spec * (1 - spec) / n_fail
    ) / youden**2
    half = Z95 * math.sqrt(variance)
    # Both ends clipped like the estimate: theta itself may lie past 0 or 1, and clipping each
    # end only on its own side would give an interval whose low end is above its high end.
    low, high = (min(1.0, max(0.0, end)) for end in (theta - half, theta + half))
    return (low, high), method, None
