"""Short Markdown summaries of compare, validate and tasks runs, for a CI job's summary page.

(``grade`` and ``report`` use the report's own Markdown.) Every value that comes from a file
(ids, reasons, messages) goes through ``markdown_escape``: inert text, never markup or a mention.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._format import num as _num
from .._format import pct as _pct
from ..report.render import markdown_escape
from .gates import Gate, failed

if TYPE_CHECKING:
    from ..compare.model import Comparison
    from ..harness.report import TaskReport
    from ..validate.report import ValidationReport

_IDS_SHOWN = 20


def esc(value: object) -> str:
    """Inert inline Markdown, and no ``@mention`` that would notify someone from a CI summary
    (the report's own rule, ``markdown_escape``)."""
    return markdown_escape(value)


def compare_markdown(cmp: Comparison, gates: Sequence[Gate], *, fail_on: str) -> str:
    bad = failed(gates)
    status = "❌ failed" if bad else "✅ passed"
    lines = [
        f"### research-judge compare: {status}",
        "",
        f"{cmp.n_common} common sessions ({cmp.n_graded_both} graded in both); threshold "
        f"{cmp.threshold:g}; " + _fail_rule(fail_on),
        "",
        "| metric | baseline | current | delta | p | gate |",
        "|---|---:|---:|---:|---:|---|",
    ]
    by_name = {g.name: g for g in gates}
    for m in cmp.metrics:
        gate = by_name.get(m.metric)
        mark = "ok" if gate is None or gate.passed else "**FAIL**"
        if gate is not None and gate.passed and cmp.flag_for(m.metric) is not None:
            mark = "dropped, within noise (warning)"
        p = "n/a" if m.test.p_value is None else f"{m.test.p_value:.3g}"
        lines.append(
            f"| {m.metric} | {_num(m.baseline)} | {_num(m.current)} | "
            f"{_num(m.delta, signed=True)} | {p} | {mark} |"
        )
    lines.append("")
    lines.append(_ids("Regressions (pass → fail)", cmp.regressions))
    lines.append(_ids("Fixed (fail → pass)", cmp.fixed))
    for gate in bad:
        lines.append(f"- **{esc(gate.name)}**: {esc(gate.message)}")
    return "\n".join(lines) + "\n"


def _fail_rule(fail_on: str) -> str:
    if fail_on == "any":
        return "fails on a regressed session or any drop past the threshold."
    return "fails on a regressed session or a significant drop (a drop within noise warns)."


def validate_markdown(report: ValidationReport, gates: Sequence[Gate]) -> str:
    s = report.pass_fail
    bad = failed(gates)
    status = "❌ failed" if bad else "✅ passed" if gates else "done"
    lines = [
        f"### research-judge validate: {status}",
        "",
        esc(report.headline),
        "",
        "| statistic | value | 95% CI |",
        "|---|---:|---|",
        f"| sessions compared | {report.n} | |",
        f"| raw agreement | {_pct(s.raw_agreement)} | {_ci(s.raw_agreement_ci, pct=True)} |",
        f"| Cohen's kappa | {_num(s.cohen_kappa)} | {_ci(s.cohen_kappa_ci)} |",
        f"| agreement on human pass | {_pct(s.agreement_on_human_pass)} | "
        f"{_ci(s.agreement_on_human_pass_ci, pct=True)} |",
        f"| agreement on human fail | {_pct(s.agreement_on_human_fail)} | "
        f"{_ci(s.agreement_on_human_fail_ci, pct=True)} |",
    ]
    if gates:
        lines.append("")
        for gate in gates:
            mark = "✅" if gate.passed else "❌"
            lines.append(f"- {mark} **{esc(gate.name)}**: {esc(gate.message)}")
    return "\n".join(lines) + "\n"


def tasks_markdown(report: TaskReport, baseline: TaskReport | None = None) -> str:
    from ..harness.report import fixes, regressions

    lost = regressions(baseline, report) if baseline is not None else []
    status = "❌ regressions" if lost else "done"
    rate = "no tasks" if report.n == 0 else f"{report.n_passed}/{report.n} ({report.pass_rate:.1%})"
    lines = [f"### research-judge tasks: {status}", "", f"Pass rate: {rate}.", ""]
    tiers = report.tiers()
    if tiers:
        shown = ", ".join(
            f"{esc(name)} {t.n_passed}/{t.n} ({t.pass_rate:.1%})" for name, t in tiers.items()
        )
        lines += [f"By tier: {shown}.", ""]
    if baseline is not None:
        lines.append(_ids("Regressions", lost))
        lines.append(_ids("Fixes", fixes(baseline, report)))
        lines.append("")
    failing = [r for r in report.results if not r.passed]
    if failing:
        lines += ["| task | reasons |", "|---|---|"]
        lines += [f"| {esc(r.id)} | {esc('; '.join(r.reasons))} |" for r in failing]
    return "\n".join(lines) + "\n"


def text_block(title: str, text: str) -> str:
    """A verb's plain-text output as a Markdown section: a fenced block longer than any run of
    backticks inside, so nothing in the text can close it (and inside it nothing is markup)."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"### {esc(title)}\n\n{fence}text\n{text.rstrip()}\n{fence}\n"


def _ids(title: str, ids: Sequence[str]) -> str:
    if not ids:
        return f"- {title}: none"
    shown = ", ".join(esc(i) for i in ids[:_IDS_SHOWN])
    more = f" and {len(ids) - _IDS_SHOWN} more" if len(ids) > _IDS_SHOWN else ""
    return f"- {title} ({len(ids)}): {shown}{more}"


def _ci(value: object, *, pct: bool = False) -> str:
    if isinstance(value, list | tuple) and len(value) == 2 and None not in value:
        low, high = value
        return f"{_pct(low)}–{_pct(high)}" if pct else f"{low:.3f}–{high:.3f}"
    return "n/a"
