"""`research-judge report RESULTS.jsonl --html OUT.html [--md OUT.md]`: a run, readable.

The HTML page is self-contained (inline CSS and SVG, no scripts, nothing fetched); the Markdown
is a compact summary meant for a CI comment. Exit 0 once written; 2 on bad input or bad
flags (nothing is written then).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..compare.model import DEFAULT_THRESHOLD
from ..errors import ConfigError, ExitCode
from ..judge.policy import load_policy
from ..report import DEFAULT_WORST
from ._ci import add_force_flag, step_summary
from .config import add_config_flag


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report",
        help="write an HTML and/or Markdown report of one results file",
        description=(
            "Write a report of one graded run: headline numbers, per-criterion distributions, "
            "the worst sessions with the judge's findings and quotes, judge errors, tokens and "
            "cost; with --labels the judge's agreement with people, with --baseline the "
            "regressions against an older run. At least one of --html and --md is required."
        ),
    )
    p.add_argument("results", metavar="RESULTS.jsonl", help="results written by `grade`")
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="write a self-contained HTML page here (no network); - for stdout",
    )
    p.add_argument(
        "--md",
        metavar="OUT.md",
        help="write a compact Markdown summary here (for CI); - for stdout",
    )
    p.add_argument(
        "--labels",
        metavar="LABELS",
        help="human labels (CSV or JSONL, as for `validate`): adds judge-vs-human agreement",
    )
    p.add_argument(
        "--baseline",
        metavar="OLD.jsonl",
        help="results of an older run: adds the comparison table, regressions and fixes",
    )
    p.add_argument(
        "--rejudged",
        metavar="REJUDGED.jsonl",
        help="with --baseline: the baseline's sessions graded by the current judge; adds the "
        "judge shift / agent change split",
    )
    p.add_argument(
        "--worst",
        type=int,
        default=DEFAULT_WORST,
        metavar="N",
        help="how many of the worst sessions the HTML shows in detail (default %(default)s; "
        "the Markdown always lists at most 5)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        metavar="X",
        help="with --baseline: flag metrics that dropped by more than X (default %(default)s)",
    )
    add_force_flag(p)
    add_config_flag(p)
    # Any one of these may be `-`: standard input (cli._stdin).
    p.set_defaults(
        run=run,
        stdin_inputs={
            "results": "RESULTS",
            "labels": "--labels",
            "baseline": "--baseline",
            "rejudged": "--rejudged",
        },
    )


def run(args: argparse.Namespace) -> int:
    if args.html is None and args.md is None:
        raise ConfigError("give --html OUT.html and/or --md OUT.md: there is nothing to write")
    from ..report import STDOUT, render_markdown, write_report

    if args.rejudged is not None and args.baseline is None:
        raise ConfigError("--rejudged needs --baseline: it splits the baseline comparison")

    results = args.results
    if getattr(args, "stdin_input", None) == "results":
        from ..results.rows import ResultsRun

        # The spooled copy was written just now: given as rows, the run's date shows as unknown
        # rather than as the time of the pipe.
        results = ResultsRun.load(args.results)
    data = write_report(
        results,
        html=args.html,
        md=args.md,
        labels=args.labels,
        baseline=args.baseline,
        rejudged=args.rejudged,
        worst=args.worst,
        threshold=args.threshold,
        policy=load_policy(args.config),  # the floors grade read: stability margins
        force=args.force,
    )
    # With a report on stdout, the note about the other one must not end up inside it.
    note = sys.stderr if STDOUT in (args.html, args.md) else sys.stdout
    for path in (args.html, args.md):
        if path is not None and path != STDOUT:
            print(f"wrote {path}", file=note)
    step_summary("report", lambda: render_markdown(data))
    return ExitCode.OK
