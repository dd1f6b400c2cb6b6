"""Benchmark 2: client CPU per session at zero latency, pipeline vs the bare loops.

The pipeline and each floor of ``bare_loop`` (three SDK calls on the SDK's aiohttp transport,
plain aiohttp) run in this process against the same fake server (another process, so its CPU is not
counted) at the same concurrency, in turn, several rounds; the median of each is reported. The
target is pipeline / bare SDK ``create()`` loop (the issue's baseline). Pipeline / plain
aiohttp says what everything but the exchanges themselves costs: rendering, parsing, validation,
evidence checks, the engine and the writing. When the target is missed, the pipeline is profiled
(cProfile) and the top costs printed.
"""

from __future__ import annotations

import cProfile
import pstats
import statistics
from collections import defaultdict
from pathlib import Path

from bare_loop import FLOORS, in_turn
from cost_breakdown import breakdown, format_breakdown
from judge_replies import write_sessions
from pipeline import Figure, grade_clean, joined
from server_process import FakeServerProcess

TARGET = 1.5


def run(
    workdir: Path,
    *,
    sessions: int = 600,
    concurrency: int = 40,
    repeats: int = 5,
    profile: bool | None = None,
) -> list[Figure]:
    """``profile``: None profiles only when the ratio misses the target."""
    src = write_sessions(workdir / "cpu.sessions.jsonl", sessions)
    out = workdir / "cpu.out.jsonl"
    with FakeServerProcess(latency=0.0) as server:
        runs, floors = in_turn(server.base_url, src, out, concurrency, repeats, FLOORS)
        pipeline_ms = [t.cpu * 1000 / sessions for t in runs]
        floor_ms = {f: [cpu * 1000 / sessions for _, cpu in floors[f]] for f in FLOORS}
        pipe = statistics.median(pipeline_ms)
        bare, raw, post, plain = (statistics.median(floor_ms[f]) for f in FLOORS)
        ratio = pipe / bare
        if profile or (profile is None and ratio > TARGET):
            print(top_costs(server.base_url, src, out, concurrency, sessions))
    rows = breakdown(src, workdir, concurrency)
    print(format_breakdown(rows))
    ours = rows[-1][1]
    detail = (
        f"{sessions} sessions x {repeats} runs each, concurrency {concurrency}, latency 0: "
        f"pipeline {joined(pipeline_ms)} ms/session, bare SDK create() loop "
        f"{joined(floor_ms['sdk'])}, with_raw_response.create() {joined(floor_ms['sdk-raw'])}, "
        f"post() {joined(floor_ms['sdk-post'])}, bare aiohttp loop {joined(floor_ms['aiohttp'])}"
    )
    print(f"[cpu] {detail}")
    print(
        f"[cpu] pipeline {pipe:.2f} ms/session, bare SDK loop {bare:.2f} ms/session, ratio "
        f"{ratio:.2f} (target <= {TARGET}); bare aiohttp loop {plain:.2f} ms/session"
    )
    return [
        Figure("cpu", "pipeline CPU per session", f"{pipe:.2f} ms", "", None, detail),
        Figure("cpu", "bare SDK create() loop CPU per session", f"{bare:.2f} ms", "", None),
        Figure("cpu", "bare SDK with_raw_response.create() loop", f"{raw:.2f} ms", "", None),
        Figure("cpu", "bare SDK post() loop", f"{post:.2f} ms", "", None),
        Figure("cpu", "bare aiohttp loop CPU per session", f"{plain:.2f} ms", "", None),
        Figure("cpu", "our code alone (no HTTP) per session", f"{ours:.2f} ms", "", None),
        Figure("cpu", "pipeline / bare SDK loop", f"{ratio:.2f}", f"<= {TARGET}", ratio <= TARGET),
        Figure("cpu", "pipeline / bare with_raw_response loop", f"{pipe / raw:.2f}", "", None),
        Figure("cpu", "pipeline / bare SDK post() loop", f"{pipe / post:.2f}", "", None),
        Figure("cpu", "pipeline / bare aiohttp loop", f"{pipe / plain:.2f}", "", None),
    ]


def top_costs(
    url: str, src: Path, out: Path, concurrency: int, sessions: int, limit: int = 15
) -> str:
    """cProfile of one pipeline run: own time per package, then our costliest functions."""
    profiler = cProfile.Profile()
    profiler.enable()
    grade_clean(url, src, out, concurrency)
    profiler.disable()
    stats = pstats.Stats(profiler)
    by_group: dict[str, float] = defaultdict(float)
    ours: list[tuple[float, str]] = []
    for (path, line, name), (_cc, _nc, own, _cum, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        group = _group(path)
        by_group[group] += own
        if group.startswith("research_judge"):
            ours.append((own, f"{group}:{line}({name})"))
    lines = ["[cpu] cProfile of one pipeline run, own time in ms/session (profiling inflates all):"]
    for group, own in sorted(by_group.items(), key=lambda kv: -kv[1])[:limit]:
        lines.append(f"  {group:<40} {own * 1000 / sessions:7.3f}")
    lines.append("[cpu] our costliest functions (own time, ms/session):")
    for own, where in sorted(ours, reverse=True)[:limit]:
        lines.append(f"  {where:<70} {own * 1000 / sessions:7.3f}")
    return "\n".join(lines)


def _group(path: str) -> str:
    """A profiled function's package: site-packages name, our module, stdlib module, or C."""
    if path == "~":
        return "builtins (C)"
    if "/site-packages/" in path:
        return path.split("/site-packages/", 1)[1].split("/", 1)[0]
    if "/src/research_judge/" in path:
        module = path.split("/src/", 1)[1].removesuffix(".py")
        return module.replace("/", ".")
    return "stdlib " + Path(path).stem
