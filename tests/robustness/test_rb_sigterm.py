"""SIGTERM stops a run like Ctrl-C: what was saved is said, and the same command resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.results.model import read_results
from research_judge.testing.fake_openai import FakeOpenAIServer

from support import body_responder, session, write_sessions


def complete_lines(path: Path) -> int:
    if not path.exists():
        return 0
    return path.read_bytes().count(b"\n")


@pytest.mark.parametrize(("sig", "code", "how"), [(signal.SIGTERM, 143, "stopped by SIGTERM"),
                                                  (signal.SIGINT, 130, "interrupted")])  # fmt: skip
def test_a_signal_says_what_was_saved_and_the_rerun_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: int, code: int, how: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i:02}") for i in range(12)])
    out = tmp_path / "o.jsonl"
    with FakeOpenAIServer(body_responder, latency=0.05) as srv:
        flags = ["--out", str(out), "--provider", "openai", "--model", "gpt-4o-mini",
                 "--base-url", srv.base_url, "--no-cache", "--quiet",
                 "--concurrency", "2"]  # fmt: skip
        proc = subprocess.Popen(
            [sys.executable, "-m", "research_judge", "grade", str(src), *flags],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ},
        )
        deadline = time.monotonic() + 60
        while complete_lines(out) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == code, err
        saved = len(read_results(out))
        assert 2 <= saved < 12
        assert f"{how}: {saved} session(s) are saved in {out}" in err
        assert "run the same command again to resume" in err and "Traceback" not in err
        assert not list(tmp_path.glob(".*.lock"))  # the lock went with the process
        assert main(["grade", str(src), *flags]) == 0
    assert [r.session_id for r in read_results(out)] == [f"s-{i:02}" for i in range(12)]
