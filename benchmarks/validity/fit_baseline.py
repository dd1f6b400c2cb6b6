"""Fit the baseline judge's ``grounded`` threshold on ExpertQA's validation split, and check it.

    python benchmarks/validity/fit_baseline.py [--data DIR]

For every answer that carries its evidence text, the baseline's claims (the answer's
substantive sentences) are matched to the experts' claims (``validity.align``) and each gets
the baseline's support score (``baseline.rules.Counter.support``). Every threshold from 0.05 to
0.95 in steps of 0.05 is tried; the one with the highest Cohen's kappa against the experts'
strict per-claim labels (Complete = supported) wins, the lower threshold on a tie. Only the
validation split is read: it is the only split shipped here, and nothing is fitted on the test
split. Prints the sweep and the winner, and exits 1 when the shipped threshold is not the
winner (so a change to the rules that moves the optimum is noticed).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from research_judge.baseline.rules import DEFAULT, Counter  # noqa: E402
from research_judge.judge.reading import ShownReference, ShownSession  # noqa: E402
from research_judge.stats.intervals import kappa_from_counts  # noqa: E402
from validity.align import align  # noqa: E402
from validity.expertqa import Item, read_dir  # noqa: E402
from validity.labels import claim_label  # noqa: E402
from validity.run import DEFAULT_DATA  # noqa: E402

GRID = [round(0.05 * n, 2) for n in range(1, 20)]


def shown(item: Item) -> ShownSession:
    s = item.session
    refs = tuple(
        ShownReference(r["id"], r["content"], r.get("title"), r.get("url")) for r in s["trajectory"]
    )
    return ShownSession("counting", s["question"], s["answer"], refs, None)


def scored_claims(items: list[Item]) -> list[tuple[float, bool]]:
    """(baseline support score, expert says supported) for every matched, labelled claim."""
    out = []
    for item in items:
        counter = Counter(shown(item))
        claims = counter.claims()
        found = align([text for _, text in claims], [c.text for c in item.claims])
        for i, k in found.pairs:
            label = claim_label(item.claims[k], "strict")
            if label is not None:
                out.append((counter.support(claims[i][1]).score, label))
    return out


def sweep(scored: list[tuple[float, bool]]) -> list[tuple[float, float | None, float]]:
    """(threshold, kappa, agreement) for each threshold of ``GRID``."""
    rows = []
    for threshold in GRID:
        a = sum(1 for s, y in scored if y and s >= threshold)
        b = sum(1 for s, y in scored if y and s < threshold)
        c = sum(1 for s, y in scored if not y and s >= threshold)
        d = sum(1 for s, y in scored if not y and s < threshold)
        kappa = float(kappa_from_counts(a, b, c, d))
        rows.append((threshold, None if math.isnan(kappa) else kappa, (a + d) / len(scored)))
    return rows


def winner(rows: list[tuple[float, float | None, float]]) -> tuple[float, float | None, float]:
    """The row with the highest kappa; the lower threshold on a tie."""
    return max(rows, key=lambda r: (r[1] if r[1] is not None else -2.0, -r[0]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = p.parse_args(argv)
    items = read_dir(args.data).items
    scored = scored_claims(items)
    rows = sweep(scored)
    best = winner(rows)
    print(f"{len(scored)} matched claims with a strict expert label, {len(items)} answers")
    print("threshold  kappa    agreement")
    for threshold, kappa, agreement in rows:
        mark = "  <- best" if threshold == best[0] else ""
        shown_kappa = "n/a" if kappa is None else f"{kappa:+.3f}"
        print(f"{threshold:9.2f}  {shown_kappa:<7}  {agreement:.3f}{mark}")
    print(f"fitted grounded = {best[0]:.2f}; shipped = {DEFAULT.grounded:.2f}")
    return 0 if abs(best[0] - DEFAULT.grounded) < 1e-9 else 1


if __name__ == "__main__":
    raise SystemExit(main())
