"""`research-judge compare BASELINE CURRENT`: did the current run get worse? (contract section 8)

Exit 0 when no metric dropped by more than the threshold, 1 when one did, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..compare.core import DEFAULT_CRITICAL_THRESHOLD, DEFAULT_THRESHOLD
from ..errors import ExitCode, UserError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare two results files and flag metrics that dropped",
        description=(
            "Compare two results files on the sessions they share: pass rate and the six "
            "criteria (scores on the 0..1 scale as (score - 1) / 2), each with a paired "
            "significance test, plus regressions (pass -> fail) and fixes. Exit 0 when nothing "
            "dropped by more than the threshold, 1 when something did, 2 on bad input."
        ),
    )
    p.add_argument("baseline", metavar="BASELINE.jsonl", help="results of the reference run")
    p.add_argument("current", metavar="CURRENT.jsonl", help="results of the run to check")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (the contract's keys plus tests, judges, movers, warnings)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        metavar="X",
        help="flag a metric that drops by more than X on the 0..1 scale (default %(default)s)",
    )
    p.add_argument(
        "--critical-threshold",
        type=float,
        default=DEFAULT_CRITICAL_THRESHOLD,
        metavar="X",
        help="a pass-rate drop beyond X is flagged critical rather than warning "
        "(default %(default)s)",
    )
    p.add_argument(
        "--rejudged",
        metavar="REJUDGED.jsonl",
        help="the baseline's sessions graded by the current judge: splits every delta into "
        "judge_shift (REJUDGED - BASELINE) and agent_change (CURRENT - REJUDGED), each with "
        "its paired test",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..compare import compare_runs, render_text
    from ..results.model import read_results

    baseline = read_results(args.baseline)
    current = read_results(args.current)
    rejudged = None if args.rejudged is None else read_results(args.rejudged)
    cmp = compare_runs(
        baseline,
        current,
        threshold=args.threshold,
        critical_threshold=args.critical_threshold,
        rejudged=rejudged,
    )
    if cmp.n_common == 0:
        # A gate that passes because it compared nothing would hide a broken pipeline.
        raise UserError(
            f"{args.baseline} and {args.current} share no session ids: nothing to compare"
        )
    if args.json:
        print(json.dumps(cmp.to_dict(), indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print(render_text(cmp), end="")
    return ExitCode.FLAGGED if cmp.flagged else ExitCode.OK
