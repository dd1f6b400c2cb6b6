"""``make demo``: ``research-judge demo`` from the checkout, into ``demo-out/``.

The steps live in ``research_judge.cli._demo`` (shipped in the wheel, run by
``research-judge demo``); this script only keeps ``make demo``'s old folder: ``demo-out/`` at the
root of the checkout (gitignored). Each run replaces the files the previous one wrote there, and
nothing else.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from research_judge.cli._demo import run_demo

ROOT = Path(__file__).resolve().parents[1]
OUT = Path("demo-out")


def main() -> int:
    os.chdir(ROOT)
    # make installs the command into .venv, not onto PATH: say so before the first command.
    print(
        "make demo: to run the commands below by hand, type .venv/bin/research-judge, or run "
        ". .venv/bin/activate first",
        flush=True,
    )
    return run_demo(OUT)


if __name__ == "__main__":
    sys.exit(main())
