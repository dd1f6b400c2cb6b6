"""The statistics at their edges, each held to scipy or statsmodels on inputs kept here.

- kappa's interval is monotone across the perfect-agreement boundary on few labels;
- `compare`'s signed-rank test stays exact (the sign test) past 200 moved sessions when every
  change has the same size, and its normal fallback is scipy's;
- the length-bias logistic fit converges on regular data and names separation only when a
  coefficient really diverges;
- `stability`'s Fleiss bootstrap says when resamples with one category were left out.
"""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

from research_judge.stats.fleiss import fleiss_kappa
from research_judge.stats.intervals import Z95, kappa_se
from research_judge.stats.logit import fit_logit
from research_judge.stats.paired import (
    EXACT_MAX_MOVED,
    SIGNED_RANK_EXACT,
    SIGNED_RANK_NORMAL,
    signed_rank,
)
from research_judge.stats.tails import sign_test_p
from research_judge.validate.agreement import pass_fail_stats
from research_judge.validate.headline import trust
from research_judge.validate.length_bias import LengthModel, _fit_logit


def _stats(a: int, b: int, c: int, d: int, n_boot: int = 2000):  # type: ignore[no-untyped-def]
    human = np.array([True] * (a + b) + [False] * (c + d))
    judge = np.array([True] * a + [False] * b + [True] * c + [False] * d)
    return pass_fail_stats(human, judge, seed=0, n_boot=n_boot)


# --- kappa across the perfect-agreement boundary ------------------------------------------------


def test_one_disagreement_never_reads_better_than_none() -> None:
    perfect, one_off = _stats(1, 0, 0, 5), _stats(1, 0, 1, 4)
    assert perfect.cohen_kappa_ci == pytest.approx((-0.41, 1.0), abs=0.005)
    assert one_off.cohen_kappa == pytest.approx(0.571, abs=0.001)
    # The stratified bootstrap alone said [0.18, 1.00] here: "trust with care" from six labels.
    assert one_off.cohen_kappa_ci_bootstrap is not None
    assert one_off.cohen_kappa_ci_bootstrap[0] == pytest.approx(0.18, abs=0.02)
    assert one_off.cohen_kappa_ci is not None and perfect.cohen_kappa_ci is not None
    assert one_off.cohen_kappa_ci[0] <= perfect.cohen_kappa_ci[0]
    assert "capped" in one_off.cohen_kappa_ci_method
    assert trust(one_off).startswith("do not trust this judge yet")
    assert trust(perfect).startswith("do not trust this judge yet")


def test_the_analytic_interval_is_statsmodels() -> None:
    # statsmodels' asymptotic interval for [[1, 0], [1, 4]] is [-0.12, 1.26] before clipping.
    ref = cohens_kappa(np.array([[1, 0], [1, 4]]))
    se = kappa_se(1, 0, 1, 4)
    assert se == pytest.approx(ref.std_kappa, rel=1e-9)
    assert (ref.kappa - Z95 * se, ref.kappa + Z95 * se) == pytest.approx(
        (ref.kappa_low, ref.kappa_upp), rel=1e-6
    )
    assert (ref.kappa_low, ref.kappa_upp) == pytest.approx((-0.12, 1.26), abs=0.005)
    assert _stats(1, 0, 1, 4, n_boot=0).cohen_kappa_ci_analytic == pytest.approx(
        (ref.kappa_low, 1.0)
    )


@pytest.mark.parametrize("n_boot", [0, 400])
def test_intervals_are_monotone_across_the_perfect_agreement_boundary(n_boot: int) -> None:
    # Every perfect table of 2..40 labels against every table one disagreement away from it.
    checked = 0
    for n in range(2, 41):
        for a in range(1, n):
            d = n - a
            perfect = _stats(a, 0, 0, d, n_boot)
            assert perfect.cohen_kappa_ci is not None
            for table in ((a - 1, 1, 0, d), (a - 1, 0, 1, d), (a, 1, 0, d - 1), (a, 0, 1, d - 1)):
                if min(table) < 0:
                    continue
                near = _stats(*table, n_boot=n_boot)
                if near.cohen_kappa_ci is None:
                    continue  # one side used a single label: kappa undefined
                checked += 1
                assert near.cohen_kappa_ci[0] <= perfect.cohen_kappa_ci[0] + 1e-12, table
    assert checked > 2000


def test_far_from_the_boundary_the_interval_is_the_bootstrap() -> None:
    s = _stats(66, 2, 16, 16, n_boot=10_000)
    assert s.cohen_kappa_ci == s.cohen_kappa_ci_bootstrap
    assert "capped" not in s.cohen_kappa_ci_method


# --- compare past 200 moved sessions -----------------------------------------------------------


def test_one_size_moves_past_200_use_the_exact_sign_test() -> None:
    diffs = [-0.5] * 118 + [0.5] * 89  # 207 sessions moved one score level
    test = signed_rank(diffs + [0.0] * 30)
    ref = stats.binomtest(89, 207, 0.5).pvalue
    assert test.name == SIGNED_RANK_EXACT and test.n_moved == 207
    assert test.p_value == pytest.approx(ref, rel=1e-12)
    assert round(test.p_value, 4) == 0.0514
    assert not test.significant
    # What the normal approximation said, and why it was not good enough.
    approx = stats.wilcoxon(diffs, correction=True, method="approx").pvalue
    assert round(approx, 4) == 0.0439


@pytest.mark.parametrize(("k", "n"), [(4_900, 10_000), (49_800, 100_000), (499_000, 1_000_000),
                                      (30, 6_001), (2_480, 5_001)])  # fmt: skip
def test_the_sign_test_stays_exact_for_large_n(k: int, n: int) -> None:
    assert sign_test_p(k, n) == pytest.approx(stats.binomtest(k, n, 0.5).pvalue, rel=1e-9)
    assert sign_test_p(n - k, n) == sign_test_p(k, n)


def test_several_sizes_past_200_use_scipys_normal_approximation() -> None:
    rng = np.random.default_rng(7)
    diffs = list(np.round(rng.choice([-1.0, -0.5, 0.5, 1.0], size=EXACT_MAX_MOVED + 60), 4))
    test = signed_rank(diffs)
    assert test.name == SIGNED_RANK_NORMAL
    ref = stats.wilcoxon(diffs, zero_method="wilcox", correction=True, method="approx").pvalue
    assert test.p_value == pytest.approx(ref, rel=1e-10)


# --- the length-bias fit -----------------------------------------------------------------------


def _length_problem(seed: int) -> tuple[np.ndarray, np.ndarray]:
    # Regular data, as validate fits it: z-scored log lengths and a human label.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 2000))
    log_len = np.log(rng.lognormal(5, 1, n))
    z = (log_len - log_len.mean()) / log_len.std()
    human = rng.random(n) < rng.uniform(0.3, 0.9)
    eta = rng.normal(0, 1) + rng.normal(0, 0.5) * z + rng.uniform(0, 3) * human
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(np.int64)
    return np.column_stack([z, human.astype(float)]), y


# Seeds on which the former absolute-gradient criterion stalled at the optimum and reported
# "likely perfect separation" (7 of these 1,500).
STALLED_BEFORE = [53, 505, 656, 800, 814, 1336, 1470]


def test_no_regular_fit_is_called_separation() -> None:
    named = []
    for seed in range(1500):
        features, y = _length_problem(seed)
        if min(int(y.sum()), int(y.size - y.sum())) < 5:
            continue
        model = LengthModel(scope="all", n=int(y.size))
        _fit_logit(features, y, model)
        if model.odds_ratio_per_sd is None:
            named.append((seed, model.note))
    assert named == []


@pytest.mark.parametrize("seed", STALLED_BEFORE)
def test_fits_that_used_to_stall_are_statsmodels_estimates(seed: int) -> None:
    features, y = _length_problem(seed)
    fit = fit_logit(features, y)
    assert fit is not None and not fit.diverged
    ref = sm.Logit(y.astype(float), sm.add_constant(features, has_constant="add")).fit(
        disp=0, method="newton", maxiter=200
    )
    assert fit.coef == pytest.approx(ref.params, rel=1e-7, abs=1e-9)
    se = np.sqrt(np.diag(np.linalg.pinv(fit.information)))
    assert se == pytest.approx(ref.bse, rel=1e-6)


def test_separation_is_named_when_a_coefficient_diverges() -> None:
    z = np.linspace(-2, 2, 60)
    y = (z > 0).astype(np.int64)
    fit = fit_logit(z[:, None], y)
    assert fit is not None and fit.diverged
    model = LengthModel(scope="all", n=int(y.size))
    _fit_logit(z[:, None], y, model)
    assert model.odds_ratio_per_sd is None
    assert model.note is not None and "separation" in model.note


# --- stability's Fleiss bootstrap --------------------------------------------------------------


def test_fleiss_bootstrap_says_when_one_category_resamples_are_left_out() -> None:
    # 40 sessions, 3 samples each: 38 unanimous passes, 2 split 2-1. A third of the resamples
    # draw no split session at all, where kappa is undefined.
    counts = np.array([[3, 0]] * 38 + [[2, 1]] * 2, dtype=np.int64)
    fk = fleiss_kappa(counts, n_boot=2000, rng=np.random.default_rng(0))
    assert fk.kappa == pytest.approx(-0.0169, abs=1e-4)  # statsmodels fleiss_kappa, below
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    assert fk.kappa == pytest.approx(sm_fleiss(counts), rel=1e-9)
    assert fk.ci is None
    assert fk.undefined_resamples > 0.025 * 2000
    assert fk.undefined is not None and "one category" in fk.undefined


def test_fleiss_bootstrap_counts_a_few_left_out_resamples() -> None:
    # 36 unanimous, 4 split: (36/40)^40 = 1.5% of resamples draw no split session.
    counts = np.array([[3, 0]] * 36 + [[2, 1]] * 4, dtype=np.int64)
    fk = fleiss_kappa(counts, n_boot=2000, rng=np.random.default_rng(0))
    assert fk.ci is not None and fk.undefined is None
    assert 0 < fk.undefined_resamples <= 0.025 * 2000
