"""Pass/fail statistics against hand-computed and published reference values."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from sklearn.metrics import cohen_kappa_score

from research_judge.validate.agreement import landis_koch, pass_fail_stats
from research_judge.validate.headline import headline


def arrays(a: int, b: int, c: int, d: int) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Human and judge verdict arrays (True = pass) realising the table [[a, b], [c, d]]."""
    human = np.array([True] * (a + b) + [False] * (c + d))
    judge = np.array([True] * a + [False] * b + [True] * c + [False] * d)
    return human, judge


def test_textbook_table() -> None:
    # po = 35/50 = 0.7; pe = (25*30 + 25*20) / 50^2 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    s = pass_fail_stats(*arrays(20, 5, 10, 15), seed=0, n_boot=2000)
    assert s.raw_agreement == pytest.approx(0.7)
    assert s.cohen_kappa == pytest.approx(0.4)
    assert s.table.to_dict() == {
        "human_pass": {"judge_pass": 20, "judge_fail": 5},
        "human_fail": {"judge_pass": 10, "judge_fail": 15},
    }
    assert s.agreement_on_human_pass == pytest.approx(20 / 25)
    assert s.agreement_on_human_fail == pytest.approx(15 / 25)
    assert s.positive_agreement == pytest.approx(40 / 55)
    assert s.negative_agreement == pytest.approx(30 / 45)
    assert s.judge_pass_rate == pytest.approx(0.6)
    assert s.human_pass_rate == pytest.approx(0.5)
    assert s.kappa_band == "fair"


def test_lenient_table_matches_published_figures() -> None:
    s = pass_fail_stats(*arrays(66, 2, 16, 16), seed=0, n_boot=10_000)
    assert s.cohen_kappa == pytest.approx(0.532, abs=5e-4)
    assert s.cohen_kappa_se == pytest.approx(0.092, abs=1e-3)
    assert s.cohen_kappa_ci_analytic is not None
    assert s.cohen_kappa_ci_analytic == pytest.approx((0.35, 0.71), abs=0.006)
    # Exact McNemar by hand: 2 * P(X <= 2), X ~ Bin(18, 1/2) = 2 * (1 + 18 + 153) / 2^18
    assert s.mcnemar is not None
    assert s.mcnemar.p_value == pytest.approx(2 * 172 / 2**18)
    assert s.mcnemar.direction == "lenient"
    assert (s.mcnemar.judge_pass_human_fail, s.mcnemar.judge_fail_human_pass) == (16, 2)
    assert s.kappa_band == "moderate"
    assert s.cohen_kappa_ci_method.startswith("stratified bootstrap")
    assert s.cohen_kappa_ci == s.cohen_kappa_ci_bootstrap
    low, high = s.cohen_kappa_ci or (math.nan, math.nan)
    assert low < 0.532 < high
    assert abs(low - 0.35) < 0.04 and abs(high - 0.71) < 0.04
    assert s.kappa_ci_low_band == landis_koch(low)
    # EvalGen alignment: harmonic mean of 16/32 fails caught and 66/68 passes kept
    assert s.alignment == pytest.approx(2 * 0.5 * (66 / 68) / (0.5 + 66 / 68))
    assert headline(s).startswith("lenient: agrees on 97% of human passes but 50% of human fails")
    assert "p=0.0013" in headline(s)


def test_strict_and_balanced_directions() -> None:
    strict = pass_fail_stats(*arrays(10, 20, 1, 30), seed=0, n_boot=0)
    assert strict.mcnemar is not None and strict.mcnemar.direction == "strict"
    assert headline(strict).startswith("strict:")
    even = pass_fail_stats(*arrays(30, 5, 5, 30), seed=0, n_boot=0)
    assert even.mcnemar is not None and even.mcnemar.direction == "balanced"
    assert even.mcnemar.p_value == pytest.approx(1.0)
    assert headline(even).startswith("no significant lean")


@pytest.mark.parametrize("table", [(20, 5, 10, 15), (66, 2, 16, 16), (3, 9, 14, 1), (50, 0, 1, 2)])
def test_kappa_equals_sklearn(table: tuple[int, int, int, int]) -> None:
    human, judge = arrays(*table)
    s = pass_fail_stats(human, judge, seed=0, n_boot=0)
    assert s.cohen_kappa == pytest.approx(cohen_kappa_score(human, judge))


def test_every_rate_interval_contains_its_estimate() -> None:
    s = pass_fail_stats(*arrays(40, 7, 9, 25), seed=3, n_boot=2000)
    for name in (
        "raw_agreement",
        "agreement_on_human_pass",
        "agreement_on_human_fail",
        "positive_agreement",
        "negative_agreement",
        "judge_pass_rate",
        "human_pass_rate",
        "alignment",
        "cohen_kappa",
    ):
        estimate, ci = getattr(s, name), getattr(s, f"{name}_ci")
        assert ci is not None, name
        assert ci[0] <= estimate <= ci[1], name
        assert 0.02 < ci[1] - ci[0] < 0.5, name  # plausible width for n = 81


def test_judge_that_always_passes_has_null_kappa_with_a_warning() -> None:
    # Contract section 6: kappa is null when one side uses a single label (arithmetic would
    # give 0.0, forced by the data), and the per-class rates show the leniency instead.
    human, _ = arrays(30, 0, 20, 0)
    s = pass_fail_stats(human, np.ones(50, bool), seed=0, n_boot=500)
    assert s.cohen_kappa is None
    assert s.cohen_kappa_ci is None and s.cohen_kappa_se is None
    assert any("judge used a single label" in w for w in s.warnings)
    assert s.agreement_on_human_fail == 0.0
    assert s.alignment == 0.0
    assert s.mcnemar is not None and s.mcnemar.direction == "lenient"
    # Resampling within classes cannot move a unanimous judge: no interval, rather than [x, x].
    assert s.positive_agreement_ci is None and s.alignment_ci is None
    assert any(w.startswith("no bootstrap interval for positive_agreement") for w in s.warnings)


def test_both_sides_single_label_gives_none_and_warnings() -> None:
    s = pass_fail_stats(np.ones(12, bool), np.ones(12, bool), seed=0, n_boot=500)
    assert s.cohen_kappa is None and s.cohen_kappa_ci is None
    assert s.raw_agreement == 1.0
    assert s.agreement_on_human_fail is None and s.negative_agreement is None
    assert s.alignment is None
    assert any("cohen_kappa undefined" in w for w in s.warnings)
    assert any("no human fails" in w for w in s.warnings)
    assert headline(s).startswith("only human passes labelled")


def test_nothing_to_compare() -> None:
    s = pass_fail_stats(np.zeros(0, bool), np.zeros(0, bool), seed=0, n_boot=100)
    assert s.table.n == 0 and s.cohen_kappa is None and s.raw_agreement is None
    assert headline(s).startswith("no labelled session")


def test_bootstrap_is_seeded() -> None:
    one = pass_fail_stats(*arrays(40, 7, 9, 25), seed=11, n_boot=1000)
    two = pass_fail_stats(*arrays(40, 7, 9, 25), seed=11, n_boot=1000)
    other = pass_fail_stats(*arrays(40, 7, 9, 25), seed=12, n_boot=1000)
    assert one.cohen_kappa_ci == two.cohen_kappa_ci
    assert one.cohen_kappa_ci != other.cohen_kappa_ci


def test_without_bootstrap_the_interval_is_analytic() -> None:
    s = pass_fail_stats(*arrays(20, 5, 10, 15), seed=0, n_boot=0)
    assert s.cohen_kappa_ci == s.cohen_kappa_ci_analytic is not None
    assert s.cohen_kappa_ci_method.startswith("analytic")
    assert any("bootstrap disabled" in w for w in s.warnings)


@pytest.mark.parametrize(
    ("kappa", "band"),
    [
        (-0.1, "poor"),
        (0.0, "slight"),
        (0.2, "slight"),
        (0.35, "fair"),
        (0.6, "moderate"),
        (0.61, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
        (None, None),
    ],
)
def test_landis_koch(kappa: float | None, band: str | None) -> None:
    assert landis_koch(kappa) == band
