"""``research-judge export RESULTS.jsonl --parquet FILE``: a results file as Parquet tables."""

from __future__ import annotations

import argparse
from typing import Any

from ._ci import add_force_flag
from .config import add_config_flag

DESCRIPTION = """\
Write a results file as Parquet, for querying a large run in DuckDB, Polars, pandas or a
warehouse: FILE holds one row per session in flat columns (verdict, ratios, scores, citation
audit, evidence, usage and cost, context diagnostics, the judge's provider, model and
fingerprint); FILE's sibling NAME.verdicts.parquet holds one row per call-1 verdict. The
README lists every column. The results are read as a stream; both files are written to
temporary files and renamed into place only when every line was read, so a bad line (named
with file:line, exit 2) leaves neither. An existing file there is replaced only when it is a
Parquet file (--force: whatever it is). Needs pyarrow: pip install 'research-judge[parquet]'."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="write a results file as Parquet (sessions and verdicts tables)",
        description=DESCRIPTION,
    )
    p.add_argument("results", metavar="RESULTS.jsonl", help="results written by `grade`")
    p.add_argument(
        "--parquet",
        required=True,
        metavar="FILE",
        help="the sessions table; the verdicts go to FILE's .verdicts.parquet sibling",
    )
    add_force_flag(p)
    add_config_flag(p)
    p.set_defaults(run=run, stdin_inputs={"results": "RESULTS"})


def run(args: argparse.Namespace) -> int:
    from ..errors import ExitCode
    from ..results.parquet import check_parquet_targets, export_parquet, verdicts_path
    from ..safety import check_distinct

    check_distinct(
        [("RESULTS", args.results)],
        [("--parquet", args.parquet), ("the verdicts table", str(verdicts_path(args.parquet)))],
    )
    check_parquet_targets(args.parquet, force=args.force)
    done = export_parquet(args.results, args.parquet)
    print(
        f"wrote {done.sessions_path} ({done.sessions} sessions) and {done.verdicts_path} "
        f"({done.verdicts} verdicts)"
    )
    return ExitCode.OK
