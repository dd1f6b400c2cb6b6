"""`research-judge stability RESULTS`: how often the judge changes its mind (`grade --repeats`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._text import inert_json, inline_lines
from ..errors import ConfigError, UserError
from ..stats import BOOTSTRAP_SEED, STABILITY_RESAMPLES
from ._ci import step_summary
from .config import add_config_flag


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "stability",
        help="how stable the judge is across repeated samples (results of grade --repeats K)",
        description=(
            "Read results graded with `grade --repeats K` and report Fleiss' kappa over the K "
            "samples' verdicts (and per 1-3 criterion) with a bootstrap interval, the flip rate "
            "(sessions whose samples disagree) and the unstable sessions, nearest the pass "
            "threshold first. Exit 0, or 2 on bad input or when no result carries samples."
        ),
    )
    p.add_argument("results", metavar="RESULTS.jsonl", help="results written by grade --repeats K")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument(
        "--seed",
        type=int,
        default=BOOTSTRAP_SEED,
        help=f"bootstrap seed (default: {BOOTSTRAP_SEED})",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=STABILITY_RESAMPLES,
        metavar="N",
        help=f"bootstrap resamples for the kappa intervals (default: {STABILITY_RESAMPLES}; "
        "0: no interval)",
    )
    add_config_flag(p)
    # Any one of these may be `-`: standard input (cli._stdin).
    p.set_defaults(run=run, stdin_inputs={"results": "RESULTS"})


def run(args: argparse.Namespace) -> int:
    from ..ci.markdown import text_block
    from ..results.rows import read_rows
    from ..validate.stability import render_text, stability

    if args.bootstrap < 0:
        raise ConfigError(f"--bootstrap must be 0 or more, got {args.bootstrap}")
    from ..judge.policy import load_policy

    report = stability(
        read_rows(args.results),
        seed=args.seed,
        n_boot=args.bootstrap,
        policy=load_policy(args.config),  # the floors grade used, for the unstable margins
    )
    if args.json:
        print(inert_json(json.dumps(report.to_dict(), indent=2, allow_nan=False)))
    else:
        sys.stdout.write(inline_lines(render_text(report)))  # every line inert (``_text``)
    if report.n_repeated == 0:
        raise UserError(f"{args.results}: no result carries repeated samples (grade --repeats K)")
    step_summary("stability", lambda: text_block("research-judge stability", render_text(report)))
    return 0
