"""Paired significance tests for a before/after comparison on the same sessions.

Both runs graded the same sessions, so the right question is whether the per-session changes
lean one way by more than chance would, not whether two independent samples differ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ALPHA = 0.05


@dataclass(frozen=True)
class PairedTest:
    """The outcome of one paired test; ``p_value`` is None when the test is undefined."""

    name: str
    n_pairs: int
    p_value: float | None
    # Pairs that moved at all: discordant verdicts, or non-zero criterion differences. The
    # smallest two-sided p both exact tests can reach is 2 ** (1 - n_moved), so with fewer than
    # six moved pairs no change can be called beyond noise at alpha 0.05.
    n_moved: int

    @property
    def significant(self) -> bool | None:
        return None if self.p_value is None else self.p_value < ALPHA

    @property
    def can_reach_significance(self) -> bool:
        return self.n_moved > 0 and 2.0 ** (1 - self.n_moved) < ALPHA

    def to_dict(self) -> dict[str, object]:
        return {
            "test": self.name,
            "n_pairs": self.n_pairs,
            "n_moved": self.n_moved,
            "p_value": self.p_value,
            "significant": self.significant,
        }


def mcnemar_exact(pass_to_fail: int, fail_to_pass: int, n_pairs: int) -> PairedTest:
    """Exact McNemar test: a two-sided binomial test on the discordant pairs at p = 0.5.

    With no graded pairs the test is undefined (None). With pairs but no discordant ones the
    two runs agree on every session, which is p = 1 by the test's own definition.
    """
    discordant = pass_to_fail + fail_to_pass
    if n_pairs == 0:
        return PairedTest("mcnemar_exact", 0, None, 0)
    if discordant == 0:
        return PairedTest("mcnemar_exact", n_pairs, 1.0, 0)
    from .tails import sign_test_p

    p = sign_test_p(pass_to_fail, discordant)
    return PairedTest("mcnemar_exact", n_pairs, p, discordant)


# Ratios are stored to 4 places and scores map to multiples of 0.5, so differences are compared
# at the stored precision: 0.4 - 0.3 and 0.7 - 0.6 differ as floats but are the same change.
STORED_PLACES = 4
# Up to this many moved pairs the signed-rank null distribution is computed exactly (its cost
# grows with n^3: about 30 ms at 200 on a loaded 2-core machine, 0.6 s at 400). Past it the
# test stays exact whenever every moved difference has the same size (one-level score moves,
# the common case): the signed-rank test is then the sign test, whose exact tail is cheap at any
# n. Only differences of several sizes past the limit fall back to the tie- and
# continuity-corrected normal approximation. That fallback is not "close enough" for one-size
# moves: there the 0.5 correction on the rank sum is a fraction of one rank step, so it corrects
# almost nothing (118 down / 89 up of 207 gives p = 0.0439 against the exact 0.0514).
EXACT_MAX_MOVED = 200
SIGNED_RANK_EXACT = "wilcoxon_signed_rank_exact"
SIGNED_RANK_NORMAL = "wilcoxon_signed_rank_normal"


def signed_rank(differences: Sequence[float]) -> PairedTest:
    """Wilcoxon signed-rank test on per-session differences (current - baseline).

    Differences are first rounded to the stored precision, so equal changes tie. Zero
    differences carry no sign and are dropped. The p-value is exact for up to
    ``EXACT_MAX_MOVED`` moved pairs: the permutation distribution of the signed-rank sum given the
    observed (tied, mid-) ranks, which is what scipy's exact mode cannot do with ties. When every
    difference has the same size it is exactly the sign test, at any number of moved pairs.
    Otherwise, past the limit, the normal approximation with tie and continuity correction
    (``tails.signed_rank_normal_p``). All-zero differences: p = 1; no pairs: None.
    """
    n_pairs = len(differences)
    moved = [r for r in (round(d, STORED_PLACES) for d in differences) if r != 0]
    if n_pairs == 0:
        return PairedTest(SIGNED_RANK_EXACT, 0, None, 0)
    if not moved:
        return PairedTest(SIGNED_RANK_EXACT, n_pairs, 1.0, 0)
    from .tails import sign_test_p

    if len({abs(d) for d in moved}) == 1:
        ups = sum(d > 0 for d in moved)
        return PairedTest(SIGNED_RANK_EXACT, n_pairs, sign_test_p(ups, len(moved)), len(moved))
    if len(moved) <= EXACT_MAX_MOVED:
        return PairedTest(SIGNED_RANK_EXACT, n_pairs, exact_signed_rank_p(moved), len(moved))
    from .tails import signed_rank_normal_p

    p = signed_rank_normal_p(moved)
    # Never let a NaN escape into JSON: an unusable p is an undefined one.
    return PairedTest(
        SIGNED_RANK_NORMAL, n_pairs, None if math.isnan(p) else min(p, 1.0), len(moved)
    )


def exact_signed_rank_p(moved: Sequence[float]) -> float:
    """Two-sided exact p of the signed-rank sum, conditional on the observed tied ranks.

    Under the null each difference is equally likely to be positive or negative, so the sum of
    the positive ranks is a sum of independent coin flips weighted by the ranks. Mid-ranks are
    multiples of 1/2, so doubled they are integers and the distribution is built by convolution
    over integer sums. p = 2 * min(P(T <= t), P(T >= t)), capped at 1 (the distribution is
    symmetric, so this is also P(|T - mean| >= |t - mean|)).
    """
    import numpy as np

    from .tails import average_ranks

    values = np.asarray(moved, dtype=float)
    ranks2 = np.rint(2 * average_ranks(np.abs(values))).astype(np.int64)  # doubled mid-ranks
    observed = int(ranks2[values > 0].sum())
    dist = np.zeros(int(ranks2.sum()) + 1)
    dist[0] = 1.0
    for r in ranks2:
        shifted = np.zeros_like(dist)
        shifted[r:] = dist[: dist.size - r]
        dist = 0.5 * (dist + shifted)
    lower, upper = float(dist[: observed + 1].sum()), float(dist[observed:].sum())
    return min(1.0, 2 * min(lower, upper))
