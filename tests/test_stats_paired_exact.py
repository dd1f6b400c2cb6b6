"""The criteria's paired test at its edges: ties at the stored precision, tied discrete scores.

References are independent of the code under test: scipy's binomial test (the sign test), scipy's
exact signed-rank test where there are no ties, and a brute-force enumeration of every sign
assignment with scipy's permutation_test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest, permutation_test, rankdata, wilcoxon

from research_judge.stats.paired import (
    EXACT_MAX_MOVED,
    SIGNED_RANK_EXACT,
    SIGNED_RANK_NORMAL,
    exact_signed_rank_p,
    signed_rank,
)


def test_equal_changes_stored_as_different_floats_still_tie() -> None:
    # 0.4 - 0.3 > 0.1 > 0.7 - 0.6 as floats: unrounded, the 8 rises outrank the 4 falls and the
    # signed-rank test reports p = 0.012. They are the same change of 0.1 in the stored data.
    diffs = [0.4 - 0.3] * 8 + [-(0.7 - 0.6)] * 4
    assert wilcoxon(diffs).pvalue == pytest.approx(0.0117, abs=1e-4)  # the defect, reproduced
    test = signed_rank(diffs)
    assert test.p_value == pytest.approx(binomtest(4, 12, 0.5).pvalue)
    assert test.p_value == pytest.approx(0.388, abs=5e-4)
    assert test.name == SIGNED_RANK_EXACT and test.n_moved == 12


def test_tied_score_changes_use_the_exact_distribution_not_the_normal_approximation() -> None:
    # 11 of 14 sessions one score step down, 3 up: scipy falls back to an uncorrected normal
    # approximation (p 0.0325, "significant"); the exact answer is the sign test's 0.057.
    diffs = [-0.5] * 11 + [0.5] * 3
    assert wilcoxon(diffs).pvalue == pytest.approx(0.0325, abs=1e-4)
    test = signed_rank(diffs)
    assert test.p_value == pytest.approx(binomtest(3, 14, 0.5).pvalue)
    assert test.p_value == pytest.approx(0.0574, abs=1e-4)
    assert test.significant is False


@pytest.mark.parametrize("seed", range(6))
def test_exact_p_matches_full_enumeration_with_mixed_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 13))
    diffs = rng.choice([-1.0, -0.5, 0.5, 1.0, 0.3333, -0.25], size=n)

    def positive_rank_sum(x: np.ndarray) -> float:
        return float(rankdata(np.abs(x))[x > 0].sum())

    ref = permutation_test(
        (diffs,),
        positive_rank_sum,
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    assert exact_signed_rank_p(list(diffs)) == pytest.approx(ref.pvalue, rel=1e-9)


def test_without_ties_it_is_scipys_exact_signed_rank_test() -> None:
    diffs = [0.01 * k * (-1) ** k for k in range(1, 16)] + [0.2, 0.3]
    ref = wilcoxon(diffs, method="exact").pvalue
    assert signed_rank(diffs).p_value == pytest.approx(ref, rel=1e-9)


def test_large_samples_use_the_tie_corrected_normal_approximation_and_say_so() -> None:
    rng = np.random.default_rng(1)
    diffs = list(rng.choice([-0.5, 0.5, 1.0], size=EXACT_MAX_MOVED + 50))
    test = signed_rank(diffs)
    assert test.name == SIGNED_RANK_NORMAL
    ref = wilcoxon(diffs, correction=True, method="approx").pvalue
    assert test.p_value == pytest.approx(ref)


def test_nothing_moved_and_no_pairs() -> None:
    assert signed_rank([0.0, 1e-9, -2e-7]).p_value == 1.0  # below the stored precision
    assert signed_rank([]).p_value is None
