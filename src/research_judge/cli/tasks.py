"""`research-judge tasks run`: the deterministic task harness from the command line.

Exit status, as a unit-test runner in CI: without ``--baseline``, 1 when any task failed; with
``--baseline``, 1 only when a task that passed in the baseline fails now (known failures are
allowed); ``--min-pass-rate X`` is a gate of its own (1 below X). 2 when the task file had bad
lines (reported as ``file:line: what`` on stderr; the good tasks still run): bad input wins over
a gate, as a comparison with tasks missing from it is not one to act on. 0 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

from .._format import num
from .._text import inert_json, inline, inline_lines
from ..errors import ExitCode
from ._ci import add_ci_flags, check_stdout, emit, main_output
from .config import add_config_flag

if TYPE_CHECKING:  # the harness loads on run, not at --help
    from ..harness import TaskReport


def register(subparsers: Any) -> None:
    tasks = subparsers.add_parser(
        "tasks",
        help="run an agent on tasks with known answers and find regressions",
        description="Deterministic task harness: run an agent on tasks with known answers.",
    )
    actions = tasks.add_subparsers(dest="tasks_action", metavar="ACTION", required=True)
    run_parser = actions.add_parser(
        "run",
        help="run an agent on a JSONL task file and report what passed, what failed and why",
        description=(
            "Run AGENT on every task of TASKS (JSONL, one task per line: id, input, expected, "
            "optional max_tool_calls and forbidden_tools). Prints a table and the pass rate; "
            "with --baseline also the regressions and fixes. Exit 1 when any task failed and no "
            "--baseline is given; with --baseline, 1 only when a task that passed in the "
            "baseline fails now (known failures are allowed); 1 when the pass rate is below "
            "--min-pass-rate; 2 when the task file has bad lines (the good tasks still run); "
            "0 otherwise."
        ),
    )
    run_parser.add_argument("tasks_file", metavar="TASKS.jsonl", help="the task file (JSONL)")
    run_parser.add_argument(
        "--agent",
        required=True,
        metavar="MODULE:FUNCTION",
        help=(
            "the agent to run, as package.module:function (like uvicorn); it is called with each "
            "task's input and must return {status, answer, tool_calls, tools_used}"
        ),
    )
    run_parser.add_argument(
        "--app-dir",
        default=".",
        metavar="DIR",
        help="directory put on sys.path before importing the agent (default: current directory)",
    )
    run_parser.add_argument(
        "--json",
        action="store_true",
        help=(
            "print the report as one JSON object instead of the table; save it to pass back "
            "later as --baseline"
        ),
    )
    run_parser.add_argument(
        "--baseline",
        metavar="OLD.json",
        help="a report saved earlier with --json; list regressions and fixes against it, and "
        "fail only on regressions (tasks that failed there too are allowed to fail)",
    )
    run_parser.add_argument(
        "--min-pass-rate",
        type=_rate,
        metavar="X",
        help="also exit 1 when the pass rate (0..1) is below X, with or without --baseline",
    )
    run_parser.add_argument(
        "--task-timeout",
        type=float,
        metavar="SECONDS",
        help=(
            "fail a task with 'error: TimeoutError' when the agent has not returned after this "
            "long; the hung call is abandoned and the run goes on (default: no limit)"
        ),
    )
    add_ci_flags(run_parser)
    add_config_flag(run_parser)
    # Either may be `-`: standard input (cli._stdin).
    run_parser.set_defaults(
        run=run, stdin_inputs={"tasks_file": "TASKS.jsonl", "baseline": "--baseline"}
    )


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def gate_failures(
    report: TaskReport, baseline: TaskReport | None, min_pass_rate: float | None
) -> list[str]:
    """Why the run fails as a CI gate, one sentence each; empty when it passes."""
    from ..harness import regressions

    reasons: list[str] = []
    if baseline is None:
        failing = [r.id for r in report.results if not r.passed]
        if failing:
            reasons.append(
                f"{len(failing)} of {report.n} task(s) failed: {', '.join(failing)} (with "
                "--baseline only regressions fail)"
            )
    else:
        lost = regressions(baseline, report)
        if lost:
            reasons.append(
                f"{len(lost)} task(s) passed in the baseline and fail now: {', '.join(lost)}"
            )
    if min_pass_rate is not None and (report.n == 0 or report.pass_rate < min_pass_rate):
        reasons.append(
            f"pass rate {num(report.pass_rate, 3)} is below --min-pass-rate {min_pass_rate:g}"
        )
    return reasons


def run(args: argparse.Namespace) -> int:
    from ..ci.github import command
    from ..ci.junit import task_cases, to_xml
    from ..ci.markdown import tasks_markdown
    from ..harness import (
        TaskReport,
        format_report,
        load_agent,
        read_report,
        read_tasks,
        regressions,
        report_json,
        run_tasks,
    )
    from ..harness.guard import check_timeout

    # Cheap checks first: a bad flag, spec or unreadable baseline should not cost an agent run.
    timeout = check_timeout(args.task_timeout, "--task-timeout")
    check_stdout(args)
    agent = load_agent(args.agent, args.app_dir)
    baseline = read_report(args.baseline) if args.baseline else None
    task_file = read_tasks(args.tasks_file)
    for problem in task_file.problems:
        print(inline(problem), file=sys.stderr)  # a task file's line: inert (``_text``)

    stdout = sys.stdout
    out = main_output(args, stdout)
    # Whatever the agent prints must not end up inside the table or the JSON object. The report
    # is printed inside the redirect too: an abandoned (timed-out) agent may still be printing.
    with contextlib.redirect_stdout(sys.stderr):
        if task_file.tasks:
            report = run_tasks(agent, task_file.tasks, label=args.agent, timeout=timeout)
        else:  # every line was bad; they are reported above, and the exit status says so
            report = TaskReport(results=[], agent=args.agent)
        if args.json:
            errors = [str(p) for p in task_file.problems]
            data = report_json(report, baseline, errors)
            print(inert_json(json.dumps(data, ensure_ascii=False, indent=2)), file=out)
        else:
            print(inline_lines(format_report(report, baseline)), end="", file=out)
        out.flush()
        # The tasks that make the gate fail: regressions against a baseline, else every failure.
        if baseline is not None:
            lost, kind = regressions(baseline, report), "regression"
        else:
            lost, kind = [r.id for r in report.results if not r.passed], "failed"

        def annotations() -> list[str]:
            by_id = report.by_id()
            lines = [
                command(
                    "error",
                    "; ".join(by_id[tid].reasons),
                    title=f"research-judge tasks: {kind} {tid}",
                )
                for tid in lost
            ]
            lines += [
                command(
                    "error",
                    p.message,
                    title="research-judge tasks: bad task line",
                    file=p.path,
                    line=p.line,
                )
                for p in task_file.problems
            ]
            return lines

        emit(
            args,
            junit=lambda: to_xml("research-judge tasks", task_cases(report, baseline)),
            summary=lambda: tasks_markdown(report, baseline),
            annotations=annotations,
            stdout=stdout,
        )

    if task_file.problems:
        return ExitCode.FAILED
    reasons = gate_failures(report, baseline, args.min_pass_rate)
    for reason in reasons:
        # The reasons name task ids from the tasks file: inert (``_text``).
        print(f"research-judge tasks: failing: {inline(reason)}", file=sys.stderr)
    return ExitCode.FLAGGED if reasons else ExitCode.OK
