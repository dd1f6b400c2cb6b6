"""Per-criterion 1-3 agreement: weighted kappa with the label order made explicit."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from research_judge.validate.ordinal import criterion_agreement

HUMAN = np.array([1, 1, 2, 2, 2, 3, 3, 3, 3, 1, 2, 3])
JUDGE = np.array([1, 2, 2, 3, 2, 3, 3, 2, 3, 3, 1, 3])


def test_table_and_simple_agreements_by_hand() -> None:
    c = criterion_agreement("fluff", HUMAN, JUDGE)
    assert c.n == 12
    assert c.table == [[1, 1, 1], [1, 2, 1], [0, 1, 4]]
    assert c.exact_agreement == pytest.approx(7 / 12)
    assert c.within_one_agreement == pytest.approx(11 / 12)  # only the (1, 3) pair is two apart
    assert c.mean_shift == pytest.approx((JUDGE.sum() - HUMAN.sum()) / 12)
    assert c.mean_shift is not None and c.mean_shift > 0  # the judge scores higher
    ci = c.exact_agreement_ci
    assert ci is not None and ci[0] < 7 / 12 < ci[1]


def test_weighted_kappa_equals_sklearn_with_explicit_labels() -> None:
    c = criterion_agreement("fluff", HUMAN, JUDGE)
    for weights, value in (("linear", c.linear_kappa), ("quadratic", c.quadratic_kappa)):
        assert value == pytest.approx(
            cohen_kappa_score(HUMAN, JUDGE, labels=[1, 2, 3], weights=weights)
        )


def test_string_coded_scores_would_give_a_different_weighted_kappa() -> None:
    # Named levels sort alphabetically (fair < good < poor), scrambling the weights: this is
    # the silent error the explicit numeric labels guard against.
    names = {1: "poor", 2: "fair", 3: "good"}
    as_text = cohen_kappa_score(
        [names[x] for x in HUMAN], [names[x] for x in JUDGE], weights="quadratic"
    )
    ours = criterion_agreement("fluff", HUMAN, JUDGE).quadratic_kappa
    assert ours is not None
    assert abs(ours - as_text) > 0.05


def test_missing_scores_on_either_side_are_dropped() -> None:
    human = np.array([0, 3, 2, 1, 3])  # 0: the human left this cell empty
    judge = np.array([2, 3, 0, 1, 3])  # 0: the judge has no score for this one
    c = criterion_agreement("structure", human, judge)
    assert c.n == 3
    assert c.exact_agreement == 1.0
    assert c.table == [[1, 0, 0], [0, 0, 0], [0, 0, 2]]


def test_undefined_and_degenerate_weighted_kappa() -> None:
    same = criterion_agreement("fluff", np.full(6, 2), np.full(6, 2))
    assert same.linear_kappa is None and same.quadratic_kappa is None
    assert same.exact_agreement == 1.0
    assert any("weighted kappa undefined" in w for w in same.warnings)
    one_sided = criterion_agreement("fluff", np.full(6, 3), np.array([1, 2, 3, 3, 3, 3]))
    # Arithmetic gives 0 here, forced by the data: null, as for the pass/fail kappa.
    assert one_sided.linear_kappa is None and one_sided.quadratic_kappa is None
    assert any("humans used a single score" in w for w in one_sided.warnings)
    empty = criterion_agreement("fluff", np.zeros(4, np.int64), np.array([1, 2, 3, 3]))
    assert empty.n == 0 and empty.exact_agreement is None
    assert any("no session has both" in w for w in empty.warnings)
