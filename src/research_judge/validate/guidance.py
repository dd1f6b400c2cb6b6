"""How precise this validation is, and about how many labels would make it precise enough.

Printed with every report: a kappa from 100 labels is known to about +/-0.19, which is the
difference between "moderate" and "substantial", and readers routinely forget that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..stats.intervals import Z95, Interval
from .agreement import PassFailStats

TARGET_HALF_WIDTH = 0.10
MIN_CLASS_ITEMS = 30
RULE_OF_THUMB = (
    "rule of thumb: at n = 100, kappa is known to about +/-0.19; +/-0.10 needs roughly "
    "140-400 labels; a per-class agreement rate to +/-0.10 needs 62-97 items of that class"
)


@dataclass
class Guidance:
    target_half_width: float
    half_widths: dict[str, float | None]
    labels_needed_for_kappa: int | None
    human_passes_needed: int
    human_fails_needed: int
    have: dict[str, int]
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "target_half_width": self.target_half_width,
            "half_widths": self.half_widths,
            "labels_needed_for_kappa": self.labels_needed_for_kappa,
            "human_passes_needed_for_rate": self.human_passes_needed,
            "human_fails_needed_for_rate": self.human_fails_needed,
            "have": self.have,
            "summary": self.lines,
            "rule_of_thumb": RULE_OF_THUMB,
        }


def _half(ci: Interval | None) -> float | None:
    return None if ci is None else (ci[1] - ci[0]) / 2


def items_for_rate(p: float | None, half_width: float = TARGET_HALF_WIDTH) -> int:
    """Items of one class for a rate known to +/-half_width (normal approximation).

    An unknown or degenerate observed rate (0 or 1 says little on few items) falls back to the
    worst case p = 0.5, so the figure never promises precision the data cannot give.
    """
    if p is None or p <= 0 or p >= 1:
        p = 0.5
    return math.ceil(Z95**2 * p * (1 - p) / half_width**2)


def guidance(s: PassFailStats, target: float = TARGET_HALF_WIDTH) -> Guidance:
    t = s.table
    n_pass, n_fail = t.a + t.b, t.c + t.d
    kappa_half = None if s.cohen_kappa_se is None else Z95 * s.cohen_kappa_se
    # Precision scales with 1/sqrt(n), so the labels needed scale with the squared ratio.
    kappa_needed = None if kappa_half is None else math.ceil(t.n * (kappa_half / target) ** 2)
    g = Guidance(
        target_half_width=target,
        half_widths={
            "cohen_kappa_analytic": kappa_half,
            "cohen_kappa_bootstrap": _half(s.cohen_kappa_ci_bootstrap),
            "raw_agreement": _half(s.raw_agreement_ci),
            "agreement_on_human_pass": _half(s.agreement_on_human_pass_ci),
            "agreement_on_human_fail": _half(s.agreement_on_human_fail_ci),
        },
        labels_needed_for_kappa=kappa_needed,
        human_passes_needed=items_for_rate(s.agreement_on_human_pass, target),
        human_fails_needed=items_for_rate(s.agreement_on_human_fail, target),
        have={"labels": t.n, "human_passes": n_pass, "human_fails": n_fail},
    )
    if kappa_half is not None and kappa_needed is not None:
        g.lines.append(
            f"kappa is known to +/-{kappa_half:.2f} from {t.n} labels; about {kappa_needed} "
            f"labels (with this mix of passes and fails) would bring it to +/-{target:.2f}"
        )
    else:
        # More labels only help when the humans lack a class; a judge that gives one verdict
        # to everything keeps kappa undefined however many labels there are.
        reason = s.cohen_kappa_undefined or "no standard error"
        g.lines.append(f"kappa is undefined ({reason}): no label count can be given for it")
        g.warnings.append(f"labels needed for kappa undefined: kappa is undefined ({reason})")
    for name, have, need in (
        ("human passes", n_pass, g.human_passes_needed),
        ("human fails", n_fail, g.human_fails_needed),
    ):
        more = f"{need - have} more" if need > have else "enough"
        g.lines.append(
            f"agreement on {name}: about {need} items give +/-{target:.2f}; have {have} ({more})"
        )
        if 0 < have < MIN_CLASS_ITEMS:  # none at all is already a warning of its own
            g.warnings.append(
                f"only {have} {name} labelled (fewer than {MIN_CLASS_ITEMS}): "
                f"agreement on {name} is imprecise; label more of them"
            )
    return g
