"""``-`` as an input file: standard input, spooled to a temporary file first.

A grade run reads its sessions more than once (a progress count, a seeded sample, the run), and
standard input can be read only once; the copy lives in a temporary folder named after it
(``research-judge-stdin-*/stdin.jsonl``, which is the name errors then show) and is removed when
the run ends, whatever happens.

The light verbs (``validate``, ``compare``, ``report``, ``stability``, ``tasks run``) name the
inputs that may be ``-`` with ``set_defaults(stdin_inputs={attribute: shown name})``;
``stdin_inputs`` swaps the one given as ``-`` for its spooled copy before the verb runs, so each
verb reads a path as usual (and names the copy in its errors).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ..errors import ConfigError

STDIN = "-"
# Labels are CSV unless their name says JSONL: a copy of stdin is named after its first byte.
_JSONL_START = b"{"


@contextmanager
def spooled_stdin(name: str = "stdin.jsonl") -> Iterator[Path]:
    import shutil
    import tempfile

    stream = sys.stdin
    if stream is None or stream.isatty():
        # A terminal would wait, without a word, for input typed until Ctrl-D; a closed stdin
        # has nothing to read. Both are a command typed without its pipe.
        where = "a terminal" if stream is not None else "closed"
        raise ConfigError(
            f"'-' reads standard input, which is {where}: pipe the data in "
            "(`cat FILE | research-judge ... -`) or give a path instead of '-'"
        )
    with tempfile.TemporaryDirectory(prefix="research-judge-stdin-") as folder:
        path = Path(folder) / name
        with path.open("wb") as handle:
            shutil.copyfileobj(stream.buffer, handle)
        yield path


@contextmanager
def stdin_inputs(args: argparse.Namespace, names: Mapping[str, str]) -> Iterator[None]:
    """Point the one input of ``names`` given as ``-`` at a spooled copy of standard input.

    ``names`` maps each attribute of ``args`` that may be ``-`` to the name the user typed
    (``RESULTS``, ``--labels``), for the error when two of them are.
    """
    # An input given more than once (validate's --labels) is a list; any one of it may be `-`.
    dashed = [name for name in names if STDIN in _given(getattr(args, name, None))]
    if not dashed:
        yield
        return
    if len(dashed) > 1:
        raise ConfigError(
            "'-' (standard input) can be given once; got it for "
            + " and ".join(names[name] for name in dashed)
        )
    [name] = dashed
    with spooled_stdin("stdin") as raw:
        path = raw.with_name("stdin.jsonl" if _looks_like_jsonl(raw) else "stdin.csv")
        raw.rename(path)
        given = getattr(args, name)
        if isinstance(given, list):
            if given.count(STDIN) > 1:
                raise ConfigError(
                    f"'-' (standard input) can be given once; got it twice for {names[name]}"
                )
            setattr(args, name, [str(path) if g == STDIN else g for g in given])
        else:
            setattr(args, name, str(path))
        args.stdin_input = name  # which one it was: a verb may need to know (report's run date)
        yield


def _given(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _looks_like_jsonl(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(_JSONL_START) or not head
