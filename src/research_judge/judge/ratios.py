"""Ratios computed in code from the judge's yes/no verdicts (contract section 3).

The judge never divides: it answers yes or no, and these few lines do the arithmetic, so the
numbers cannot drift with the judge's mood. A zero denominator is undefined (None), never 0 or 1.
"""

from __future__ import annotations

from collections.abc import Sequence

from .record import Ratios


def compute_ratios(n_references: int, answers: Sequence[tuple[str, bool]]) -> Ratios:
    """Ratios from ``(check, counted_yes)`` pairs over a trajectory of ``n_references``; a zero
    denominator gives None. Reference ratios divide by the trajectory, not the verdicts given."""
    relevant = sum(1 for check, yes in answers if check == "relevant" and yes)
    used = sum(1 for check, yes in answers if check == "used" and yes)
    claims = [yes for check, yes in answers if check == "grounded"]
    return Ratios(
        relevance=_ratio(relevant, n_references),
        utilization=_ratio(used, n_references),
        grounding=_ratio(sum(claims), len(claims)),
    )


def _ratio(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else round(numerator / denominator, 4)
