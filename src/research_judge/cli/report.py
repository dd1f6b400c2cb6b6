"""`research-judge report` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("report", help="(not yet implemented)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError("report")
