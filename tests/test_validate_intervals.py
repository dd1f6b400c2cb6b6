"""Interval machinery: Wilson against published values, vectorised kappa against sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from research_judge.stats.intervals import (
    kappa_from_counts,
    kappa_se,
    normal_interval,
    percentile_interval,
    stratified_bootstrap,
    wilson,
)


def expand(a: int, b: int, c: int, d: int) -> tuple[list[int], list[int]]:
    human = [1] * (a + b) + [0] * (c + d)
    judge = [1] * a + [0] * b + [1] * c + [0] * d
    return human, judge


@pytest.mark.parametrize("n", range(1, 60))
def test_wilson_bounds_at_none_and_all_are_exact(n: int) -> None:
    # Computed, they were off by a rounding error that JSON printed as 5.551115123125783e-17.
    assert wilson(0, n)[0] == 0.0  # type: ignore[index]
    assert wilson(n, n)[1] == 1.0  # type: ignore[index]


def test_wilson_published_values() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, table I: 81/263 -> 0.2553-0.3662,
    # 15/148 -> 0.0624-0.1605, 0/20 -> 0-0.1611, 1/29 -> 0.0061-0.1718.
    assert wilson(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson(15, 148) == pytest.approx((0.0624, 0.1605), abs=1e-4)
    assert wilson(0, 20) == pytest.approx((0.0, 0.1611), abs=1e-4)
    assert wilson(1, 29) == pytest.approx((0.0061, 0.1718), abs=1e-4)
    assert wilson(0, 0) is None


def test_vectorised_kappa_matches_sklearn_table_by_table() -> None:
    rng = np.random.default_rng(5)
    tables = rng.integers(0, 30, size=(200, 4))
    tables[:, 0] += 1  # keep both raters using "pass" somewhere...
    tables[:, 3] += 1  # ...and "fail", so every kappa is defined
    vector = kappa_from_counts(*tables.T.astype(float))
    for row, value in zip(tables, vector, strict=True):
        h, j = expand(*(int(x) for x in row))
        assert value == pytest.approx(cohen_kappa_score(h, j))


def test_vectorised_kappa_marks_undefined_tables() -> None:
    out = kappa_from_counts(np.array([5.0, 0, 0]), np.zeros(3), np.zeros(3), np.array([0.0, 7, 0]))
    assert np.isnan(out[0]) and np.isnan(out[1]) and np.isnan(out[2])


def test_standard_errors() -> None:
    # Fleiss-Cohen-Everitt SE for the lenient table. The first-order shortcut
    # sqrt(po (1 - po) / (n (1 - pe)^2)) gives 0.100 here; the full form must not fall back to it.
    shortcut = np.sqrt(0.82 * 0.18 / 100) / (1 - 0.6152)  # po = 0.82, pe = 0.6152
    se = kappa_se(66, 2, 16, 16)
    assert se == pytest.approx(0.0917, abs=1e-4)
    assert se is not None and se < shortcut - 0.005
    assert kappa_se(5, 0, 0, 0) is None and kappa_se(0, 0, 0, 0) is None


def test_stratified_bootstrap_keeps_class_sizes() -> None:
    boot = stratified_bootstrap(66, 2, 16, 16, 5000, np.random.default_rng(0))
    assert boot.size == 5000
    assert np.all(boot.a + boot.b == 68) and np.all(boot.c + boot.d == 32)
    # Resampled proportions centre on the observed ones.
    assert boot.a.mean() / 68 == pytest.approx(66 / 68, abs=0.005)
    assert boot.c.mean() / 32 == pytest.approx(0.5, abs=0.01)


def test_bootstrap_matches_analytic_at_large_n() -> None:
    a, b, c, d = 660, 20, 160, 160  # the lenient table scaled to n = 1000
    k = float(kappa_from_counts(a, b, c, d))
    se = kappa_se(a, b, c, d)
    assert se is not None
    boot = stratified_bootstrap(a, b, c, d, 20_000, np.random.default_rng(1))
    ci = percentile_interval(kappa_from_counts(boot.a, boot.b, boot.c, boot.d))
    analytic = normal_interval(k, se)
    assert ci is not None
    assert ci[0] == pytest.approx(analytic[0], abs=0.015)
    assert ci[1] == pytest.approx(analytic[1], abs=0.015)


def test_percentile_interval_ignores_undefined_draws() -> None:
    values = np.array([np.nan, *np.linspace(0, 1, 101)])
    assert percentile_interval(values) == pytest.approx((0.025, 0.975))
    assert percentile_interval(np.array([np.nan])) is None
