"""What every exit status of the ``research-judge`` command means (the enum is
``errors.ExitCode``; a test checks every member has a meaning here).

A CI script branches on these, so each number means one thing across every verb. The table below
is what ``research-judge --help`` prints and what docs/ci.md shows (a test keeps them equal).

Bad input and bad usage are 2 on every verb (the contract's code for them). A ``grade`` run whose
input was all good but where some sessions ended with a judge error (the API failed after every
retry, every reply broke the wire format, the session did not fit the window) ends with 6, so a
CI script can tell "fix your data" from "the judge or the provider misbehaved" (issue 16, which
the contract says wins where the two disagree). An unreadable offloaded tool result is the
user's input, so it is 2; with both kinds in one run, 2 wins: the input is the first thing to fix.
"""

from __future__ import annotations

import textwrap

from .errors import ExitCode

__all__ = ["MEANING", "ExitCode", "markdown_table", "table"]

MEANING: dict[ExitCode, str] = {
    ExitCode.OK: "done: everything ran and every gate passed",
    ExitCode.FLAGGED: (
        "a gate failed: compare found a regressed session or a significant drop (or the judge "
        "changed), tasks run found a failed task (with --baseline: a regression), a validate gate "
        "was not met"
    ),
    ExitCode.FAILED: (
        "bad usage or bad input (a flag, the config file, an input file or line, an unreadable "
        "offloaded tool result); the good sessions are still graded"
    ),
    ExitCode.PROVIDER_DOWN: (
        "the provider could not be reached or kept failing: the run stopped, resumable"
    ),
    ExitCode.STOPPED: "--max-cost reached: the run stopped before sending more, resumable",
    ExitCode.OUTPUT_FAILED: (
        "an output could not be written (disk full, read-only, locked by another run)"
    ),
    ExitCode.JUDGE_FAILED: (
        "grade: the input was good, but some sessions ended with a judge error (API failure, "
        "invalid replies after every re-ask, too large for the window); the others are graded "
        "and --retry-errors re-sends the failed ones"
    ),
    ExitCode.INTERNAL: "internal error (a bug: the traceback is printed; please report it)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C): what was written is kept, resumable",
    ExitCode.PIPE_CLOSED: (
        "the reader of stdout went away (piped into head, say): the output was cut short"
    ),
    ExitCode.TERMINATED: "terminated (SIGTERM): what was written is kept, resumable",
}


def table() -> str:
    """The exit codes as aligned plain-text lines, for ``--help``."""
    return "\n".join(
        textwrap.fill(
            MEANING[code],
            width=96,
            initial_indent=f"  {int(code):>3}  ",
            subsequent_indent=" " * 7,
        )
        for code in ExitCode
    )


def markdown_table() -> str:
    """The exit codes as the Markdown table docs/ci.md carries."""
    rows = ["| code | meaning |", "|---:|---|"]
    rows += [f"| {int(code)} | {MEANING[code]} |" for code in ExitCode]
    return "\n".join(rows)
