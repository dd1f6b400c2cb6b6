"""Validation statistics at their edges, each against an independent reference.

References: scikit-learn's cohen_kappa_score, statsmodels' cohens_kappa (whose asymptotic SE is
the same Fleiss-Cohen-Everitt formula), and hand-derived values.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from research_judge.stats.intervals import wilson, wilson_at_rate
from research_judge.validate.agreement import pass_fail_stats
from research_judge.validate.guidance import guidance, items_for_rate
from research_judge.validate.ordinal import criterion_agreement


def arrays(a: int, b: int, c: int, d: int) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    human = np.array([True] * (a + b) + [False] * (c + d))
    judge = np.array([True] * a + [False] * b + [True] * c + [False] * d)
    return human, judge


@pytest.mark.parametrize(
    ("table", "kappa"),
    [((1, 0, 0, 1), 1.0), ((60, 0, 0, 40), 1.0), ((0, 5, 5, 0), -1.0), ((0, 1, 1, 0), -1.0)],
)
def test_no_zero_width_kappa_interval_at_perfect_agreement_or_disagreement(
    table: tuple[int, int, int, int], kappa: float
) -> None:
    a, b, c, d = table
    human, judge = arrays(*table)
    ref = cohens_kappa(np.array(table).reshape(2, 2))
    # The defect, in the reference: the analytic SE is 0, so a normal interval has zero width.
    assert ref.std_kappa == pytest.approx(0.0, abs=1e-12)
    s = pass_fail_stats(human, judge, seed=0, n_boot=2000)
    assert s.cohen_kappa == pytest.approx(cohen_kappa_score(human, judge)) == kappa
    assert s.cohen_kappa_ci_analytic is None and s.cohen_kappa_ci_bootstrap is None
    assert s.cohen_kappa_boundary is not None and s.cohen_kappa_ci_method.startswith("boundary")
    # By hand: the Wilson interval of 0 or n agreements out of n is [0, z^2 / (n + z^2)] or
    # [n / (n + z^2), 1]; kappa = (po - pe) / (1 - pe) at the observed pass rates.
    n, z2 = a + b + c + d, 1.959963984540054**2
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / n**2
    po = (n / (n + z2), 1.0) if kappa == 1.0 else (0.0, z2 / (n + z2))
    expected = tuple((p - pe) / (1 - pe) for p in po)
    assert s.cohen_kappa_ci == pytest.approx(expected)
    low, high = s.cohen_kappa_ci or (0, 0)
    assert high - low > 0.05  # never zero width
    g = guidance(s)
    assert g.labels_needed_for_kappa is None
    assert g.half_widths["cohen_kappa_analytic"] is None
    assert not any("about 0" in line for line in g.lines)
    assert any("sits on a boundary" in line for line in g.lines)


def test_two_agreeing_labels_do_not_make_kappa_look_certain() -> None:
    s = pass_fail_stats(*arrays(1, 0, 0, 1), seed=0, n_boot=2000)
    assert s.cohen_kappa_ci is not None
    assert s.cohen_kappa_ci[0] < 0  # chance agreement is not ruled out by 2 labels
    assert s.kappa_ci_low_band == "poor"


def test_kappa_at_n_250000_is_not_mistaken_for_undefined() -> None:
    # One human fail and one judge fail among 250,000: chance agreement is 1 - 8e-6, which
    # np.isclose calls 1, but both raters used both labels and kappa is defined (slightly < 0).
    human, judge = arrays(249_998, 1, 1, 0)
    s = pass_fail_stats(human, judge, seed=0, n_boot=200)
    assert s.cohen_kappa is not None and s.cohen_kappa_undefined is None
    assert s.cohen_kappa == pytest.approx(cohen_kappa_score(human, judge), rel=1e-9)
    ref = cohens_kappa(np.array([[249_998, 1], [1, 0]]))
    assert s.cohen_kappa_se == pytest.approx(ref.std_kappa, rel=1e-6)


def test_a_large_table_matches_statsmodels_interval() -> None:
    table = (249_994, 2, 1, 3)
    s = pass_fail_stats(*arrays(*table), seed=0, n_boot=0)
    ref = cohens_kappa(np.array(table).reshape(2, 2))
    assert s.cohen_kappa == pytest.approx(ref.kappa, rel=1e-9)
    # Same SE; the report clips the normal interval to kappa's range [-1, 1].
    assert s.cohen_kappa_se == pytest.approx(ref.std_kappa, rel=1e-6)
    assert s.cohen_kappa_ci_analytic == pytest.approx((ref.kappa_low, min(ref.kappa_upp, 1.0)))


def test_withheld_bootstrap_interval_gives_the_true_reason() -> None:
    # Nobody-both-pass: the judge is NOT unanimous within the human classes, but positive
    # agreement 2a / (2a + b + c) is 0 in every resample because a = 0.
    s = pass_fail_stats(*arrays(0, 5, 3, 10), seed=0, n_boot=2000)
    assert s.positive_agreement == 0.0 and s.positive_agreement_ci is None
    withheld = [w for w in s.warnings if w.startswith("no bootstrap interval")]
    assert withheld and all("each human class" not in w for w in withheld)
    assert any("positive_agreement" in w and "both the judge and the humans" in w for w in withheld)
    assert s.cohen_kappa_ci_bootstrap is not None  # kappa itself does vary


@pytest.mark.parametrize("table", [(66, 2, 16, 16), (20, 5, 10, 15), (9, 1, 2, 8), (40, 0, 3, 7)])
def test_guidance_agrees_with_the_wilson_interval_it_sits_beside(
    table: tuple[int, int, int, int],
) -> None:
    a, b, c, d = table
    s = pass_fail_stats(*arrays(*table), seed=0, n_boot=0)
    g = guidance(s)
    for name, agree, total, need in (
        ("human passes", a, a + b, g.human_passes_needed),
        ("human fails", d, c + d, g.human_fails_needed),
    ):
        shown = wilson(agree, total)
        assert shown is not None
        enough = (shown[1] - shown[0]) / 2 <= 0.10
        line = next(x for x in g.lines if x.startswith(f"agreement on {name}"))
        assert line.endswith("(enough)") == enough, line
        assert (total >= need) == enough
        assert items_for_rate(agree / total) == need


def test_items_for_rate_hand_values() -> None:
    # Wilson at p = 0.5: 93 items give a half-width of 0.0994, 92 give 0.1001.
    lo93, hi93 = wilson_at_rate(0.5, 93)
    lo92, hi92 = wilson_at_rate(0.5, 92)
    assert (hi93 - lo93) / 2 <= 0.10 < (hi92 - lo92) / 2
    assert items_for_rate(0.5) == 93 and items_for_rate(None) == 93
    # At p = 1 the Wilson half-width is z^2 / (2 (n + z^2)): <= 0.10 from n = 16.
    assert items_for_rate(1.0) == 16


def test_weighted_kappa_is_null_where_the_pass_fail_kappa_would_be() -> None:
    human = np.array([1, 2, 3, 2, 3, 1, 2], dtype=np.int64)
    judge = np.full(7, 3, dtype=np.int64)  # the judge used a single score
    assert cohen_kappa_score(human, judge, labels=[1, 2, 3], weights="linear") == 0.0
    c = criterion_agreement("fluff", human, judge)
    assert c.linear_kappa is None and c.quadratic_kappa is None
    assert any(
        "weighted kappa undefined" in w and "judge used a single score" in w for w in c.warnings
    )
    assert c.exact_agreement == pytest.approx(2 / 7)  # the rest is still reported


@pytest.mark.parametrize(
    ("table", "opening"),
    [
        # kappa 0.04, interval reaching below 0: the lean is secondary.
        ((12, 8, 9, 7), "do not trust this judge yet: kappa 0.0"),
        ((66, 2, 16, 16), "do not trust this judge to catch failures: it agrees on 50%"),
        ((45, 5, 4, 46), "the judge can be trusted: kappa 0.82"),
        ((40, 10, 8, 42), "trust with care: kappa 0.64"),
        ((10, 0, 0, 10), "trust with care: kappa 1.00 [0.68, 1.00], substantial at worst"),
        ((1, 0, 0, 1), "do not trust this judge yet: kappa 1.00 [-0.32, 1.00]"),
        ((10, 0, 10, 0), "cannot tell whether to trust the judge: kappa undefined"),
    ],
)
def test_headline_says_whether_to_trust_the_judge_before_its_lean(
    table: tuple[int, int, int, int], opening: str
) -> None:
    from research_judge.validate.headline import full_headline

    s = pass_fail_stats(*arrays(*table), seed=0, n_boot=2000)
    text = full_headline(s)
    assert text.startswith(opening), text
    assert ". Lean: " in text


def test_a_weak_judge_with_no_lean_is_not_headlined_as_fine() -> None:
    from research_judge.validate.headline import full_headline

    # kappa 0.18 with an interval reaching below 0: the old headline opened with
    # "no significant lean".
    human, judge = arrays(13, 7, 8, 9)
    s = pass_fail_stats(human, judge, seed=0, n_boot=2000)
    assert s.cohen_kappa == pytest.approx(cohen_kappa_score(human, judge))
    assert s.cohen_kappa_ci is not None and s.cohen_kappa_ci[0] < 0
    text = full_headline(s)
    assert text.startswith("do not trust this judge yet")
    assert text.index("no significant lean") > text.index("chance agreement")
