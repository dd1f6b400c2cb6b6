"""The exact sign test's tail, summed term by term, is the same integer sum as summing
``math.comb`` afresh for every term: equal floats on every (k, n) tried."""

from __future__ import annotations

import math
import random
from fractions import Fraction

from research_judge.stats.tails import sign_test_p


def _direct(k: int, n: int) -> float:
    low = min(k, n - k)
    if 2 * low == n:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(low + 1))
    return min(1.0, float(Fraction(tail, 2 ** (n - 1))))


def test_the_running_terms_give_the_direct_sum_exactly() -> None:
    rng = random.Random(7)
    cases = [(k, n) for n in range(1, 80) for k in range(n + 1)]
    cases += [(rng.randint(0, n), n) for n in (rng.randint(80, 2500) for _ in range(200))]
    cases += [(n // 2 - 40, n) for n in (5001, 5002)]  # near the middle: the longest sums
    for k, n in cases:
        assert sign_test_p(k, n) == _direct(k, n), (k, n)
