"""The numpy/stdlib statistics the light verbs use agree with scipy, scikit-learn, statsmodels.

Each routine is checked on random inputs against the library it stands in for, and the light
verbs are checked to run without importing those libraries at all (their import is the cost).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from research_judge.stats.logit import fit_logit
from research_judge.stats.paired import exact_signed_rank_p, mcnemar_exact
from research_judge.stats.tails import (
    average_ranks,
    normal_two_sided_p,
    sign_test_p,
    signed_rank_normal_p,
    spearman,
    student_t_two_sided_p,
)
from research_judge.validate.ordinal import SCALE, confusion_table, weighted_kappa

CASES = 50
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("seed", range(CASES))
def test_confusion_table_and_weighted_kappa_match_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    human = rng.integers(1, 4, n)
    # A judge that mostly agrees, sometimes one off, so kappas cover a real range.
    judge = np.clip(human + rng.choice([-1, 0, 0, 1, 2], n), 1, 3)
    if np.unique(human).size == 1 or np.unique(judge).size == 1:
        human[0], judge[1] = (2 if human[0] != 2 else 3), (2 if judge[1] != 2 else 1)
    table = confusion_table(human, judge)
    assert table.tolist() == confusion_matrix(human, judge, labels=SCALE).tolist()
    for weights in ("linear", "quadratic"):
        ref = cohen_kappa_score(human, judge, labels=SCALE, weights=weights)
        assert weighted_kappa(table, weights) == pytest.approx(ref, rel=1e-12, abs=1e-14)


def _random_logit_problem(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(40, 400))
    z = rng.normal(size=n)
    label = rng.random(n) < 0.5
    columns = [z, label.astype(float)] if seed % 2 else [z]
    eta = -0.5 + rng.normal(0, 1.0) * z + (2.0 * label if seed % 2 else 0.0)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(np.int64)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    return np.column_stack(columns), y


@pytest.mark.parametrize("seed", range(CASES))
def test_logit_matches_statsmodels_and_scikit_learn(seed: int) -> None:
    features, y = _random_logit_problem(seed)
    fit = fit_logit(features, y)
    assert fit is not None
    ref = sm.Logit(y.astype(float), sm.add_constant(features, has_constant="add")).fit(
        disp=0, method="newton", maxiter=200
    )
    assert fit.coef == pytest.approx(ref.params, rel=1e-7, abs=1e-9)
    se = np.sqrt(np.diag(np.linalg.pinv(fit.information)))
    assert se == pytest.approx(ref.bse, rel=1e-6)
    skl = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-10, max_iter=200)
    skl.fit(features, y)
    skl_coef = np.concatenate([skl.intercept_, skl.coef_.ravel()])
    assert fit.coef == pytest.approx(skl_coef, rel=1e-6, abs=1e-8)


def test_logit_on_separated_data_is_no_estimate_or_a_runaway_one() -> None:
    z = np.linspace(-2, 2, 60)
    y = (z > 0).astype(np.int64)
    fit = fit_logit(z[:, None], y)
    # Either Newton gives up or the "estimate" is huge: the caller's guard rejects both.
    assert fit is None or abs(fit.coef[1]) > 10


@pytest.mark.parametrize("seed", range(CASES))
def test_sign_test_matches_scipy_binomtest(seed: int) -> None:
    rng = np.random.default_rng(2000 + seed)
    n = int(rng.integers(1, 400))
    k = int(rng.binomial(n, rng.uniform(0.1, 0.9)))
    ref = stats.binomtest(k, n, 0.5).pvalue
    assert sign_test_p(k, n) == pytest.approx(ref, rel=1e-12)
    assert mcnemar_exact(k, n - k, n + 3).p_value == pytest.approx(ref, rel=1e-12)


def test_sign_test_edges() -> None:
    assert sign_test_p(3, 6) == 1.0
    assert sign_test_p(0, 1) == 1.0
    assert sign_test_p(0, 10) == 2 / 1024  # exact: both one-sided tails of 1/1024
    with pytest.raises(ValueError):
        sign_test_p(5, 3)


@pytest.mark.parametrize("seed", range(CASES))
def test_ranks_and_spearman_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(3000 + seed)
    n = int(rng.integers(10, 300))
    x = np.log1p(rng.integers(1, 60, n).astype(float))  # ties, as in word counts
    y = np.clip((x > np.median(x)) + rng.integers(1, 3, n), 1, 3)
    if np.unique(y).size == 1:
        y[0] = 1 if y[0] != 1 else 2
    assert np.array_equal(average_ranks(x), stats.rankdata(x))
    rho, p = spearman(x, y)
    ref = stats.spearmanr(x, y)
    assert rho == pytest.approx(ref.statistic, rel=1e-12, abs=1e-15)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)


@pytest.mark.parametrize("seed", range(CASES))
def test_signed_rank_exact_p_unchanged_by_the_rank_routine(seed: int) -> None:
    rng = np.random.default_rng(4000 + seed)
    moved = [float(d) for d in rng.choice([-1.0, -0.5, 0.5, 1.0, 1.5], int(rng.integers(1, 40)))]
    # The previous implementation, with scipy's ranks, computed the same distribution.
    values = np.asarray(moved)
    ranks2 = np.rint(2 * stats.rankdata(np.abs(values))).astype(np.int64)
    assert np.array_equal(ranks2, np.rint(2 * average_ranks(np.abs(values))).astype(np.int64))
    assert 0 < exact_signed_rank_p(moved) <= 1


@pytest.mark.parametrize("seed", range(CASES))
def test_normal_and_t_tails_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(5000 + seed)
    z = float(rng.normal(0, 4))
    assert normal_two_sided_p(z) == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-12)
    df = int(rng.integers(1, 3000))
    t = float(rng.normal(0, 6))
    assert student_t_two_sided_p(t, df) == pytest.approx(2 * stats.t.sf(abs(t), df), rel=1e-9)


@pytest.mark.parametrize("seed", range(CASES))
def test_signed_rank_normal_approximation_matches_scipy(seed: int) -> None:
    # Scores move in steps of 0.5 on 1..3 and ratios in small steps: heavy ties, as in compare.
    rng = np.random.default_rng(7000 + seed)
    n = int(rng.integers(1, 600))
    steps = rng.choice([-1.0, -0.5, -0.25, 0.25, 0.5, 1.0], size=n, p=rng.dirichlet(np.ones(6)))
    moved = steps if seed % 2 else steps * rng.random(n)  # odd seeds tied, even ones not
    ref = stats.wilcoxon(moved, zero_method="wilcox", correction=True, method="approx").pvalue
    assert signed_rank_normal_p(moved) == pytest.approx(float(ref), rel=1e-9, abs=1e-300)


def test_signed_rank_normal_approximation_with_nothing_to_rank_is_undefined() -> None:
    assert np.isnan(signed_rank_normal_p([]))


LIGHT_PATHS = """
import json, sys
import numpy as np
from research_judge.results.model import SCORE_NAMES
from research_judge.stats.paired import mcnemar_exact, signed_rank
from research_judge.validate.dataset import Paired
from research_judge.validate.length_bias import length_bias
from research_judge.validate.ordinal import criterion_agreement

rng = np.random.default_rng(0)
n = 200
human = rng.random(n) < 0.5
words = np.round(np.exp(rng.normal(6, 0.5, n)))
judge = human ^ (rng.random(n) < 0.2)
scores = {name: rng.integers(1, 4, n) for name in SCORE_NAMES}
data = Paired([f"s{i}" for i in range(n)], human, judge, words, words * 6, scores, scores, ())
bias = length_bias(data)
kappa = criterion_agreement("fluff", scores["fluff"], np.clip(scores["fluff"] + 1, 1, 3))
tests = [mcnemar_exact(7, 2, 30), signed_rank([0.5, -0.25, 1.0, 0.5, 0.75, 1.5])]
print(json.dumps({
    "measured": [bias.model.p_value is not None, kappa.linear_kappa is not None,
                 all(t.p_value is not None for t in tests),
                 bias.within_class["human_pass"]["judge_pass"]["rho"] is not None],
    "heavy": sorted(m for m in ("scipy.stats", "scipy.special", "sklearn") if m in sys.modules),
}))
"""


def test_light_paths_import_neither_scipy_nor_scikit_learn() -> None:
    # Importing them is most of the light verbs' start-up; a stray import brings it all back.
    out = subprocess.run(
        [sys.executable, "-c", LIGHT_PATHS], capture_output=True, text=True, check=True, cwd=ROOT
    )
    report = json.loads(out.stdout)
    assert report["measured"] == [True, True, True, True]
    assert report["heavy"] == []
