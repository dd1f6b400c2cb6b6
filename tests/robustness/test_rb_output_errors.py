"""A write error on the results file stops the run at once, cleanly and resumably.

Disk full is made real with RLIMIT_FSIZE in a child process (writes past the limit fail with
EFBIG once SIGXFSZ is ignored), so nothing in the code under test is patched.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from research_judge.results.model import iter_results

from support import session, write_sessions

SESSIONS = 150  # more than the reorder window below: the old code waited for ever here

CHILD = """
import asyncio, resource, signal, sys
sys.path.insert(0, sys.argv[4])
from research_judge.clients import ScriptedClient
from research_judge.engine import RunOptions, grade_file
from research_judge.errors import OutputError
from research_judge.judge.grader import Judge
from support import good_responder

limit = int(sys.argv[3])
if limit:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
judge = Judge(ScriptedClient(good_responder))
run = grade_file(sys.argv[1], sys.argv[2], judge, RunOptions(concurrency=2, window=4))
try:
    stats = asyncio.run(asyncio.wait_for(run, 60))
except OutputError as exc:
    print("OutputError:", exc)
    sys.exit(5)
except TimeoutError:
    print("hung")
    sys.exit(9)
print("graded", stats.graded, "reused", stats.reused)
"""


def run_child(src: Path, out: Path, limit: int) -> subprocess.CompletedProcess[str]:
    tests = str(Path(__file__).resolve().parents[1])
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(src), str(out), str(limit), tests],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_disk_full_stops_the_run_with_a_clear_error_and_the_rerun_resumes(tmp_path: Path) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s{i:03}") for i in range(SESSIONS)])
    out = tmp_path / "results.jsonl"
    full = run_child(src, out, 20_000)
    assert full.returncode == 5, full.stdout + full.stderr
    assert "cannot write" in full.stdout and "resumes" in full.stdout
    assert "Traceback" not in full.stderr
    # What was written is a valid prefix (at most one torn line at the end) ...
    lines = out.read_bytes().splitlines(keepends=True)
    complete = [json.loads(line)["session_id"] for line in lines if line.endswith(b"\n")]
    assert 0 < len(complete) < SESSIONS
    assert complete == [f"s{i:03}" for i in range(len(complete))]
    # ... and the same command resumes once there is room, grading only what is missing.
    again = run_child(src, out, 0)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"reused {len(complete)}" in again.stdout
    ids = [r.session_id for r in iter_results(out) if not isinstance(r, Exception)]
    assert ids == [f"s{i:03}" for i in range(SESSIONS)]
