"""The ``research-judge`` command: a thin shell over the library.

Each verb lives in its own module with ``register(subparsers)`` (flags and help) and a ``run``
function set as the parser default. Heavy imports (aiohttp, the SDKs, numpy, scipy, scikit-learn,
and pydantic, Jinja, tenacity, asyncio too) happen inside ``run``: the flags take their defaults
from settings modules that import none of them (``clients.settings``, ``judge.settings``,
``judge.policy``, ``compare.model``), so ``--help`` costs about 0.09 s of CPU against 0.01 s for
``python -c pass`` (it was 0.32 s while the defaults came from the heavy modules). Errors from the
library become one line on stderr and an exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ..errors import ExitCode, ResearchJudgeError
from . import compare, grade, report, stability, tasks, validate

VERBS = (grade, validate, compare, report, stability, tasks)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="research-judge",
        description=(
            "Grade logged research-agent sessions with an LLM judge, validate the judge against "
            "human labels, compare runs and gate CI on regressions."
        ),
    )
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb in VERBS:
        verb.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except ResearchJudgeError as exc:
        print(f"research-judge {args.verb}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"research-judge {args.verb}: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED


def entry() -> None:
    sys.exit(main())
