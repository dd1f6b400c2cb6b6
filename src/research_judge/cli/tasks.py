"""`research-judge tasks run`: the deterministic task harness from the command line.

Exit status: 0 when nothing regressed against the baseline (or no baseline was given), 1 when a
task that passed in the baseline fails now, 2 when the task file had bad lines (reported as
``file:line: what`` on stderr; the good tasks still run). Bad input wins over a regression: a
comparison with tasks missing from it is not one to act on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from .._text import inline_lines
from ..errors import ExitCode
from ._ci import add_ci_flags, check_stdout, emit, main_output
from .config import add_config_flag


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
            "with --baseline also the regressions and fixes. Exit 0 when nothing regressed, "
            "1 when a task that passed in the baseline fails now, 2 when the task file has "
            "bad lines (the good tasks still run)."
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
        help="a report saved earlier with --json; list regressions and fixes against it",
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
        print(problem, file=sys.stderr)

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
            print(json.dumps(data, ensure_ascii=False, indent=2), file=out)
        else:
            print(inline_lines(format_report(report, baseline)), end="", file=out)
        out.flush()
        lost = regressions(baseline, report) if baseline is not None else []

        def annotations() -> list[str]:
            by_id = report.by_id()
            lines = [
                command(
                    "error",
                    "; ".join(by_id[tid].reasons),
                    title=f"research-judge tasks: regression {tid}",
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
    if lost:
        return ExitCode.FLAGGED
    return ExitCode.OK
