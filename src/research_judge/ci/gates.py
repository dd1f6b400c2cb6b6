"""The decisions a CI gate takes, one named ``Gate`` per metric or bar.

``compare`` by default (``fail_on="significant"``) fails when any session regressed (passed in
the baseline, fails now) or a metric dropped past the threshold by more than the paired test
calls noise; a drop within noise with no session flipping is a warning, so a CI gate does not
cry wolf on a handful of moved scores. ``fail_on="any"`` fails on every flagged drop too. Both
fail when the judge changed between the runs (model or prompt hashes) unless that was allowed:
a delta between two judges mixes the agent's change with the judge's.

``validate``'s bars (contract section 14) are decided in ``validate.bars``; here they only take
the same ``Gate`` shape for JUnit, summaries and annotations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._format import num as _num
from .._text import inline
from ..compare.model import (
    DEFAULT_FAIL_ON,
    FAIL_ON,
    JUDGE_CHANGED,
    Comparison,
    FailOn,
    MetricDelta,
)
from ..errors import ConfigError

if TYPE_CHECKING:  # validate pulls in numpy; --help must not
    from ..validate.report import ValidationReport

JUDGE_GATE = "judge unchanged"
REGRESSIONS_GATE = "no regressions"


@dataclass(frozen=True)
class Gate:
    """One check: ``name`` (a metric or a bar), whether it passed, a one-line ``message`` and
    the evidence behind it (``detail``: ids, numbers), for JUnit failures and annotations.
    ``waived``: it would have failed, but the caller chose not to fail on it (a drop the test
    does not find significant under ``fail_on="significant"``, an allowed judge change)."""

    name: str
    passed: bool
    message: str
    detail: str = ""
    waived: bool = False


def failed(gates: Sequence[Gate]) -> list[Gate]:
    return [g for g in gates if not g.passed]


def compare_gates(
    cmp: Comparison, *, fail_on: FailOn = DEFAULT_FAIL_ON, allow_judge_change: bool = False
) -> list[Gate]:
    """One gate per metric (the pass rate, then the criteria), the regressions gate, then the
    judge gate."""
    if fail_on not in FAIL_ON:
        raise ConfigError(f"fail_on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    gates = [_metric_gate(cmp, m, fail_on) for m in cmp.metrics]
    gates.append(_regressions_gate(cmp))
    gates.append(_judge_gate(cmp, allow_judge_change))
    return gates


def _regressions_gate(cmp: Comparison) -> Gate:
    """A session that passed and fails now is a finding, whatever the pass rate did: the fixes
    that offset it in the mean do not make it pass again."""
    if not cmp.regressions:
        return Gate(REGRESSIONS_GATE, True, "no session went from pass to fail")
    count = len(cmp.regressions)
    noun = "session" if count == 1 else "sessions"
    message = f"{count} {noun} passed in the baseline and fail now"
    return Gate(REGRESSIONS_GATE, False, message, _ids(cmp.regressions))


def _metric_gate(cmp: Comparison, m: MetricDelta, fail_on: FailOn) -> Gate:
    moved = f"{_num(m.baseline)} -> {_num(m.current)} (delta {_num(m.delta, signed=True)})"
    p = "n/a" if m.test.p_value is None else f"{m.test.p_value:.3g}"
    test = f"{m.test.name} p={p}, {m.test.n_pairs} pairs"
    detail = f"{m.metric}: {moved}; {test}"
    if m.metric == "pass_rate":
        detail += f"; regressions: {_ids(cmp.regressions)}"
        if cmp.fixed:
            detail += f"; fixed: {_ids(cmp.fixed)}"
    flag = cmp.flag_for(m.metric)
    if flag is None:
        return Gate(m.metric, True, f"{m.metric} {moved}", detail)
    message = (
        f"{m.metric} dropped by {-flag.delta:.3f} ({flag.severity}, threshold {cmp.threshold:g}): "
        f"{moved}"
    )
    if fail_on == "significant" and flag.test.significant is not True:
        text = f"{message}; within noise ({test})"
        return Gate(m.metric, True, text, detail, waived=True)
    return Gate(m.metric, False, message, detail)


def _judge_gate(cmp: Comparison, allowed: bool) -> Gate:
    changed = cmp.judge.get("changed")
    if changed is True:
        detail = "; ".join(w for w in cmp.warnings if "judge" in w) or JUDGE_CHANGED
        if allowed:
            return Gate(JUDGE_GATE, True, f"{JUDGE_CHANGED} (allowed)", detail, waived=True)
        message = f"{JUDGE_CHANGED}; pass --allow-judge-change (or --rejudged) if that is intended"
        return Gate(JUDGE_GATE, False, message, detail)
    if changed is None:
        return Gate(JUDGE_GATE, True, "cannot tell: a run records no judge")
    return Gate(JUDGE_GATE, True, "the same judge graded both runs")


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(inline(i) for i in ids) or "none"


def validate_gates(report: ValidationReport) -> list[Gate]:
    """The validate report's own bars (``--min-kappa``, ``--min-fail-agreement``), as CI gates:
    the report decides, this only gives each bar a name and its evidence."""
    return [
        Gate(g.flag.lstrip("-"), g.passed, g.message, _bar_detail(g.value, g.ci, g.bar))
        for g in report.gates
    ]


def _bar_detail(value: float | None, ci: tuple[float, float] | None, bar: float) -> str:
    shown = "undefined" if value is None else f"{value:.3f}"
    interval = "" if ci is None else f" (95% CI {ci[0]:.3f} to {ci[1]:.3f})"
    return f"{shown}{interval}; bar {bar:g}"
