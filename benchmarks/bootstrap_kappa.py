"""Benchmark: vectorised stratified bootstrap of Cohen's kappa vs. calling sklearn per resample.

    .venv/bin/python benchmarks/bootstrap_kappa.py [--n 1000] [--resamples 10000] [--loop 200]

The vectorised path is the one `research-judge validate` uses: one multinomial draw per human
class gives every resampled 2x2 table at once, and kappa is evaluated on arrays of counts. The
comparison path resamples item indices within each human class and calls
``sklearn.metrics.cohen_kappa_score`` once per resample, as a straightforward loop would. It
also checks that both paths compute the same kappa for the same resample, and that the two
percentile intervals agree within Monte Carlo noise; the exit status is 1 when either check fails.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import numpy.typing as npt
from sklearn.metrics import cohen_kappa_score

from research_judge.stats.intervals import (
    kappa_from_counts,
    percentile_interval,
    stratified_bootstrap,
)

Array = npt.NDArray[np.int64]


def lenient_sample(n: int) -> tuple[Array, Array]:
    """Human and judge verdicts (1 = pass) in the proportions of the table [[66, 2], [16, 16]]."""
    a, b, c = round(0.66 * n), round(0.02 * n), round(0.16 * n)
    d = n - a - b - c
    human = np.array([1] * (a + b) + [0] * (c + d))
    judge = np.array([1] * a + [0] * b + [1] * c + [0] * d)
    return human, judge


def vectorised(human: Array, judge: Array, resamples: int, seed: int) -> npt.NDArray[np.float64]:
    a = int(np.sum((human == 1) & (judge == 1)))
    b = int(np.sum((human == 1) & (judge == 0)))
    c = int(np.sum((human == 0) & (judge == 1)))
    d = int(np.sum((human == 0) & (judge == 0)))
    boot = stratified_bootstrap(a, b, c, d, resamples, np.random.default_rng(seed))
    return kappa_from_counts(boot.a, boot.b, boot.c, boot.d)


def looped(
    human: Array, judge: Array, resamples: int, seed: int
) -> tuple[list[float], list[float], float]:
    """Per-resample sklearn kappa, the vectorised kappa of the very same resampled tables, and
    the seconds spent on the loop itself (the cross-check is not timed)."""
    rng = np.random.default_rng(seed)
    classes = [np.flatnonzero(human == 1), np.flatnonzero(human == 0)]
    by_sklearn, by_counts, seconds = [], [], 0.0
    for _ in range(resamples):
        start = time.perf_counter()
        idx = np.concatenate([rng.choice(members, size=members.size) for members in classes])
        h, j = human[idx], judge[idx]
        by_sklearn.append(float(cohen_kappa_score(h, j, labels=[1, 0])))
        seconds += time.perf_counter() - start
        counts = [np.sum((h == x) & (j == y)) for x, y in ((1, 1), (1, 0), (0, 1), (0, 0))]
        by_counts.append(float(kappa_from_counts(*counts)))
    return by_sklearn, by_counts, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="labelled sessions (default 1000)")
    parser.add_argument("--resamples", type=int, default=10_000, help="vectorised resamples")
    parser.add_argument("--loop", type=int, default=200, help="resamples for the sklearn loop")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    human, judge = lenient_sample(args.n)
    timings = []
    for repeat in range(5):  # best of five: the first run also pays for imports and caches
        start = time.perf_counter()
        kappas = vectorised(human, judge, args.resamples, args.seed + repeat)
        timings.append(time.perf_counter() - start)
    fast = min(timings)
    fast_ci = percentile_interval(kappas)

    by_sklearn, by_counts, slow = looped(human, judge, args.loop, args.seed)
    slow_ci = percentile_interval(np.array(by_sklearn))
    assert fast_ci is not None and slow_ci is not None

    per_fast, per_slow = fast / args.resamples, slow / args.loop
    same = np.allclose(by_sklearn, by_counts)
    # Percentile ends from a few hundred resamples wander by a few hundredths.
    agree = max(abs(fast_ci[0] - slow_ci[0]), abs(fast_ci[1] - slow_ci[1])) < 0.03
    print(f"n = {args.n} labelled sessions, lenient table proportions")
    print(
        f"vectorised: {args.resamples} resamples in {fast * 1000:.1f} ms "
        f"({per_fast * 1e6:.2f} us/resample), 95% CI [{fast_ci[0]:.3f}, {fast_ci[1]:.3f}]"
    )
    print(
        f"sklearn loop: {args.loop} resamples in {slow * 1000:.1f} ms "
        f"({per_slow * 1e6:.1f} us/resample), 95% CI [{slow_ci[0]:.3f}, {slow_ci[1]:.3f}]"
    )
    print(f"speed-up per resample: {per_slow / per_fast:.0f}x")
    print(f"same kappa on identical resamples: {'yes' if same else 'NO'}")
    print(f"CIs agree within 0.03: {'yes' if agree else 'NO'}")
    return 0 if same and agree else 1


if __name__ == "__main__":
    sys.exit(main())
