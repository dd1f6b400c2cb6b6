"""JUnit XML for CI systems that render test reports (GitLab, Jenkins, GitHub test reporters).

One test case per session (grade) or task (tasks run), per criterion and gate (validate,
compare). A failing case carries the reason as its message and the evidence as its text. Built
with junitparser; session text is data, so characters XML 1.0 cannot carry are replaced.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .._format import num as _num
from .._format import pct as _pct
from .._text import inline, inline_lines
from ..errors import InputFileError
from ..results.model import SCORE_NAMES, Result
from .gates import Gate

if TYPE_CHECKING:
    from ..harness.report import TaskReport
    from ..validate.report import ValidationReport

Outcome = Literal["passed", "failure", "error", "skipped"]

# Everything XML 1.0 allows; the rest (NUL, ESC, lone surrogates, U+FFFE...) becomes U+FFFD.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MESSAGE_LIMIT = 500


@dataclass(frozen=True)
class Case:
    """One test case: ``message`` is the one-line reason, ``text`` the evidence, ``output`` what
    a passing case measured (rendered as system-out)."""

    name: str
    outcome: Outcome = "passed"
    message: str = ""
    text: str = ""
    output: str = ""
    seconds: float | None = None
    kind: str = ""  # the failure's type attribute, e.g. "verdict", "regression", "judge"


def to_xml(suite: str, cases: Iterable[Case]) -> str:
    """A ``<testsuites>`` document holding one suite named ``suite``."""
    from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

    classname = suite.replace(" ", ".")
    built = TestSuite(_xml_safe(suite))
    for case in cases:
        tc = TestCase(_xml_safe(inline(case.name)), classname, case.seconds)
        if case.outcome != "passed":
            kinds = {"failure": Failure, "error": Error, "skipped": Skipped}
            result = kinds[case.outcome](_one_line(case.message), case.kind or None)
            if case.text:
                result.text = _xml_safe(inline_lines(case.text))
            tc.result = [result]
        if case.output:
            tc.system_out = _xml_safe(inline_lines(case.output))
        built.add_testcase(tc)
    built.update_statistics()  # type: ignore[no-untyped-call]
    doc = JUnitXml("research-judge")
    doc.add_testsuite(built)
    doc.update_statistics()  # type: ignore[no-untyped-call]
    buffer = io.BytesIO()
    doc.write(buffer, pretty=True)  # indented: the file is also read by people
    return buffer.getvalue().decode("utf-8")


def _xml_safe(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _one_line(text: str) -> str:
    line = inline(" ".join(_xml_safe(text).split()))
    return line if len(line) <= _MESSAGE_LIMIT else line[: _MESSAGE_LIMIT - 1] + "…"


# --- per verb ------------------------------------------------------------------------------------


def grade_cases(
    results: Iterable[Result], input_errors: Sequence[InputFileError] = ()
) -> list[Case]:
    """A passing session passes; a failing verdict is a failure (the policy's reasons, then each
    criterion's score, reasoning and evidence); a judge error is an error; a bad input line is an
    error named ``file:line``."""
    cases = [_session_case(r) for r in results]
    for problem in input_errors:
        where = problem.path if problem.line is None else f"{problem.path}:{problem.line}"
        cases.append(Case(where, "error", problem.message, kind="input"))
    return cases


def _session_case(r: Result) -> Case:
    if r.error is not None or r.verdict is None:
        message = r.error or "not graded"
        return Case(r.session_id, "error", message, kind=r.error_kind or "judge")
    evidence = _evidence(r)
    if r.verdict == "pass":
        return Case(r.session_id, output=evidence)
    reasons = "; ".join(r.verdict_reasons) or "the judge's verdict is fail"
    return Case(r.session_id, "failure", f"fail: {reasons}", text=evidence, kind="verdict")


def _evidence(r: Result) -> str:
    lines: list[str] = []
    if r.question:
        lines.append(f"question: {r.question}")
    if r.ratios is not None:
        shown = ", ".join(
            f"{name} {'n/a' if value is None else f'{value:.2f}'}"
            for name, value in r.ratios.model_dump().items()
        )
        lines.append(f"ratios: {shown}")
    for name, score in (r.scores or {}).items():
        lines.append(f"{name} {score.score}/3: {score.reasoning}")
        if score.evidence:
            lines.append(f"  evidence: {score.evidence}")
    return "\n".join(lines)


def task_cases(report: TaskReport, baseline: TaskReport | None = None) -> list[Case]:
    """A task's reasons are its failure message; an agent that raised (or timed out) is an
    error with the exception's message; a task that passed in the baseline is marked regressed."""
    before = baseline.by_id() if baseline is not None else {}
    cases: list[Case] = []
    for r in report.results:
        shown = f"answer: {r.answer}" + (f"\ntier: {r.tier}" if r.tier else "")
        if r.passed:
            cases.append(Case(r.id, seconds=r.seconds, output=shown))
            continue
        regressed = r.id in before and before[r.id].passed
        message = "; ".join(r.reasons)
        if regressed:
            message = f"regressed (passed in the baseline): {message}"
        is_error = len(r.reasons) == 1 and r.reasons[0].startswith("error: ")
        text = r.detail if is_error and r.detail else shown
        outcome: Outcome = "error" if is_error else "failure"
        kind = "regression" if regressed else ("agent" if is_error else "task")
        cases.append(Case(r.id, outcome, message, text=text, seconds=r.seconds, kind=kind))
    return cases


def gate_cases(gates: Iterable[Gate]) -> list[Case]:
    return [
        Case(g.name, output=f"{g.message}\n{g.detail}".strip())
        if g.passed
        else Case(g.name, "failure", g.message, text=g.detail, kind="gate")
        for g in gates
    ]


def validate_cases(report: ValidationReport, gates: Sequence[Gate] = ()) -> list[Case]:
    """The pass/fail agreement, each criterion with human scores (skipped when the labels have
    none), then each gate that was set."""
    s = report.pass_fail
    overall = (
        f"n {report.n}; raw agreement {_pct(s.raw_agreement)}; cohen kappa {_num(s.cohen_kappa)} "
        f"(95% CI {_interval(s.cohen_kappa_ci)}); agreement on human pass "
        f"{_pct(s.agreement_on_human_pass)}, on human fail {_pct(s.agreement_on_human_fail)}"
    )
    cases = [
        Case("pass/fail agreement", output=overall)
        if report.n
        else Case("pass/fail agreement", "error", "no labelled session has a judge verdict")
    ]
    for name in SCORE_NAMES:
        c = report.criteria.get(name)
        if c is None or c.n == 0:
            cases.append(Case(name, "skipped", f"the labels carry no human {name} scores"))
            continue
        shown = (
            f"n {c.n}; exact agreement {_pct(c.exact_agreement)}; within one "
            f"{_pct(c.within_one_agreement)}; quadratic kappa {_num(c.quadratic_kappa)}; "
            f"judge minus human {_num(c.mean_shift)}"
        )
        cases.append(Case(name, output=shown))
    cases.extend(gate_cases(gates))
    return cases


def _interval(value: object) -> str:
    if isinstance(value, list | tuple) and len(value) == 2 and None not in value:
        return f"{value[0]:.3f}..{value[1]:.3f}"
    return "n/a"
