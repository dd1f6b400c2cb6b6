"""Benchmark 1: how close the real pipeline gets to the ideal wall time at a given latency.

ideal = calls x latency / concurrency: with ``concurrency`` requests always in flight and
nothing else costing time, N calls of ``latency`` seconds take exactly that long. efficiency =
ideal / measured wall, measured around ``grade_file`` only (median of ``repeats`` runs).
Anything the client does between replies (rendering, parsing, validation, evidence checks,
writing, and the HTTP library's own work) shows up as lost efficiency. Two bare loops (the same
two calls per session and nothing else) are measured in the same way as references: the openai
SDK's ``post`` (the most any client built on the SDK can reach on this machine) and plain
aiohttp (the most any client can reach with these exchanges, on this machine and this server).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from bare_loop import in_turn
from judge_replies import write_sessions
from pipeline import Figure, joined
from server_process import FakeServerProcess

TARGET = 0.9


def run(
    workdir: Path,
    *,
    sessions: int = 400,
    latency: float = 0.1,
    concurrency: int = 40,
    repeats: int = 3,
) -> list[Figure]:
    src = write_sessions(workdir / "efficiency.sessions.jsonl", sessions)
    out = workdir / "efficiency.out.jsonl"
    with FakeServerProcess(latency=latency) as server:
        runs, floors = in_turn(server.base_url, src, out, concurrency, repeats, ("sdk", "aiohttp"))
    bare, plain = floors["sdk"], floors["aiohttp"]
    calls = runs[0].stats.calls  # the same in every run: grade_clean checked two per session
    ideal = calls * latency / concurrency
    wall = statistics.median(t.wall for t in runs)
    cpu = statistics.median(t.cpu for t in runs)
    bare_wall = statistics.median(w for w, _ in bare)
    bare_cpu = statistics.median(c for _, c in bare)
    plain_wall = statistics.median(w for w, _ in plain)
    efficiency, bare_efficiency = ideal / wall, ideal / bare_wall
    plain_efficiency = ideal / plain_wall
    detail = (
        f"{sessions} sessions, {calls} calls, latency {latency}s, concurrency {concurrency}: "
        f"ideal {ideal:.2f}s; pipeline wall {joined(t.wall for t in runs)}s "
        f"(client CPU {cpu:.2f}s); bare SDK loop wall {joined(w for w, _ in bare)}s "
        f"(CPU {bare_cpu:.2f}s); bare aiohttp loop wall {joined(w for w, _ in plain)}s; "
        f"server peak in flight {server.stats.get('max_in_flight')}"
    )
    print(f"[efficiency] {detail}")
    print(
        f"[efficiency] pipeline efficiency = {efficiency:.3f} (target >= {TARGET}); "
        f"bare SDK loop = {bare_efficiency:.3f}; bare aiohttp loop = {plain_efficiency:.3f}"
    )
    return [
        Figure(
            "efficiency",
            "ideal / wall, pipeline",
            f"{efficiency:.3f}",
            f">= {TARGET}",
            efficiency >= TARGET,
            detail,
        ),
        Figure("efficiency", "ideal / wall, bare SDK loop", f"{bare_efficiency:.3f}", "", None),
        Figure(
            "efficiency", "ideal / wall, bare aiohttp loop", f"{plain_efficiency:.3f}", "", None
        ),
        Figure("efficiency", "client CPU / ideal wall, pipeline", f"{cpu / ideal:.2f}", "", None),
    ]
