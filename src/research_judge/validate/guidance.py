"""How precise this validation is, and about how many labels would make it precise enough.

Printed with every report: a kappa from 100 labels is known to +/-0.12 at best and +/-0.2 or
more on most tables, which is the difference between "moderate" and "substantial", and readers
routinely forget that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..stats.intervals import Z95, Interval, wilson_at_rate
from .agreement import PassFailStats

TARGET_HALF_WIDTH = 0.10
MIN_CLASS_ITEMS = 30
RULE_OF_THUMB = (
    "rule of thumb: at n = 100, kappa is known to about +/-0.12 (kappa 0.8, passes and fails "
    "even) to +/-0.20 (kappa near 0), wider when one class is rare (+/-0.27 at kappa 0.5 with "
    "one human fail in ten); +/-0.10 needs roughly 140-400 labels; a per-class agreement rate "
    "to +/-0.10 needs 60-93 items of that class (Wilson interval, rates 80% to 50%)"
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
    """Fewest items of one class whose Wilson interval at rate ``p`` is within +/-half_width.

    The report shows Wilson intervals for these rates, so the guidance uses the same interval
    (the textbook Wald formula z^2 p (1 - p) / h^2 would say "enough" beside an interval that is
    visibly wider than the target, or the reverse). The half-width is (high - low) / 2, as the
    report prints it. An unknown rate uses p = 0.5, the widest case.
    """
    rate = 0.5 if p is None else min(max(p, 0.0), 1.0)

    def half(n: int) -> float:
        ci = wilson_at_rate(rate, n)
        return (ci[1] - ci[0]) / 2

    # The Wilson width shrinks monotonically with n at a fixed rate: double, then bisect.
    high = 1
    while half(high) > half_width:
        high *= 2
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if half(mid) <= half_width else (mid, high)
    return high


def guidance(s: PassFailStats, target: float = TARGET_HALF_WIDTH) -> Guidance:
    t = s.table
    n_pass, n_fail = t.a + t.b, t.c + t.d
    # Only when kappa has an interval: at perfect agreement the SE is 0, and "about 0 labels
    # needed" would be the same false certainty as a zero-width interval.
    has_interval = s.cohen_kappa_ci_analytic is not None and s.cohen_kappa_se is not None
    kappa_half = Z95 * s.cohen_kappa_se if has_interval and s.cohen_kappa_se else None
    # Precision scales with 1/sqrt(n), so the labels needed scale with the squared ratio.
    kappa_needed = None if kappa_half is None else math.ceil(t.n * (kappa_half / target) ** 2)
    g = Guidance(
        target_half_width=target,
        half_widths={
            "cohen_kappa_analytic": kappa_half,
            "cohen_kappa_bootstrap": _half(s.cohen_kappa_ci_bootstrap),
            "cohen_kappa_boundary": _half(s.cohen_kappa_ci_boundary),
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
    elif s.cohen_kappa_undefined is None and s.cohen_kappa_boundary is not None:
        # The boundary interval has no standard error to scale, and "about 0 labels" would be
        # the same false certainty as a zero-width interval.
        ci = s.cohen_kappa_ci_boundary
        shown = "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"
        g.lines.append(
            f"kappa{shown} from {t.n} labels sits on a boundary ({s.cohen_kappa_boundary}): its "
            "standard error is 0, so no label count can be scaled from it; label more sessions "
            "until a disagreement (or agreement) shows"
        )
        g.warnings.append(
            "labels needed for kappa undefined: kappa's standard error is 0 at the boundary"
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
