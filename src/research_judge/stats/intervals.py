"""Confidence intervals: Wilson for rates, two kinds for Cohen's kappa.

Kappa on a 2x2 table is a function of four counts, so it is computed here on numpy arrays of
counts. That lets the bootstrap draw all resamples at once (one multinomial draw per human class)
and evaluate kappa for every resample in a handful of vector operations: no Python loop per
resample, and the same numbers a per-resample ``cohen_kappa_score`` call would give.

Cell names follow the contract's table, human rows and judge columns:
``a`` both pass, ``b`` human pass / judge fail, ``c`` human fail / judge pass, ``d`` both fail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Z95 = 1.959963984540054  # two-sided 95% normal quantile
Interval = tuple[float, float]
FloatArray = npt.NDArray[np.float64]


def wilson(successes: int, n: int, z: float = Z95) -> Interval | None:
    """Wilson score interval for a proportion; ``None`` when there is nothing to estimate from.

    Chosen over the textbook Wald interval because it stays inside [0, 1] and keeps its coverage
    near 0% and 100%, which is exactly where a good judge's agreement rates live.
    """
    if n <= 0:
        return None
    return wilson_at_rate(successes / n, n, z)


def wilson_at_rate(p: float, n: int, z: float = Z95) -> Interval:
    """The Wilson interval of an observed rate ``p`` over ``n`` items (``n`` > 0)."""
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At 0% (100%) the bound is exactly 0 (1); computed, it was off by a rounding error, which
    # printed as 5.551115123125783e-17 (or 0.9999999999999999) wherever it was shown raw.
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return (low, high)


def kappa_from_counts(
    a: FloatArray | float, b: FloatArray | float, c: FloatArray | float, d: FloatArray | float
) -> FloatArray:
    """Cohen's kappa for 2x2 tables given as (arrays of) counts; NaN where it is undefined.

    Undefined means chance agreement is 1: both raters used one and the same label throughout.
    That is decided on the counts, exactly, never by comparing pe with 1 in floating point: at
    n = 250,000 a well-defined kappa has pe within 1e-5 of 1. Callers turn NaN into ``None``
    with a warning; it never reaches a report.
    """
    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    n = a + b + c + d
    # Integer-valued floats are exact far beyond any label count, so these products are too.
    agree_num, chance_num = (a + d) * n, (a + b) * (a + c) + (c + d) * (b + d)
    undefined = chance_num == n * n
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (agree_num - chance_num) / (n * n - chance_num)
    return np.where(undefined | (n == 0), np.nan, kappa)


def kappa_se(a: int, b: int, c: int, d: int) -> float | None:
    """Large-sample standard error of kappa (Fleiss, Cohen & Everitt 1969), not under the null.

    The shorter ``sqrt(po (1 - po) / (n (1 - pe)^2))`` is the usual first approximation; this
    full form also accounts for the margins being estimated, and is what published worked
    examples use (table [[66, 2], [16, 16]]: SE 0.092 here against 0.100 from the shortcut).
    The shortcut is not always the wider one: on [[0, 113], [25, 1]] it gives 0.010 against
    0.084 here.
    """
    n = a + b + c + d
    if n == 0:
        return None
    p = np.array([[a, b], [c, d]], dtype=float) / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    po, pe = float(np.trace(p)), float(rows @ cols)
    if (a + b) * (a + c) + (c + d) * (b + d) == n * n:  # chance agreement exactly 1
        return None
    k = (po - pe) / (1 - pe)
    diag = sum(p[i, i] * (1 - (rows[i] + cols[i]) * (1 - k)) ** 2 for i in range(2))
    off = (1 - k) ** 2 * (p[0, 1] * (cols[0] + rows[1]) ** 2 + p[1, 0] * (cols[1] + rows[0]) ** 2)
    variance = (diag + off - (k - pe * (1 - k)) ** 2) / (n * (1 - pe) ** 2)
    return math.sqrt(max(float(variance), 0.0))


def normal_interval(estimate: float, se: float, lo: float = -1.0, hi: float = 1.0) -> Interval:
    return (max(lo, estimate - Z95 * se), min(hi, estimate + Z95 * se))


@dataclass(frozen=True)
class BootstrapCounts:
    """Resampled 2x2 tables, one entry per resample, human class sizes held fixed."""

    a: FloatArray
    b: FloatArray
    c: FloatArray
    d: FloatArray

    @property
    def size(self) -> int:
        return int(self.a.shape[0])


def stratified_bootstrap(
    a: int, b: int, c: int, d: int, n_boot: int, rng: np.random.Generator
) -> BootstrapCounts:
    """Resample items within each human class, as counts.

    Stratifying by the human label keeps both human classes in every resample, so kappa is
    defined in every one of them (an unstratified resample of a skewed sample can draw only
    human passes). Resampling n items with replacement from a class and counting the judge's
    verdicts is exactly a multinomial draw with the class's observed proportions.
    """

    def draw(first: int, second: int) -> npt.NDArray[np.int64]:
        total = first + second
        if total == 0:
            return np.zeros((n_boot, 2), dtype=np.int64)
        return rng.multinomial(total, [first / total, second / total], size=n_boot)

    human_pass, human_fail = draw(a, b), draw(c, d)  # each row keeps its class's size
    return BootstrapCounts(
        a=human_pass[:, 0].astype(float),
        b=human_pass[:, 1].astype(float),
        c=human_fail[:, 0].astype(float),
        d=human_fail[:, 1].astype(float),
    )


def percentile_interval(values: FloatArray, level: float = 0.95) -> Interval | None:
    """Percentile bootstrap interval over the finite values; ``None`` if there are none."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None
    tail = (1 - level) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    return (float(low), float(high))
