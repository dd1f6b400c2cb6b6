"""Bars a judge must clear before a team relies on it: `validate --min-kappa --min-fail-agreement`.

A bar compares the point estimate, as the contract says; the report prints the interval beside
it so a reader can see how close to the bar the judge really is. A statistic that is undefined
(kappa when one side used a single label; agreement on human fails with none labelled) fails its
bar: a gate must not pass on numbers that do not exist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ConfigError
from ..stats.intervals import Interval
from .agreement import PassFailStats


@dataclass(frozen=True)
class Bar:
    """One bar and how the judge measured against it (``ci.gates.Gate`` is a CI step's view of
    it, beside compare's gates)."""

    name: str  # the flag's statistic: cohen_kappa or agreement_on_human_fail
    flag: str
    bar: float
    value: float | None
    ci: Interval | None
    passed: bool
    message: str

    def to_dict(self) -> dict[str, object]:
        return {
            "statistic": self.name,
            "flag": self.flag,
            "bar": self.bar,
            "value": self.value,
            "ci": self.ci,
            "passed": self.passed,
            "message": self.message,
        }


def check_bars(min_kappa: float | None, min_fail_agreement: float | None) -> None:
    for flag, bar, low in (
        ("--min-kappa", min_kappa, -1.0),
        ("--min-fail-agreement", min_fail_agreement, 0.0),
    ):
        if bar is not None and not (math.isfinite(bar) and low <= bar <= 1.0):
            raise ConfigError(f"{flag} must be a number from {low:g} to 1, got {bar}")


def evaluate(
    s: PassFailStats, *, min_kappa: float | None, min_fail_agreement: float | None
) -> list[Bar]:
    check_bars(min_kappa, min_fail_agreement)
    gates: list[Bar] = []
    for name, flag, label, bar, value, ci, why in (
        (
            "cohen_kappa",
            "--min-kappa",
            "kappa",
            min_kappa,
            s.cohen_kappa,
            s.cohen_kappa_ci,
            s.cohen_kappa_undefined,
        ),
        (
            "agreement_on_human_fail",
            "--min-fail-agreement",
            "agreement on human fails",
            min_fail_agreement,
            s.agreement_on_human_fail,
            s.agreement_on_human_fail_ci,
            "no human fails labelled",
        ),
    ):
        if bar is None:
            continue
        if value is None:
            gates.append(
                Bar(name, flag, bar, None, None, False, f"{label} undefined ({why}): below {bar:g}")
            )
            continue
        passed = value >= bar
        shown = f"{label} {value:.3f}" + ("" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]")
        verdict = "meets" if passed else "is below"
        gates.append(
            Bar(name, flag, bar, value, ci, passed, f"{shown} {verdict} the bar {bar:g} ({flag})")
        )
    return gates
