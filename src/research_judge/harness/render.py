"""The human table and the JSON object that ``research-judge tasks run`` prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .report import TaskReport, fixes, only_in, regressions


def format_report(report: TaskReport, baseline: TaskReport | None = None) -> str:
    """The table the CLI prints: one row per task (id, PASS/FAIL, seconds, reasons), the pass
    rate, and, against a baseline, the regressions and fixes by id.
    """
    headers = ("id", "result", "seconds", "reasons")
    rows = [
        (
            r.id,
            "PASS" if r.passed else "FAIL",
            f"{r.seconds:.3f}",
            "; ".join(r.reasons) if r.reasons else "-",
        )
        for r in report.results
    ]
    id_width = max([len(headers[0])] + [len(row[0]) for row in rows])
    sec_width = max([len(headers[2])] + [len(row[2]) for row in rows])

    def line(cells: Sequence[str]) -> str:
        return (
            f"{cells[0]:<{id_width}}  {cells[1]:<6}  {cells[2]:>{sec_width}}  {cells[3]}".rstrip()
        )

    lines = [line(headers)] + [line(row) for row in rows]
    lines.append("")
    lines.append(f"pass rate: {_rate(report)}")
    if baseline is not None:
        lines.extend(_comparison(baseline, report))
    return "\n".join(lines) + "\n"


def report_json(
    report: TaskReport,
    baseline: TaskReport | None = None,
    input_errors: Sequence[str] = (),
) -> dict[str, Any]:
    """The report as one JSON object; with a baseline it also carries the comparison.

    ``TaskReport.from_dict`` ignores the comparison keys, so this output is a valid baseline.
    """
    data = report.to_dict()
    data["input_errors"] = list(input_errors)
    if baseline is not None:
        data["baseline"] = {
            "agent": baseline.agent,
            "n": baseline.n,
            "n_passed": baseline.n_passed,
            "pass_rate": baseline.pass_rate,
        }
        data["regressions"] = regressions(baseline, report)
        data["fixes"] = fixes(baseline, report)
        data["only_in_baseline"] = only_in(baseline, report)
        data["only_in_current"] = only_in(report, baseline)
    return data


def _comparison(baseline: TaskReport, report: TaskReport) -> list[str]:
    delta = (report.pass_rate - baseline.pass_rate) * 100
    out = [f"baseline pass rate: {_rate(baseline)} (change {delta:+.1f} points)"]
    out.append(_id_list("regressions", regressions(baseline, report)))
    out.append(_id_list("fixes", fixes(baseline, report)))
    only_old = only_in(baseline, report)
    only_new = only_in(report, baseline)
    # Only worth a line when the task lists differ; otherwise it is noise.
    if only_old:
        out.append(_id_list("only in baseline", only_old))
    if only_new:
        out.append(_id_list("not in baseline", only_new))
    return out


def _id_list(title: str, ids: list[str]) -> str:
    return f"{title} ({len(ids)}): {', '.join(ids) if ids else 'none'}"


def _rate(report: TaskReport) -> str:
    if report.n == 0:
        return "0/0 (no tasks)"
    return f"{report.n_passed}/{report.n} ({report.pass_rate:.1%})"
