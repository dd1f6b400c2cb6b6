"""Run the batch-engine benchmarks and print a table of figures against targets.

    .venv/bin/python benchmarks/run.py              # full sizes (what README.md reports)
    .venv/bin/python benchmarks/run.py --quick      # small sizes, about a minute
    .venv/bin/python benchmarks/run.py --only cpu --profile

Every fake server runs in its own process on 127.0.0.1 and stops by itself; files go to a
temporary folder unless ``--workdir`` is given. Missed targets are reported, not fatal, unless
``--strict``; a benchmark that crashes makes the exit status 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_batch
import bench_convert
import bench_cpu
import bench_efficiency
import bench_kill_resume
import bench_rate_limit
import bench_rss
import bench_scale
import bench_startup
from pipeline import Figure

Bench = Callable[..., list[Figure]]

# name -> (function, full-size keyword arguments, quick keyword arguments)
BENCHMARKS: dict[str, tuple[Bench, dict[str, Any], dict[str, Any]]] = {
    "efficiency": (bench_efficiency.run, {}, {"sessions": 80}),
    "cpu": (bench_cpu.run, {}, {"sessions": 150, "repeats": 1}),
    "rss": (bench_rss.run, {}, {"small": 200, "large": 2000, "http_mid": None}),
    "rate-limit": (bench_rate_limit.run, {}, {"sessions": 40, "retry_after": 0.5}),
    "startup": (bench_startup.run, {}, {"repeats": 1}),
    # 1,000,000 lines: `make bench-scale` (bench_scale.py --lines 1000000).
    "scale": (bench_scale.run, {"lines": 100_000}, {"lines": 2000}),
    "convert": (bench_convert.run, {}, {"sessions": 400, "rounds": 1}),
    "batch": (bench_batch.run, {}, {"sessions": 200, "poll": 0.1}),
    "kill-resume": (
        bench_kill_resume.run,
        {},
        {
            "sessions": 120,
            "cases": (bench_kill_resume.Case((0.3,)), bench_kill_resume.Case((0.2, 0.6), 0.01)),
        },
    ),
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes: proves the scripts work")
    p.add_argument("--only", choices=sorted(BENCHMARKS), action="append", help="run just these")
    p.add_argument("--profile", action="store_true", help="cpu: print a cProfile of the pipeline")
    p.add_argument("--workdir", type=Path, help="keep generated files here (default: temporary)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = p.parse_args(argv)
    names = args.only or list(BENCHMARKS)
    figures: list[Figure] = []
    crashed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rj-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for name in names:
            fn, full, quick = BENCHMARKS[name]
            kwargs = dict(quick if args.quick else full)
            if name == "cpu" and args.profile:
                kwargs["profile"] = True
            print(f"== {name} ==", flush=True)
            started = time.perf_counter()
            try:
                figures += fn(workdir, **kwargs)
            except Exception:
                traceback.print_exc()
                crashed.append(name)
            print(f"== {name}: {time.perf_counter() - started:.0f}s ==\n", flush=True)
    print(format_table(figures, quick=args.quick))
    if crashed:
        print(f"crashed: {', '.join(crashed)}")
        return 1
    missed = [f for f in figures if f.ok is False]
    return 1 if args.strict and missed else 0


def format_table(figures: list[Figure], *, quick: bool = False) -> str:
    rows = [("benchmark", "figure", "measured", "target", "")]
    for f in figures:
        verdict = "" if f.ok is None else ("ok" if f.ok else "MISSED")
        rows.append((f.benchmark, f.name, f.value, f.target, verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    title = "summary" + (
        " (--quick sizes: figures are not comparable to the targets)" if quick else ""
    )
    return f"{title}\n" + "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
