"""``research-judge merge SHARD... --sessions SESSIONS.jsonl --out RESULTS.jsonl``."""

from __future__ import annotations

import argparse
from typing import Any

from ._ci import add_force_flag
from .config import add_config_flag

DESCRIPTION = """\
Join the results of `grade --shard I/N` runs (one results file per shard, all N of them) into
one results file in the order of the sessions file they were graded from. Refused, with
nothing written: shards graded by different judges, two files of the same shard (overlapping),
a file that is not one shard of N (N = the number of files given), or a line the sessions file
does not have at that place. The output is written to a temporary file and renamed into place;
an input is never overwritten, and an existing --out only when it is a results file (--force:
whatever it is)."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "merge",
        help="join the results of grade --shard runs, in input order",
        description=DESCRIPTION,
    )
    p.add_argument("shards", metavar="SHARD", nargs="+", help="results of one grade --shard run")
    p.add_argument(
        "--sessions",
        required=True,
        metavar="SESSIONS.jsonl",
        help="the sessions file the shards were graded from (it gives the order)",
    )
    p.add_argument("--out", required=True, metavar="RESULTS.jsonl", help="results file to write")
    add_force_flag(p)
    add_config_flag(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from .._files import check_replaceable
    from ..errors import ExitCode
    from ..results.merge import merge_shards
    from ..safety import check_distinct

    check_distinct(
        [("--sessions", args.sessions), *((f"shard {s}", s) for s in args.shards)],
        [("--out", args.out)],
    )
    # Only a results file may be replaced (its lines open with the session id), or any with --force.
    check_replaceable("--out", args.out, _results_file, force=args.force)
    done = merge_shards(args.shards, args.sessions, args.out)
    print(f"merged {done.shards} shard(s): {done.sessions} results in {args.out}")
    return ExitCode.OK


def _results_file(head: bytes) -> bool:
    return head.startswith(b'{"session_id"')
