"""Tail probabilities and ranks computed without scipy.

``scipy.stats`` costs close to a second of start-up to import, more than the light verbs spend
on everything else. The few quantities they need have short exact or well-conditioned forms:
the sign test is a sum of binomial coefficients over integers, the normal tail is ``erfc``, and
the Student t tail is a regularised incomplete beta evaluated by its continued fraction, which
keeps relative accuracy far into the tail. The tests hold each one to scipy on random inputs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

_CF_EPS = 1e-16
_CF_TINY = 1e-300
_CF_MAX_TERMS = 10_000


# Up to this many trials the sign test's tail is a sum of integers (correctly rounded); past it,
# the same tail from the incomplete beta function, which keeps ~1e-14 relative accuracy and
# costs the same at a million trials as at a thousand.
SIGN_TEST_INTEGER_MAX = 5000


def sign_test_p(successes: int, n: int) -> float:
    """Exact two-sided binomial test at p = 0.5: 2 * P(X <= min(k, n - k)), capped at 1.

    The distribution is symmetric, so "as or less likely than observed" is both tails beyond the
    smaller count. Up to ``SIGN_TEST_INTEGER_MAX`` trials it is summed over integers and divided
    once, so the float is correctly rounded; beyond, P(X <= k) = I_{1/2}(n - k, k + 1).
    """
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"sign test needs 0 <= successes <= n and n > 0, got {successes}, {n}")
    low = min(successes, n - successes)
    if 2 * low == n:
        return 1.0
    if n > SIGN_TEST_INTEGER_MAX:
        return min(1.0, 2.0 * regularized_beta(0.5, n - low, low + 1))
    term, tail = 1, 1  # C(n, 0)
    for i in range(low):
        term = term * (n - i) // (i + 1)  # C(n, i + 1), exact in integers
        tail += term
    return min(1.0, float(Fraction(tail, 2 ** (n - 1))))


def normal_two_sided_p(z: float) -> float:
    """2 * P(Z > |z|) for a standard normal; erfc keeps the tail's relative precision."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def student_t_two_sided_p(t: float, df: float) -> float:
    """2 * P(T > |t|) for Student's t with ``df`` degrees of freedom: I_x(df/2, 1/2)."""
    if math.isnan(t) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 0.0
    return regularized_beta(df / (df + t * t), df / 2.0, 0.5)


def regularized_beta(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function I_x(a, b) for 0 <= x <= 1, a, b > 0.

    The continued fraction converges fast for x below (a + 1) / (a + b + 2); above it the
    symmetry I_x(a, b) = 1 - I_{1-x}(b, a) is used instead.
    """
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - regularized_beta(1.0 - x, b, a)
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    return math.exp(log_front) * _beta_fraction(x, a, b) / a


def _beta_fraction(x: float, a: float, b: float) -> float:
    # Modified Lentz evaluation of 1 / (1 + d1 / (1 + d2 / (1 + ...))), the even and odd
    # coefficients d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)) and
    # d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    def guard(v: float) -> float:
        return _CF_TINY if abs(v) < _CF_TINY else v

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    result = d
    for m in range(1, _CF_MAX_TERMS):
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        result *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        step = d * c
        result *= step
        if abs(step - 1.0) < _CF_EPS:
            return result
    raise ArithmeticError(f"incomplete beta fraction did not converge (x={x}, a={a}, b={b})")


def signed_rank_normal_p(moved: npt.ArrayLike) -> float:
    """Two-sided p of the Wilcoxon signed-rank test by the normal approximation, with the tie
    and continuity corrections (scipy's ``wilcoxon(..., correction=True, method="approx")``).

    ``moved``: the non-zero differences. The positive-rank sum T has mean n(n+1)/4 and variance
    (n(n+1)(2n+1) - sum over tie groups of t(t^2 - 1)/2) / 24; |T - mean| is shrunk by 1/2.
    Undefined (NaN) when every rank is tied away (variance 0) or nothing moved.
    """
    values = np.asarray(moved, dtype=np.float64).ravel()
    n = values.size
    if n == 0:
        return math.nan
    ranks = average_ranks(np.abs(values))
    r_plus = float(ranks[values > 0].sum())
    _, ties = np.unique(np.abs(values), return_counts=True)
    variance = n * (n + 1.0) * (2.0 * n + 1.0) - 0.5 * float((ties * (ties * ties - 1.0)).sum())
    if variance <= 0:
        return math.nan
    d = r_plus - n * (n + 1.0) / 4.0
    d -= math.copysign(0.5, d) if d != 0 else 0.0
    return min(1.0, normal_two_sided_p(d / math.sqrt(variance / 24.0)))


def average_ranks(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Ranks 1..n, ties sharing the mean of the ranks they span (scipy's ``method="average"``)."""
    a = np.asarray(values, dtype=np.float64).ravel()
    order = np.argsort(a, kind="mergesort")
    ordered = a[order]
    starts_group = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    starts = np.flatnonzero(starts_group)
    ends = np.append(starts[1:], a.size)
    ranks = np.empty(a.size, dtype=np.float64)
    ranks[order] = ((starts + 1 + ends) / 2.0)[np.cumsum(starts_group) - 1]
    return ranks


def spearman(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[float, float]:
    """Spearman's rho and its two-sided p from the t approximation, as scipy's ``spearmanr``.

    The caller rules out constant inputs, where the correlation is undefined.
    """
    rx, ry = average_ranks(x), average_ranks(y)
    rho = float(np.asarray(np.corrcoef(np.vstack([rx, ry])))[1, 0])
    dof = rx.size - 2
    if abs(rho) >= 1.0:
        return rho, 0.0
    t = rho * math.sqrt(max(dof / ((rho + 1.0) * (1.0 - rho)), 0.0))
    return rho, student_t_two_sided_p(t, dof)
