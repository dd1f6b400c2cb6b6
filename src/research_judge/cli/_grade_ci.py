"""The CI outputs of ``grade``: JUnit (one case per session and bad line), the step summary
(the report's Markdown of this run) and annotations (bad lines, judge errors, a budget stop);
for a run the provider stopped, the same three saying so."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

from ..errors import InputFileError
from ..results.model import Result, iter_results
from ._ci import emit

_IDS_IN_ANNOTATION = 10
_BUDGET_MESSAGE = "--max-cost reached: not every session was sent; raise it to resume"
# Opens the step summary of a run --max-cost stopped, so the page says why the step ended 4.
_BUDGET_STOP = f"### research-judge grade: stopped\n\n{_BUDGET_MESSAGE}\n\n"


def emit_grade_ci(
    args: argparse.Namespace,
    selected: Collection[str],
    input_errors: Sequence[InputFileError],
    *,
    stopped: str | None = None,
) -> None:
    """``selected``: ids of the sessions this run covered (graded now or reused from --out)."""
    from ..ci.github import command
    from ..ci.junit import grade_cases, to_xml
    from ..report import build_report, render_markdown

    # A --max-cost below one session's estimate stops before --out is even created.
    results = [
        r
        for r in iter_results(args.out, missing_ok=True)
        if not isinstance(r, InputFileError) and r.session_id in selected
    ]

    def annotations() -> list[str]:
        lines = [
            command(
                "error",
                p.message,
                title="research-judge grade: bad input line",
                file=p.path,
                line=p.line,
            )
            for p in input_errors
        ]
        lines += _error_annotations(results)
        if stopped == "budget":
            lines.append(command("warning", _BUDGET_MESSAGE, title="research-judge grade: stopped"))
        return lines

    emit(
        args,
        junit=lambda: to_xml("research-judge grade", grade_cases(results, input_errors)),
        summary=lambda: (
            (_BUDGET_STOP if stopped == "budget" else "")
            + render_markdown(build_report(results, source=Path(args.out).name))
        ),
        annotations=annotations,
    )


def _error_annotations(results: Sequence[Result]) -> list[str]:
    from ..ci.github import command

    errored = [r.session_id for r in results if r.error is not None]
    if not errored:
        return []
    shown = ", ".join(errored[:_IDS_IN_ANNOTATION])
    more = f" and {len(errored) - _IDS_IN_ANNOTATION} more" if len(errored) > 10 else ""
    message = (
        f"{len(errored)} session(s) failed with a judge error (left out of every rate): "
        f"{shown}{more}; rerun with --retry-errors to try them again"
    )
    return [command("warning", message, title="research-judge grade: judge errors")]


def annotate_stop(args: argparse.Namespace, message: str) -> None:
    """A run the provider stopped (exit 3) still tells CI why: an ``::error`` annotation, a step
    summary that opens with the stop and then reports the sessions graded so far, and a JUnit
    file with those sessions plus an error case for the stop (a CI step that publishes the
    JUnit file would otherwise find none, or last run's)."""
    from ..ci.github import annotations_wanted, command
    from ..ci.junit import Case, grade_cases, to_xml
    from ..ci.markdown import esc
    from ..ci.output import write_output
    from ..report import build_report, render_markdown
    from ._ci import step_summary

    results = [r for r in iter_results(args.out, missing_ok=True) if isinstance(r, Result)]

    def summary() -> str:
        head = f"### research-judge grade: stopped\n\n{esc(message)}\n\n"
        if not results:
            return head + f"No session is graded in {esc(Path(args.out).name)} yet.\n"
        return head + render_markdown(build_report(results, source=Path(args.out).name))

    if args.junit is not None:
        stop = Case("provider", "error", message, kind="provider_down")
        cases = [*grade_cases(results), stop]
        write_output(args.junit, to_xml("research-judge grade", cases), "JUnit file")
    step_summary(args.verb, summary)
    if annotations_wanted(args.annotations):
        print(command("error", message, title="research-judge grade: stopped"), file=sys.stderr)
