"""The run's true pass rate, corrected for the judge's measured errors (Rogan-Gladen).

A judge that passes 90% of human passes and also 40% of human fails reports too high a pass
rate. With its sensitivity (agreement on human passes) and specificity (agreement on human fails)
measured on the labelled sessions, the prevalence of "pass" among all graded sessions is

    corrected = (raw + specificity - 1) / (sensitivity + specificity - 1),

clipped to [0, 1] (Rogan & Gladen 1978). The interval carries the uncertainty of all three
inputs: a parametric bootstrap draws each from its binomial (the raw rate over the whole run,
sensitivity and specificity over the labelled human classes) and takes percentiles of the
clipped estimate; with the bootstrap off, the delta method gives a normal interval instead.
The three are treated as independent, which is slightly conservative when the labelled sessions
are part of the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

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
    raw = rng.binomial(graded, passed / graded, n_boot) / graded
    sens = rng.binomial(n_pass, t.a / n_pass, n_boot) / n_pass
    spec = rng.binomial(n_fail, t.d / n_fail, n_boot) / n_fail
    youden = sens + spec - 1
    method = (
        f"parametric bootstrap percentile, {n_boot} resamples (raw rate, sensitivity, specificity)"
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


def _delta(
    raw: float, graded: int, sens: float, n_pass: int, spec: float, n_fail: int
) -> tuple[Interval | None, str, str | None]:
    youden = sens + spec - 1
    theta = (raw + spec - 1) / youden  # unclipped: the derivatives are of the formula
    variance = (
        raw * (1 - raw) / graded
        + theta**2 * sens * (1 - sens) / n_pass
        + (1 - theta) ** 2 * spec * (1 - spec) / n_fail
    ) / youden**2
    half = Z95 * math.sqrt(variance)
    method = "delta method (normal; raw rate, sensitivity, specificity)"
    if half == 0:
        return None, method, "every input rate is 0 or 1, so the delta method gives no width"
    return (max(0.0, theta - half), min(1.0, theta + half)), method, None
