"""The CI outputs of ``grade``: JUnit (one case per session and bad line), the step summary
(the report's Markdown of this run) and annotations (bad lines, judge errors, a budget stop);
for a run the provider stopped, the same three saying so."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import InputFileError
from ..results.model import Result
from ._ci import emit

_IDS_IN_ANNOTATION = 10
_BUDGET_MESSAGE = "--max-cost reached: not every session was sent; raise it to resume"
# Opens the step summary of a run --max-cost stopped, so the page says why the step ended 4.
_BUDGET_STOP = f"### research-judge grade: stopped\n\n{_BUDGET_MESSAGE}\n\n"


def emit_grade_ci(
    args: argparse.Namespace,
    covered: Callable[[], Sequence[Result]],
    input_errors: Sequence[InputFileError],
    *,
    stopped: str | None = None,
    stop_message: str | None = None,
) -> None:
    """``covered``: what --out holds for the sessions this run covered (graded now or reused),
    read only when an output asked for needs it.

    A run the provider stopped (``stopped="provider_down"``, exit 3) reports the same cases as
    a finished one, for the sessions selected so far, plus what stopped it (``stop_message``):
    an ``::error`` annotation, a step summary that opens with the stop, and a JUnit error case
    named ``provider`` (a CI step that publishes the JUnit file would otherwise find none, or
    last run's)."""
    from ..ci.github import command
    from ..ci.junit import Case, grade_cases, to_xml
    from ..ci.markdown import esc
    from ..report import build_report, render_markdown

    down = stopped == "provider_down"

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
        lines += _error_annotations(covered())
        if stopped == "budget":
            lines.append(command("warning", _BUDGET_MESSAGE, title="research-judge grade: stopped"))
        if down:
            lines.append(
                command("error", stop_message or "", title="research-judge grade: stopped")
            )
        return lines

    def junit() -> str:
        cases = grade_cases(covered(), input_errors)
        if down:
            cases.append(Case("provider", "error", stop_message or "", kind="provider_down"))
        return to_xml("research-judge grade", cases)

    def summary() -> str:
        name = Path(args.out).name
        results = covered()
        if down:
            head = f"### research-judge grade: stopped\n\n{esc(stop_message or '')}\n\n"
            if not results:
                return head + f"No session is graded in {esc(name)} yet.\n"
        else:
            head = _BUDGET_STOP if stopped == "budget" else ""
        return head + render_markdown(build_report(results, source=name))

    emit(args, junit=junit, summary=summary, annotations=annotations)


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
