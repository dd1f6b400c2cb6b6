"""Gate on research-judge inside your own test suite (a pytest plugin and plain helpers).

    from research_judge.pytest import assert_no_regressions, assert_judge_trusted

    def test_agent_did_not_regress():
        assert_no_regressions("runs/baseline.jsonl", "runs/current.jsonl")

    def test_judge_is_trusted():
        assert_judge_trusted("runs/current.jsonl", "labels.csv", min_kappa=0.6)

The helpers raise ``AssertionError`` with a message a reviewer can act on (which gate, the
numbers, the regressed ids) and return the comparison or validation report otherwise. They
apply the same gates as ``compare`` and ``validate`` on the command line.

Installed with the package, pytest loads this module as a plugin (entry point ``pytest11``),
which adds the fixtures ``assert_no_regressions`` and ``assert_judge_trusted`` returning the same
functions. At start-up it imports nothing beyond pytest; the rest loads when a helper runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .api import LabelsInput, ResultsInput
    from .compare.model import Comparison, FailOn
    from .validate.report import ValidationReport

__all__ = ["assert_judge_trusted", "assert_no_regressions"]


def assert_no_regressions(
    baseline: ResultsInput,
    current: ResultsInput,
    *,
    threshold: float | None = None,
    critical_threshold: float | None = None,
    fail_on: FailOn = "significant",
    allow_judge_change: bool = False,
) -> Comparison:
    """Fail when ``current`` got worse than ``baseline`` as ``compare`` would (exit 1).

    ``baseline`` and ``current``: results files or sequences of ``Result``; the thresholds
    default to ``compare``'s own. Also fails when the two runs share no session (a comparison
    of nothing proves nothing).
    """
    from .api import compare
    from .ci.gates import compare_gates, failed
    from .compare.model import DEFAULT_CRITICAL_THRESHOLD, DEFAULT_THRESHOLD

    __tracebackhide__ = True
    cmp = compare(
        baseline,
        current,
        threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
        critical_threshold=(
            DEFAULT_CRITICAL_THRESHOLD if critical_threshold is None else critical_threshold
        ),
    )
    if cmp.n_common == 0:
        raise AssertionError("baseline and current share no session: nothing was compared")
    bad = failed(compare_gates(cmp, fail_on=fail_on, allow_judge_change=allow_judge_change))
    if bad:
        lines = [f"research-judge: {len(bad)} gate(s) failed on {cmp.n_common} common sessions"]
        lines += [f"  {g.name}: {g.message}" for g in bad]
        if cmp.regressions:
            lines.append(f"  regressions (pass -> fail): {', '.join(cmp.regressions)}")
        raise AssertionError("\n".join(lines))
    return cmp


def assert_judge_trusted(
    results: ResultsInput,
    labels: LabelsInput,
    *,
    min_kappa: float | None = None,
    min_fail_agreement: float | None = None,
    seed: int = 0,
    n_boot: int = 0,
) -> ValidationReport:
    """Fail when the judge's agreement with human labels is below a bar, as ``validate`` would.

    ``labels``: a labels file or a mapping id -> "pass"/"fail". At least one bar is required
    (a trust check without one checks nothing). ``n_boot`` defaults to 0 (the analytic kappa
    interval), which keeps a test fast; the gates use the point estimates either way.
    """
    from .api import validate
    from .ci.gates import failed, validate_gates

    __tracebackhide__ = True
    if min_kappa is None and min_fail_agreement is None:
        raise TypeError("give min_kappa and/or min_fail_agreement: there is no bar to check")
    report = validate(
        results,
        labels,
        seed=seed,
        n_boot=n_boot,
        min_kappa=min_kappa,
        min_fail_agreement=min_fail_agreement,
    )
    if report.n == 0:
        raise AssertionError("no labelled session has a judge verdict: nothing was compared")
    bad = failed(validate_gates(report))
    if bad:
        lines = [f"research-judge: the judge is not trusted on {report.n} labelled sessions"]
        lines += [f"  {g.name}: {g.message}" for g in bad]
        lines.append(f"  {report.headline}")
        raise AssertionError("\n".join(lines))
    return report


# --- the plugin ----------------------------------------------------------------------------------


@pytest.fixture(name="assert_no_regressions")
def _assert_no_regressions_fixture() -> Callable[..., Any]:
    """``assert_no_regressions(baseline, current, ...)`` as a fixture, no import needed."""
    return assert_no_regressions


@pytest.fixture(name="assert_judge_trusted")
def _assert_judge_trusted_fixture() -> Callable[..., Any]:
    """``assert_judge_trusted(results, labels, min_kappa=...)`` as a fixture."""
    return assert_judge_trusted
