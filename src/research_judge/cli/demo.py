"""``research-judge demo``: the whole story offline, from the installed package."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._help import DefaultsFormatter
from .config import add_config_flag


def register(subparsers: Any) -> None:
    from ._demo import DEFAULT_OUT

    p = subparsers.add_parser(
        "demo",
        help="run the offline demo on the bundled fixtures",
        description=(
            "Grade the bundled sessions with recorded judge replies (no network, no key), "
            "validate against human labels, compare with the previous agent version, write the "
            "HTML and Markdown reports and run the task harness. The fixtures are copied into "
            "--out first, so every command shown can be re-run from there. A folder that exists "
            "is only replaced when an earlier demo made it."
        ),
        formatter_class=DefaultsFormatter,
    )
    p.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, metavar="DIR", help="folder the demo writes"
    )
    add_config_flag(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ._demo import run_demo

    return run_demo(args.out)
