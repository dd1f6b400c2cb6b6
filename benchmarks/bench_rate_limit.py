"""Benchmark 4: a provider that takes 6 requests at a time, asked for 24 at a time.

The fake server answers 429 with Retry-After to every request beyond 6 in flight. The run must
still grade every session with none errored: ``ResilientClient`` retries after the wait the
server asked for, and its adaptive limit comes down to what the provider accepts.
"""

from __future__ import annotations

from pathlib import Path

from judge_replies import write_sessions
from pipeline import Figure, grade_timed
from server_process import FakeServerProcess


def run(
    workdir: Path,
    *,
    sessions: int = 200,
    concurrency: int = 24,
    provider_limit: int = 6,
    latency: float = 0.05,
    retry_after: float = 1.0,
) -> list[Figure]:
    src = write_sessions(workdir / "ratelimit.sessions.jsonl", sessions)
    out = workdir / "ratelimit.out.jsonl"
    with FakeServerProcess(
        latency=latency, max_concurrent=provider_limit, retry_after=retry_after
    ) as server:
        timed = grade_timed(server.base_url, src, out, concurrency)
    stats, client = timed.stats, timed.client
    seen, retries, limit, cuts = (
        client.rate_limited,
        client.retries,
        client.limiter.limit,
        client.limiter.cuts,
    )
    detail = (
        f"{sessions} sessions at concurrency {concurrency}, provider limit {provider_limit} "
        f"(429 + Retry-After {retry_after}s beyond), latency {latency}s: wall {timed.wall:.1f}s, "
        f"server sent {server.stats.get('rate_limited')} 429s, client saw {seen}, "
        f"retries {retries}, limit cut {cuts} times, final adaptive limit {limit:.2f}"
    )
    print(f"[rate-limit] {detail}")
    print(
        f"[rate-limit] graded {stats.graded}, errored {stats.errors} "
        f"(target: {sessions} graded, 0 errored)"
    )
    ok = stats.graded == sessions and stats.errors == 0
    return [
        Figure(
            "rate-limit",
            "graded / errored",
            f"{stats.graded} / {stats.errors}",
            f"{sessions} / 0",
            ok,
            detail,
        ),
        Figure("rate-limit", "429s seen / retries", f"{seen} / {retries}", "", None),
        Figure("rate-limit", "final adaptive limit", f"{limit:.2f}", "", None),
    ]
