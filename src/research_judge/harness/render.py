"""The human table and the JSON object that ``research-judge tasks run`` prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .report import TaskReport, fixes, only_in, regressions


def format_report(report: TaskReport, baseline: TaskReport | None = None) -> str:
    """The table the CLI prints: one row per task (id, PASS/FAIL, seconds, reasons), the pass
    rate, and, against a baseline, the regressions and fixes by id.
    """
    tiers = report.tiers()
    headers: tuple[str, ...] = ("id", "result", "seconds", "reasons")
    rows: list[tuple[str, ...]] = [
        (
            r.id,
            "PASS" if r.passed else "FAIL",
            f"{r.seconds:.3f}",
            "; ".join(r.reasons) if r.reasons else "-",
        )
        for r in report.results
    ]
    if tiers:  # the tier column only when some task names one
        headers = ("id", "tier", "result", "seconds", "reasons")
        rows = [
            (row[0], r.tier or "-", *row[1:]) for row, r in zip(rows, report.results, strict=True)
        ]
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        out: list[str] = []
        for i, (name, cell) in enumerate(zip(headers, cells, strict=True)):
            if name == "reasons":
                out.append(cell)
            else:
                out.append(cell.rjust(widths[i]) if name == "seconds" else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [line(headers)] + [line(row) for row in rows]
    lines.append("")
    lines.append(f"pass rate: {_rate(report)}")
    if tiers:
        shown = ", ".join(
            f"{name} {t.n_passed}/{t.n} ({t.pass_rate:.1%})" for name, t in tiers.items()
        )
        lines.append(f"pass rate by tier: {shown}")
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
