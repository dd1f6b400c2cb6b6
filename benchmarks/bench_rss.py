"""Benchmark 3: peak memory of a grading process at 1k and 100k sessions (growth < 50 MB).

Each size runs in a fresh child (``rss_child.py``) whose own peak RSS (VmHWM) is the figure. Both
sizes use the same client kind: the real HTTP chain at zero latency when the large size would
finish within ``http_limit`` seconds (projected from the small run), otherwise the same engine
over ``InstantClient`` (no HTTP), which the output says. An optional middle size run over HTTP
shows whether the HTTP path itself grows with the number of sessions.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from judge_replies import write_sessions
from pipeline import Figure
from server_process import BENCH_DIR, FakeServerProcess

TARGET_MB = 50.0
CHILD_TIMEOUT = 1800.0


def run(
    workdir: Path,
    *,
    small: int = 1000,
    large: int = 100_000,
    http_mid: int | None = 10_000,
    http_limit: float = 480.0,
    concurrency: int = 40,
) -> list[Figure]:
    figures: list[Figure] = []
    paths = {n: workdir / f"rss.{n}.sessions.jsonl" for n in {small, large, http_mid or small}}
    for n, path in paths.items():
        started = time.perf_counter()
        write_sessions(path, n)
        print(
            f"[rss] wrote {n} sessions ({path.stat().st_size / 1e6:.0f} MB) "
            f"in {time.perf_counter() - started:.1f}s"
        )
    with FakeServerProcess(latency=0.0) as server:
        http_small = _child(paths[small], workdir, "http", server.base_url, concurrency)
        projected = http_small["wall"] * large / small
        use_http = projected <= http_limit
        http_runs = {small: http_small}
        if http_mid and http_mid != small:
            http_runs[http_mid] = _child(
                paths[http_mid], workdir, "http", server.base_url, concurrency
            )
        if use_http:
            http_runs[large] = _child(paths[large], workdir, "http", server.base_url, concurrency)
    for n, report in sorted(http_runs.items()):
        print(
            f"[rss] http    {n:>7} sessions: peak RSS {_mb(report['maxrss_kb']):.1f} MB "
            f"(at start {_mb(report['baseline_kb']):.1f} MB), wall {report['wall']:.1f}s, "
            f"errors {report['errors']}"
        )
    if http_mid and http_mid in http_runs and http_mid != small:
        growth = _mb(http_runs[http_mid]["maxrss_kb"] - http_small["maxrss_kb"])
        figures.append(
            Figure("rss", f"growth {small}->{http_mid}, HTTP", f"{growth:.1f} MB", "", None)
        )
    if use_http:
        kind, runs = "http", {small: http_small, large: http_runs[large]}
        note = "real HTTP chain at zero latency"
    else:
        kind = "instant"
        note = (
            f"HTTP at {large} projected at {projected:.0f}s (> {http_limit:.0f}s): both sizes "
            "use InstantClient (same engine, judge, ResilientClient; no HTTP)"
        )
        print(f"[rss] {note}")
        runs = {n: _child(paths[n], workdir, "instant", None, concurrency) for n in (small, large)}
        for n, report in sorted(runs.items()):
            print(
                f"[rss] instant {n:>7} sessions: peak RSS {_mb(report['maxrss_kb']):.1f} MB, "
                f"wall {report['wall']:.1f}s, errors {report['errors']}"
            )
    growth = _mb(runs[large]["maxrss_kb"] - runs[small]["maxrss_kb"])
    print(
        f"[rss] growth {small} -> {large} sessions ({kind}): {growth:.1f} MB "
        f"(target < {TARGET_MB:.0f} MB)"
    )
    for path in workdir.glob("rss.*"):
        path.unlink()  # the large files run to hundreds of MB
    return [
        Figure(
            "rss", f"peak RSS {small} ({kind})", f"{_mb(runs[small]['maxrss_kb']):.1f} MB", "", None
        ),
        Figure(
            "rss", f"peak RSS {large} ({kind})", f"{_mb(runs[large]['maxrss_kb']):.1f} MB", "", None
        ),
        Figure(
            "rss",
            f"growth {small}->{large} ({kind})",
            f"{growth:.1f} MB",
            f"< {TARGET_MB:.0f} MB",
            growth < TARGET_MB,
            note,
        ),
        *figures,
    ]


def _child(
    sessions: Path, workdir: Path, kind: str, base_url: str | None, concurrency: int
) -> dict[str, Any]:
    out = workdir / f"{sessions.name}.{kind}.out.jsonl"
    out.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        str(BENCH_DIR / "rss_child.py"),
        str(sessions),
        str(out),
        "--kind",
        kind,
        "--concurrency",
        str(concurrency),
    ]
    if base_url:
        cmd += ["--base-url", base_url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=CHILD_TIMEOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"rss child failed ({done.returncode}): {done.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out.unlink(missing_ok=True)
    if report["errors"]:
        raise RuntimeError(f"{kind} run over {sessions.name} had {report['errors']} errors")
    return report


def _mb(kb: float) -> float:
    return kb / 1024
