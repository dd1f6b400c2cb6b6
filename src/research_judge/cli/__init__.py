"""The ``research-judge`` command: a thin shell over the library.

Each verb lives in its own module with ``register(subparsers)`` (flags and help) and a ``run``
function set as the parser default. Heavy imports (aiohttp, the anthropic SDK, numpy, scipy,
scikit-learn) happen inside ``run``, so ``--help`` loads none of them (about 0.5 s in all on the
2-core dev machine, most of it the flag defaults' modules: pydantic, jinja2, tenacity). Errors from
the library become one line on stderr and an exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ..errors import ExitCode, ResearchJudgeError
from . import compare, convert, grade, report, stability, tasks, validate

VERBS = (grade, validate, compare, report, stability, tasks, convert)


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
