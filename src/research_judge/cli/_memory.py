"""Out of memory: one clear line naming the inputs and their sizes, and what to do instead.

A ``MemoryError`` is not a bug of ours (exit 70) and must not look like one: it says the input
is larger than this machine's memory (or the limit put on the process) allows for that verb.
The verbs that read results (validate, compare, report, stability) hold a few hundred bytes a
session, so a million results fit in well under a gigabyte; what is left is the machine's size.
"""

from __future__ import annotations

import argparse
import os

# The flags of each verb that name an input file, in the order they are listed.
_INPUTS = ("results", "baseline", "current", "rejudged", "labels", "sessions")

_ADVICE = {
    "grade": (
        "grade streams its sessions and keeps a few numbers per session; give the process "
        "more memory, or split the run with --shard I/N (each shard to its own --out, on one "
        "machine or several) and join the shards with `research-judge merge`"
    ),
    "default": (
        "give the process more memory, or convert the results with `research-judge export "
        "RESULTS.jsonl --parquet FILE` and query them with DuckDB, Polars or pandas"
    ),
}


def memory_message(args: argparse.Namespace) -> str:
    """What ran out, named by its input files and their sizes, and the way around it."""
    named = []
    for flag in _INPUTS:
        value = getattr(args, flag, None)
        if isinstance(value, str) and value != "-":
            named.append(f"{value} ({_size(value)})")
    what = ", ".join(named) if named else "the input"
    advice = _ADVICE.get(args.verb, _ADVICE["default"])
    return f"out of memory while reading {what}: {advice}"


def _size(path: str) -> str:
    try:
        size = float(os.path.getsize(path))
    except OSError:
        return "size unknown"
    for unit in ("bytes", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")
