"""The ``research-judge`` command: a thin shell over the library.

Each verb lives in its own module with ``register(subparsers)`` (flags and help) and a ``run``
function set as the parser default. Heavy imports (aiohttp, the SDKs, numpy, scipy, scikit-learn,
and pydantic, Jinja, tenacity, asyncio too) happen inside ``run``: the flags take their defaults
from settings modules that import none of them (``clients.settings``, ``judge.settings``,
``judge.policy``, ``compare.model``), so ``--help`` costs about 0.1 s of CPU against 0.01 s for
``python -c pass`` (0.41 s while the defaults came from the heavy modules). Errors from the
library become one line on stderr and an exit code (the table in ``exit_codes``).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from .._text import inline_lines
from .._version import __version__
from ..errors import ConfigError, ExitCode, ResearchJudgeError
from ..exit_codes import table
from ..safety.settings import redact_urls
from . import (
    compare,
    convert,
    demo,
    export,
    grade,
    label,
    merge,
    report,
    serve_fake,
    stability,
    tasks,
    validate,
)
from ._stdin import stdin_inputs
from ._suggest import check_words
from .config import apply_config, config_notice, drop_config_lists, find_config

VERBS = (
    grade,
    validate,
    label,
    compare,
    report,
    stability,
    export,
    merge,
    tasks,
    convert,
    demo,
    serve_fake,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="research-judge",
        description=(
            "Grade logged research-agent sessions with an LLM judge, validate the judge against "
            "human labels, compare runs and gate CI on regressions."
        ),
        epilog=f"exit status (every verb):\n{table()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version"
    )
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb in VERBS:
        verb.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            code = _main(argv)
        except SystemExit:  # argparse after --help, --version or a usage error
            sys.stdout.flush()
            raise
        # Flushed here, not at interpreter exit, so a reader that left is seen while we can act.
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # `research-judge compare ... | head`: the reader left. Not an error worth a traceback;
        # the status a shell gives a program killed by SIGPIPE tells a pipeline what happened.
        _silence_stdout()
        return ExitCode.PIPE_CLOSED


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        config = find_config(words)
        lists = apply_config(parser, words, config) if config is not None else {}
        notice = config_notice(config, words, parser) if config is not None else ""
        if notice and not {"-h", "--help", "--version"} & set(words):
            print(notice, file=sys.stderr)
    except ConfigError as exc:
        if not {"-h", "--help", "--version"} & set(words):  # help stays reachable
            print(f"research-judge: error: {_shown(exc)}", file=sys.stderr)
            return exc.exit_code
        lists = {}
    check_words(parser, words)
    args = parser.parse_args(words)
    drop_config_lists(args, lists)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        with stdin_inputs(args, getattr(args, "stdin_inputs", {})):
            return run(args)
    except BrokenPipeError:
        raise
    except ResearchJudgeError as exc:
        # Messages carry values from the user's files (each line inert, ``_text``) and may carry
        # a URL (its key-like parts hidden).
        print(f"research-judge {args.verb}: error: {_shown(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"research-judge {args.verb}: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except MemoryError as exc:
        # Not a bug: the input is larger than this machine allows. The traceback's frames hold
        # what filled the memory; dropped first so the message can be built.
        exc.__traceback__ = None
        del exc
        from ._memory import memory_message

        print(f"research-judge {args.verb}: error: {memory_message(args)}", file=sys.stderr)
        return ExitCode.FAILED
    except Exception:
        # A bug, not a verdict: its own exit code, so CI never reads it as "a gate failed".
        traceback.print_exc()
        print(
            f"research-judge {args.verb}: internal error (exit {int(ExitCode.INTERNAL)}); "
            "please report it with the traceback above",
            file=sys.stderr,
        )
        return ExitCode.INTERNAL


def _shown(exc: BaseException) -> str:
    return inline_lines(redact_urls(str(exc)))


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail a second time."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (tests capture stdout): nothing will be flushed to a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def entry() -> None:
    sys.exit(main())
