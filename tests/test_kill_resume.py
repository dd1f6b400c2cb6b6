"""kill -9 at any moment, then the same run again: every session once, nothing graded twice."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from research_judge.clients import ScriptedClient
from research_judge.clients.base import JudgeRequest
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge
from research_judge.results.model import read_results

from support import good_responder, session, write_sessions

WORKER = r"""
import asyncio, sys
sys.path.insert(0, {tests!r})
from support import good_responder
from research_judge.clients import ScriptedClient
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge

sent = open({sent!r}, "a", buffering=1)

async def slow(request):
    sent.write(request.session_id + "\n")
    await asyncio.sleep(0.004)
    return good_responder(request)

asyncio.run(grade_file({src!r}, {out!r}, Judge(ScriptedClient(slow)), RunOptions(concurrency=8)))
"""

N = 300


@pytest.mark.parametrize("delay", [0.6, 0.9, 1.3])
def test_kill_minus_nine_then_resume(tmp_path: Path, delay: float) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i:04}") for i in range(N)])
    out, sent = tmp_path / "o.jsonl", tmp_path / "sent.log"
    script = WORKER.format(
        tests=str(Path(__file__).parent), sent=str(sent), src=str(src), out=str(out)
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    # Kill once the worker has written something, at a moment that varies per case.
    while time.monotonic() < deadline and (not out.exists() or out.stat().st_size == 0):
        time.sleep(0.01)
    time.sleep(delay / 10)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    if proc.returncode != -signal.SIGKILL:
        pytest.fail(f"worker exited on its own ({proc.returncode}) before it could be killed")

    before = out.read_bytes()
    complete = before[: before.rfind(b"\n") + 1].decode().splitlines()
    graded_before = {json.loads(line)["session_id"] for line in complete}
    assert 0 < len(graded_before) < N

    asked_again: list[str] = []

    def responder(request: JudgeRequest) -> object:
        asked_again.append(request.session_id)
        return good_responder(request)

    stats = asyncio.run(
        grade_file(src, out, Judge(ScriptedClient(responder)), RunOptions(concurrency=8))
    )
    ids = [r.session_id for r in read_results(out)]
    assert ids == [f"s-{i:04}" for i in range(N)]  # each exactly once, in input order
    assert not graded_before & set(asked_again)  # nothing already graded was sent again
    assert stats.reused == len(graded_before)
