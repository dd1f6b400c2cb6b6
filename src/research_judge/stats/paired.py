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
    from scipy.stats import binomtest

    p = float(binomtest(pass_to_fail, discordant, 0.5).pvalue)
    return PairedTest("mcnemar_exact", n_pairs, min(p, 1.0), discordant)


def signed_rank(differences: Sequence[float]) -> PairedTest:
    """Wilcoxon signed-rank test on per-session differences (current - baseline).

    Zero differences carry no sign, so they are dropped (scipy's "wilcox" zero method); scipy
    picks the exact null distribution for small samples and the normal approximation above 50.
    All-zero differences mean nothing moved: p = 1. No pairs at all: undefined (None).
    """
    n_pairs = len(differences)
    moved = [d for d in differences if d != 0]
    if n_pairs == 0:
        return PairedTest("wilcoxon_signed_rank", 0, None, 0)
    if not moved:
        return PairedTest("wilcoxon_signed_rank", n_pairs, 1.0, 0)
    from scipy.stats import wilcoxon

    p = float(wilcoxon(moved, zero_method="wilcox").pvalue)
    # Never let a NaN from the library escape into JSON: an unusable p is an undefined one.
    return PairedTest(
        "wilcoxon_signed_rank", n_pairs, None if math.isnan(p) else min(p, 1.0), len(moved)
    )
