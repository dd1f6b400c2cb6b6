"""Benchmark 6: ``grade --batch`` over many sessions against the fake OpenAI Batch API.

The fake (``research_judge.testing.FakeBatchServer``) runs in a child process, so its CPU
(building every completion of the output file) never counts against the client. Batch lines
are bodies in a file, so it answers with ``known_sessions.KnownSessions``: it knows the generated
sessions (rendered before it starts listening, outside the timing), and answers each line from
the references it shows. The client is the chain ``grade --batch --no-cache`` builds
(``clients.chain.build_client``): ``Judge`` over ``BatchClient`` over ``OpenAIBatches`` over
``OpenAIClient``, run through ``engine.grade_file``.
Reported: wall time (upload, polls, download, grading, writing), client CPU per session, batches
and lines. The fake ends each batch at its second poll; ``poll`` is the polling interval.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from judge_replies import MODEL, write_sessions
from pipeline import DUMMY_KEY, Figure
from research_judge.clients.chain import ClientSettings, build_client
from research_judge.cost.prices import PriceTable
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge

BENCH_DIR = Path(__file__).resolve().parent
SERVER = r"""
import json, sys
from pathlib import Path
from known_sessions import KnownSessions
from research_judge.testing.fake_batches import FakeBatchServer
known = KnownSessions.from_file(Path(sys.argv[1]))
with FakeBatchServer(known, polls_to_finish=2) as srv:
    print(json.dumps({"base_url": srv.openai_base_url}), flush=True)
    sys.stdin.read()
    print(json.dumps({"batches": srv.stats.batches_created,
                      "lines": sum(srv.stats.batched.values())}), flush=True)
"""


def run(workdir: Path, *, sessions: int = 10_000, poll: float = 0.5) -> list[Figure]:
    src = write_sessions(workdir / "batch.sessions.jsonl", sessions)
    out = workdir / "batch.out.jsonl"
    out.unlink(missing_ok=True)
    state_dir = Path(f"{out}.batches")
    for old in state_dir.glob("*.json") if state_dir.is_dir() else ():
        old.unlink()  # a fresh run: nothing to pick up
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH_DIR), *sys.path])}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(src)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        base_url = json.loads(server.stdout.readline())["base_url"]
        wall, cpu, graded, errors = asyncio.run(_grade(base_url, src, out, poll))
    finally:
        tail, _ = server.communicate(timeout=60)
    counts = json.loads(tail.strip().splitlines()[-1])
    per_session = cpu * 1000 / sessions
    detail = (
        f"{sessions} sessions, poll {poll}s, fake ends a batch at its 2nd poll: wall {wall:.1f}s, "
        f"client CPU {cpu:.1f}s ({per_session:.2f} ms/session), {counts['batches']} batch(es), "
        f"{counts['lines']} lines, graded {graded}, errors {errors}"
    )
    print(f"[batch] {detail}")
    return [
        Figure("batch", f"{sessions} sessions: wall time", f"{wall:.1f} s", "", None, detail),
        Figure("batch", "client CPU per session", f"{per_session:.2f} ms", "", None),
        Figure("batch", "batches / lines", f"{counts['batches']} / {counts['lines']}", "", None),
        Figure("batch", "graded without error", f"{graded - errors}/{sessions}", "all",
               graded - errors == sessions),
    ]  # fmt: skip


async def _grade(base_url: str, src: Path, out: Path, poll: float) -> tuple[float, float, int, int]:
    settings = ClientSettings(
        model=MODEL,
        base_url=base_url,
        api_key=DUMMY_KEY,
        cache=False,
        batch=True,
        batch_poll=poll,
        batch_dir=f"{out}.batches",
    )
    client = build_client(settings)
    judge = Judge(client, prices=PriceTable.load().for_batch())
    options = RunOptions(concurrency=50_000, window=50_000)
    try:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        stats = await grade_file(src, out, judge, options)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    finally:
        await client.aclose()
    return wall, cpu, stats.graded, stats.errors
