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

from ..errors import ExitCode


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
    run_parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
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

    # Cheap checks first: a bad spec or an unreadable baseline should not cost an agent run.
    agent = load_agent(args.agent, args.app_dir)
    baseline = read_report(args.baseline) if args.baseline else None
    task_file = read_tasks(args.tasks_file)
    for problem in task_file.problems:
        print(problem, file=sys.stderr)

    if task_file.tasks:
        # Whatever the agent prints must not end up inside the table or the JSON object.
        with contextlib.redirect_stdout(sys.stderr):
            report = run_tasks(agent, task_file.tasks, label=args.agent)
    else:  # every line was bad; they are reported above, and the exit status says so
        report = TaskReport(results=[], agent=args.agent)

    if args.json:
        errors = [str(p) for p in task_file.problems]
        print(json.dumps(report_json(report, baseline, errors), ensure_ascii=False, indent=2))
    else:
        print(format_report(report, baseline), end="")

    if task_file.problems:
        return ExitCode.FAILED
    if baseline is not None and regressions(baseline, report):
        return ExitCode.FLAGGED
    return ExitCode.OK
