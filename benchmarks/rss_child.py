"""Child process of benchmark 3: grade one file, then print peak RSS and timings as JSON.

    python rss_child.py SESSIONS OUT --kind http --base-url URL [--concurrency 40]
    python rss_child.py SESSIONS OUT --kind instant

``http`` is the real chain against the fake server; ``instant`` is the same engine, judge and
``ResilientClient`` over ``InstantClient`` (no HTTP), for sizes the HTTP path cannot finish in
reasonable time.

Peak RSS is the kernel's high-water mark for this process image, imports included: ``VmHWM``
from /proc/self/status on Linux. ``ru_maxrss`` is reported beside it but is not used: Linux
carries the parent's peak across fork and exec into it, so a child started by a large parent
would report the parent's size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from pathlib import Path

from instant_client import InstantClient
from research_judge.cost.prices import PriceTable
from research_judge.engine import ResilientClient, RunOptions, RunStats, grade_file
from research_judge.judge.grader import Judge


async def grade(args: argparse.Namespace) -> RunStats:
    if args.kind == "http":
        from pipeline import build_chain  # imports aiohttp: only where it is used

        judge, client = build_chain(args.base_url, args.concurrency)
    else:
        client = ResilientClient(InstantClient(), concurrency=args.concurrency)
        judge = Judge(client, prices=PriceTable.load())
    try:
        return await grade_file(
            args.sessions, args.out, judge, RunOptions(concurrency=args.concurrency)
        )
    finally:
        await client.aclose()


def peak_rss_kb() -> int:
    """This process image's peak resident set size in kB."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, bytes on macOS


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("sessions", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--kind", choices=("http", "instant"), required=True)
    p.add_argument("--base-url")
    p.add_argument("--concurrency", type=int, default=40)
    args = p.parse_args()
    baseline_kb = peak_rss_kb()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    stats = asyncio.run(grade(args))
    report = {
        "maxrss_kb": peak_rss_kb(),
        "ru_maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "baseline_kb": baseline_kb,
        "wall": time.perf_counter() - wall0,
        "cpu": time.process_time() - cpu0,
        "graded": stats.graded,
        "errors": stats.errors,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
