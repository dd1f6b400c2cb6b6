"""Fleiss' kappa for K samples of the same judge on each item, with a bootstrap interval.

Items are rows of a count table ``n[i, j]``: how many of item i's K samples fell in category j.
Every row sums to the same K. Kappa is computed from per-item agreement and category shares, so
resampling items is one matrix product per statistic for all resamples at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .intervals import Interval, percentile_interval


@dataclass(frozen=True)
class FleissKappa:
    kappa: float | None
    ci: Interval | None
    n_items: int
    k: int
    undefined: str | None = None  # why kappa (or its interval) is None
    # Resamples without a kappa (every sample in one category), left out of the interval.
    undefined_resamples: int = 0


# Resamples with an undefined kappa may be left out of a 95% percentile interval only while they
# could not fill a whole tail by themselves.
MAX_UNDEFINED_SHARE = 0.025


def fleiss_kappa(
    counts: npt.NDArray[np.int64], *, n_boot: int, rng: np.random.Generator
) -> FleissKappa:
    n_items = int(counts.shape[0])
    k = int(counts[0].sum()) if n_items else 0
    if n_items == 0:
        return FleissKappa(None, None, 0, 0, "no item with all its samples graded")
    if k < 2:
        return FleissKappa(None, None, n_items, k, "fewer than 2 samples per item")
    table = counts.astype(float)
    agreement = (np.sum(table * table, axis=1) - k) / (k * (k - 1))  # P_i per item
    kappa = _kappa(agreement.mean(), table.sum(axis=0) / (n_items * k))
    if kappa is None:
        reason = "every sample of every item fell in the same category (chance agreement is 1)"
        return FleissKappa(None, None, n_items, k, reason)
    if n_boot <= 0:
        return FleissKappa(kappa, None, n_items, k, "bootstrap disabled")
    weights = rng.multinomial(n_items, np.full(n_items, 1 / n_items), size=n_boot) / n_items
    p_bar = weights @ agreement
    shares = (weights @ table) / k
    p_e = np.sum(shares * shares, axis=1)
    # A resample whose items all fell in one category has no kappa (chance agreement 1). Those
    # resamples are the most agreeing ones, so leaving them out silently would cut off the top
    # of the interval (in a near-unanimous run a third of them, the top then equal to the
    # estimate). Up to a 2.5% tail they are counted and said; beyond, no interval.
    one_category = np.max(shares, axis=1) >= 1.0 - 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(one_category, np.nan, (p_bar - p_e) / (1 - p_e))
    dropped = int(np.sum(one_category))
    if dropped > MAX_UNDEFINED_SHARE * n_boot:
        reason = (
            f"{dropped} of {n_boot} resamples ({dropped / n_boot:.0%}) drew only items whose "
            "samples all fell in one category, where kappa is undefined; an interval over the "
            "rest would hide how high agreement can be, so none is given"
        )
        return FleissKappa(kappa, None, n_items, k, reason, dropped)
    ci = percentile_interval(values)
    if ci is not None and ci[1] - ci[0] <= 1e-12:
        return FleissKappa(kappa, None, n_items, k, "every resample gave the same kappa", dropped)
    return FleissKappa(kappa, ci, n_items, k, None, dropped)


def _kappa(p_bar: float, shares: npt.NDArray[np.float64]) -> float | None:
    p_e = float(np.sum(shares * shares))
    # p_e is 1 exactly when one category holds every sample; shares are counts / (n K), so an
    # exact comparison on the largest share is safe.
    if float(shares.max()) == 1.0:
        return None
    return float((p_bar - p_e) / (1 - p_e))
