"""The outcome of comparing two runs, as plain data with one JSON-safe ``to_dict``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..stats.paired import PairedTest

if TYPE_CHECKING:  # the compare flags read this module's thresholds at --help time
    from .rejudged import Decomposition

# The defaults of the flags, here once for the library, the CLI and the report (in this light
# module, so ``--help`` does not load the comparison itself).
DEFAULT_THRESHOLD = 0.05
DEFAULT_CRITICAL_THRESHOLD = 0.10

Severity = Literal["warning", "critical"]
# What makes ``compare`` exit 1 (``ci.gates``): by default a regression or a significant drop.
FailOn = Literal["any", "significant"]
FAIL_ON: tuple[FailOn, ...] = ("any", "significant")
DEFAULT_FAIL_ON: FailOn = "significant"
# The rule ``--help``, the README and the summaries state, in one place.
FAIL_RULE = (
    "exit 1 when any session regressed (passed in the baseline, fails now) or a metric dropped "
    "by more than the threshold and the paired test finds the drop significant; a drop within "
    "noise with no regression is printed as a warning and exits 0 (--fail-on any fails on it "
    "too)"
)
# Said wherever a comparison is shown (text, warnings, HTML, Markdown) when the judges differ.
JUDGE_CHANGED = "judge changed: these deltas mix agent and judge changes"


@dataclass(frozen=True)
class MetricDelta:
    """One metric on both sides. ``baseline``/``current`` are None when nothing was there to
    average, and then ``delta`` is None too."""

    metric: str
    baseline: float | None
    current: float | None
    n_baseline: int  # values that went into the baseline mean
    n_current: int
    test: PairedTest

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "current": self.current,
            "delta": self.delta,
            "n_baseline": self.n_baseline,
            "n_current": self.n_current,
            **self.test.to_dict(),
        }


@dataclass(frozen=True)
class Flag:
    metric: str
    delta: float
    severity: Severity
    test: PairedTest

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "delta": self.delta,
            "severity": self.severity,
            "p_value": self.test.p_value,
            "significant": self.test.significant,
        }


@dataclass(frozen=True)
class SessionMove:
    """How one common session's criterion values moved (0..1 scale, scores as (s-1)/2)."""

    session_id: str
    baseline_verdict: str | None
    current_verdict: str | None
    combined_baseline: float
    combined_current: float
    criteria: dict[str, float]  # criterion -> current - baseline, where both exist

    @property
    def delta(self) -> float:
        return self.combined_current - self.combined_baseline

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "baseline_verdict": self.baseline_verdict,
            "current_verdict": self.current_verdict,
            "combined_baseline": self.combined_baseline,
            "combined_current": self.combined_current,
            "delta": self.delta,
            "criteria": dict(self.criteria),
        }


@dataclass(frozen=True)
class Comparison:
    n_common: int
    n_graded_both: int
    only_in_baseline: list[str]
    only_in_current: list[str]
    pass_rate: MetricDelta
    criteria: dict[str, MetricDelta]
    regressions: list[str]
    fixed: list[str]
    newly_errored: list[str]  # graded in the baseline, errored in the current run
    flags: list[Flag]
    errored: dict[str, int]  # run -> errored sessions in that whole run
    judge: dict[str, Any]
    movers: list[SessionMove]
    threshold: float
    critical_threshold: float
    warnings: list[str] = field(default_factory=list)
    # Tokens pulled per session and used token share (``compare.context``); never flagged.
    context: list[MetricDelta] = field(default_factory=list)
    # With --rejudged: each metric's delta split into judge shift and agent change.
    decomposition: Decomposition | None = None

    @property
    def pass_to_fail(self) -> int:
        return len(self.regressions)

    @property
    def fail_to_pass(self) -> int:
        return len(self.fixed)

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    @property
    def metrics(self) -> list[MetricDelta]:
        """The pass rate, then the criteria and citation ratios: the rows of every table."""
        return [self.pass_rate, *self.criteria.values()]

    def flag_for(self, metric: str) -> Flag | None:
        return next((f for f in self.flags if f.metric == metric), None)

    @property
    def judge_changed(self) -> bool:
        return self.judge.get("changed") is True

    def to_dict(self) -> dict[str, Any]:
        pass_rate = self.pass_rate.to_dict()
        pass_rate["n"] = self.n_graded_both
        pass_rate["pass_to_fail"] = self.pass_to_fail
        pass_rate["fail_to_pass"] = self.fail_to_pass
        criteria = {name: m.to_dict() for name, m in self.criteria.items()}
        extra: dict[str, Any] = {}
        if self.decomposition is not None:
            splits = self.decomposition.metrics
            pass_rate.update(splits["pass_rate"].to_dict())
            for name, entry in criteria.items():
                entry.update(splits[name].to_dict())
            extra["rejudged"] = self.decomposition.to_dict()
        return {
            "n_common": self.n_common,
            "n_graded_both": self.n_graded_both,
            "only_in_baseline": list(self.only_in_baseline),
            "only_in_current": list(self.only_in_current),
            "pass_rate": pass_rate,
            "criteria": criteria,
            "regressions": list(self.regressions),
            "fixed": list(self.fixed),
            "newly_errored": list(self.newly_errored),
            "flags": [f.to_dict() for f in self.flags],
            "errored": dict(self.errored),
            "judge": self.judge,
            "movers": [m.to_dict() for m in self.movers],
            "threshold": self.threshold,
            "critical_threshold": self.critical_threshold,
            "warnings": list(self.warnings),
            "context": {m.metric: m.to_dict() for m in self.context},
            **extra,
        }
