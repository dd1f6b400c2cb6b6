"""Length bias: detected when the judge rewards length beyond the human label, not otherwise."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from scipy.optimize import minimize
from scipy.stats import spearmanr

from research_judge.results.model import SCORE_NAMES
from research_judge.validate.dataset import Paired
from research_judge.validate.length_bias import length_bias


def paired(
    human: npt.NDArray[np.bool_],
    judge: npt.NDArray[np.bool_],
    words: npt.NDArray[np.float64],
    fluff: npt.NDArray[np.int64] | None = None,
) -> Paired:
    n = human.size
    scores = {name: np.zeros(n, np.int64) for name in SCORE_NAMES}
    if fluff is not None:
        scores["fluff"] = fluff
    return Paired(
        session_ids=[f"s{i}" for i in range(n)],
        human_pass=human,
        judge_pass=judge,
        words=words,
        chars=words * 6,
        judge_scores=scores,
        human_scores={name: np.zeros(n, np.int64) for name in SCORE_NAMES},
        label_criteria=(),
    )


def synthetic(length_effect: float, seed: int = 7, n: int = 400) -> Paired:
    """Humans pass longer answers more often; the judge follows the human label, plus length."""
    rng = np.random.default_rng(seed)
    human = rng.random(n) < 0.6
    log_words = rng.normal(6.0 + 0.5 * human, 0.5)
    z = (log_words - log_words.mean()) / log_words.std()
    logit = -1.0 + 3.0 * human + length_effect * z
    judge = rng.random(n) < 1 / (1 + np.exp(-logit))
    return paired(human, judge, np.round(np.exp(log_words)))


def test_length_biased_judge_is_detected() -> None:
    out = length_bias(synthetic(length_effect=0.9))
    assert out.model is not None and out.model.odds_ratio_ci is not None
    assert out.model.odds_ratio_ci[0] > 1
    assert out.model.odds_ratio_per_sd is not None and out.model.odds_ratio_per_sd > 1.5
    assert out.model.scope.startswith("all sessions")
    assert out.reading.startswith("longer answers pass more often")
    assert out.unit == "words"


def test_unbiased_judge_is_not_flagged_although_length_tracks_its_verdict() -> None:
    data = synthetic(length_effect=0.0)
    # Confounding is real here: length correlates with the judge's verdict through the human
    # label, which is exactly why the model must hold the label fixed.
    assert spearmanr(data.words, data.judge_pass)[0] > 0.2
    out = length_bias(data)
    assert out.model is not None and out.model.odds_ratio_ci is not None
    low, high = out.model.odds_ratio_ci
    assert low < 1 < high
    assert out.reading.startswith("no length effect detected")


def test_wald_interval_matches_an_independent_fit() -> None:
    # Refit by direct likelihood maximisation and a finite-difference Hessian: a different route
    # to the same estimate and standard error.
    data = synthetic(length_effect=0.6, seed=3)
    out = length_bias(data)
    x = np.log1p(data.words)
    design = np.column_stack([np.ones(x.size), (x - x.mean()) / x.std(), data.human_pass])
    y = data.judge_pass.astype(float)

    def nll(beta: npt.NDArray[np.float64]) -> float:
        eta = design @ beta
        return float(np.sum(np.logaddexp(0, eta) - y * eta))

    beta = minimize(nll, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
    h = 1e-4
    hess = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            e_i, e_j = np.eye(3)[i] * h, np.eye(3)[j] * h
            hess[i, j] = (
                nll(beta + e_i + e_j)
                - nll(beta + e_i - e_j)
                - nll(beta - e_i + e_j)
                + nll(beta - e_i - e_j)
            ) / (4 * h * h)
    se = np.sqrt(np.linalg.inv(hess)[1, 1])
    assert out.model is not None
    assert out.model.coefficient == pytest.approx(beta[1], abs=1e-4)
    assert out.model.standard_error == pytest.approx(se, rel=1e-3)


def test_perfect_separation_by_length_gives_none_with_a_reason() -> None:
    rng = np.random.default_rng(0)
    words = rng.integers(50, 2000, 120).astype(float)
    human = rng.random(120) < 0.5
    judge = words > np.median(words)
    out = length_bias(paired(human, judge, words))
    assert out.model is not None and out.model.odds_ratio_per_sd is None
    assert "separation" in out.model.note
    assert any("separation" in w for w in out.warnings)


def test_judge_that_passes_every_human_pass_is_fitted_on_human_fails() -> None:
    data = synthetic(length_effect=1.0, seed=2, n=600)
    judge = data.judge_pass | data.human_pass  # quasi-separation by the human label
    out = length_bias(paired(data.human_pass, judge, data.words))
    assert out.model is not None
    assert out.model.scope == "human fails only (the judge gave every human pass the same verdict)"
    assert out.model.n == int((~data.human_pass).sum())
    assert out.model.odds_ratio_ci is not None and out.model.odds_ratio_ci[0] > 1


def test_too_few_sessions_says_so() -> None:
    data = synthetic(length_effect=1.0, n=16)
    out = length_bias(data)
    assert out.model is not None and out.model.odds_ratio_per_sd is None
    assert out.model.note.startswith("n too small to tell")
    assert out.reading.startswith("not measured: n too small to tell")
    fails = out.within_class["human_fail"]["judge_pass"]
    assert fails["rho"] is None and "n too small" in str(fails["note"])


def test_within_class_spearman_reports_scores_too() -> None:
    data = synthetic(length_effect=0.0, n=300)
    rng = np.random.default_rng(4)
    ranks = np.argsort(np.argsort(data.words)) / data.n
    fluff = np.clip(1 + (ranks * 3).astype(np.int64) + (rng.random(data.n) < 0.1), 1, 3)
    out = length_bias(paired(data.human_pass, data.judge_pass, data.words, fluff))
    for cls in ("human_pass", "human_fail"):
        entry = out.within_class[cls]["judge_fluff"]
        assert isinstance(entry["rho"], float) and entry["rho"] > 0.7
        assert "judge_effectiveness" not in out.within_class[cls]  # no judge scores given


def test_no_lengths_in_results() -> None:
    data = synthetic(length_effect=0.0, n=50)
    out = length_bias(paired(data.human_pass, data.judge_pass, np.zeros(50)))
    assert out.unit is None and out.model is None
    assert any("answer_stats" in w for w in out.warnings)
    assert out.to_dict()["odds_ratio_per_sd"] is None


def test_chars_are_used_when_words_are_missing() -> None:
    data = synthetic(length_effect=0.9)
    no_words = Paired(**{**data.__dict__, "words": np.zeros(data.n)})
    out = length_bias(no_words)
    assert out.unit == "chars"
    assert out.model is not None and out.model.odds_ratio_ci is not None
    assert out.model.odds_ratio_ci[0] > 1


def _statsmodels_or(z: npt.NDArray[np.float64], y: npt.NDArray[np.bool_], *extra: object) -> tuple:
    import statsmodels.api as sm

    design = sm.add_constant(np.column_stack([z, *extra]) if extra else z[:, None])
    fit = sm.Logit(y.astype(float), design).fit(disp=0, method="newton", maxiter=200)
    low, high = np.exp(fit.conf_int()[1])
    return float(np.exp(fit.params[1])), (float(low), float(high))


def test_lenient_judge_passing_every_human_fail_is_fitted_on_the_class_that_varies() -> None:
    # The judge passes every human fail; among human passes it passes longer answers more often.
    rng = np.random.default_rng(11)
    n = 300
    human = rng.random(n) < 0.5
    log_words = rng.normal(6.0, 0.6, n)
    z_all = (log_words - log_words.mean()) / log_words.std()
    judge = ~human | (rng.random(n) < 1 / (1 + np.exp(-(0.3 + 1.0 * z_all))))
    out = length_bias(paired(human, judge, np.expm1(log_words)))
    assert out.model is not None and out.model.odds_ratio_per_sd is not None, out.reading
    # The scope names the class the judge did not vary on in plain words.
    assert out.model.scope == (
        "human passes only (the judge gave every human fail the same verdict)"
    )
    assert out.model.n == int(human.sum())
    ref_or, ref_ci = _statsmodels_or(z_all[human], judge[human])
    assert out.model.odds_ratio_per_sd == pytest.approx(ref_or, rel=1e-5)
    assert out.model.odds_ratio_ci == pytest.approx(ref_ci, rel=1e-4)
    assert out.reading.startswith("longer answers pass more often")


def test_near_perfect_judge_still_gets_its_length_odds_ratio() -> None:
    # One disagreement each way in 400: the human-label coefficient is large (about 10.6) but
    # finite, the length one ordinary; only a guard on the wrong coefficient calls it separation.
    rng = np.random.default_rng(0)
    n = 400
    human = rng.random(n) < 0.5
    log_words = rng.normal(6.0, 0.6, n)
    judge = human.copy()
    judge[rng.choice(np.flatnonzero(human), 1)] = False
    judge[rng.choice(np.flatnonzero(~human), 1)] = True
    out = length_bias(paired(human, judge, np.expm1(log_words)))
    assert out.model is not None and out.model.odds_ratio_per_sd is not None, out.reading
    z_all = (log_words - log_words.mean()) / log_words.std()
    ref_or, ref_ci = _statsmodels_or(z_all, judge, human.astype(float))
    assert out.model.odds_ratio_per_sd == pytest.approx(ref_or, rel=1e-3)
    assert out.model.odds_ratio_ci == pytest.approx(ref_ci, rel=1e-3)


def test_the_reported_sd_is_the_unit_of_the_odds_ratio() -> None:
    data = synthetic(length_effect=1.0, seed=2, n=600)
    judge = data.judge_pass | data.human_pass  # fitted on human fails only
    out = length_bias(paired(data.human_pass, judge, data.words))
    x = np.log1p(data.words)
    assert out.sd_log_length == pytest.approx(float(x.std()))
    fails = ~data.human_pass
    ref_or, _ = _statsmodels_or((x[fails] - x.mean()) / x.std(), judge[fails])
    assert out.model is not None and out.model.odds_ratio_per_sd == pytest.approx(ref_or, rel=1e-5)


def test_equal_length_answers_are_not_read_as_length_predicting_the_verdict() -> None:
    import warnings

    rng = np.random.default_rng(1)
    human = rng.random(80) < 0.5
    judge = rng.random(80) < 0.6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no library warning either
        out = length_bias(paired(human, judge, np.full(80, 37.0)))
    assert out.model is not None and out.model.odds_ratio_per_sd is None
    assert "same length" in out.model.note
    assert "predicts" not in out.reading and "separation" not in out.reading
