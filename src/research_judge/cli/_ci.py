"""The CI side of every verb: ``--junit``, ``--annotations`` and the GitHub step summary.

A verb builds its JUnit document, Markdown summary and annotations lazily (callables), and
``emit`` produces only what was asked for: nothing is built outside CI.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from .._files import check_replaceable
from ..ci.github import SUMMARY_ENV, annotations_wanted, append_step_summary
from ..ci.output import STDOUT, write_output
from ..errors import ConfigError


def add_ci_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("CI")
    group.add_argument(
        "--junit",
        metavar="FILE",
        help="also write the outcome as JUnit XML to FILE (- for stdout; the usual output then "
        "goes to stderr)",
    )
    add_force_flag(group)
    group.add_argument(
        "--annotations",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="print GitHub Actions workflow commands (::error/::warning) for failures "
        "(default: on when GITHUB_ACTIONS=true)",
    )


def add_force_flag(parser: argparse.ArgumentParser | Any) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing output file even if it is not one research-judge wrote",
    )


def check_stdout(args: argparse.Namespace) -> None:
    """Refuse two outputs on stdout, or a --junit file that is not ours, before any work."""
    if getattr(args, "json", False) and args.junit == STDOUT:
        raise ConfigError("--json and --junit - both want stdout; give --junit a file")
    if args.junit is not None:
        check_replaceable("--junit", args.junit, _junit_file, force=args.force)


def _junit_file(head: bytes) -> bool:
    return b'<testsuites name="research-judge"' in head


def main_output(args: argparse.Namespace, stdout: TextIO | None = None) -> TextIO:
    """Where the verb's own table or JSON goes: stderr when stdout carries the JUnit XML."""
    return sys.stderr if args.junit == STDOUT else (stdout or sys.stdout)


def emit(
    args: argparse.Namespace,
    *,
    junit: Callable[[], str],
    summary: Callable[[], str],
    annotations: Callable[[], list[str]],
    stdout: TextIO | None = None,
) -> None:
    """Write the JUnit file, append the step summary, print the annotations (as asked).

    ``stdout`` is the real standard output when ``sys.stdout`` is redirected (tasks run sends
    the agent's prints to stderr).
    """
    stdout = stdout or sys.stdout
    if args.junit is not None:
        write_output(args.junit, junit(), "JUnit file", stdout)
    step_summary(args.verb, summary)
    if annotations_wanted(args.annotations):
        # Workflow commands are read from the job log; on stderr when stdout is machine output.
        machine = getattr(args, "json", False) or args.junit == STDOUT
        stream = sys.stderr if machine else stdout
        for line in annotations():
            print(line, file=stream)


def step_summary(verb: str, summary: Callable[[], str]) -> None:
    """Append the verb's Markdown to ``$GITHUB_STEP_SUMMARY`` when it is set (built only then)."""
    if not os.environ.get(SUMMARY_ENV):
        return
    try:
        append_step_summary(summary())
    except OSError as exc:
        # The job's summary page is a convenience; the verb's own outcome stands.
        print(f"research-judge {verb}: warning: step summary not written: {exc}", file=sys.stderr)
