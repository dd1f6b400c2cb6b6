"""``research-judge serve-fake``: the README's first run, end to end, without a key."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.results.model import read_results
from research_judge.testing import FakeOpenAIServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_the_first_run_grades_the_fixtures_against_serve_fake_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    server = subprocess.Popen(
        [sys.executable, "-m", "research_judge", "serve-fake", "--port", "0",
         "--rate-limit", "3", "--latency", "0.05", "--retry-after", "0.05", "--max-seconds", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert first.startswith("fake judge listening on http://127.0.0.1:"), first
        base_url = first.split()[-1]
        out = tmp_path / "results.jsonl"
        code = main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out),
                     "--model", "fake-judge", "--base-url", base_url,
                     "--no-cache", "--concurrency", "8", "--quiet"])  # fmt: skip
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=30)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    # The closing summary counts the 429s the limit below caused, and their retries.
    [transport] = [line for line in captured.out.splitlines() if line.startswith("transport: ")]
    assert "transport: retries 0 " not in transport and "(429s 0)" not in transport
    results = read_results(out)
    assert len(results) == 20 and all(r.verdict in ("pass", "fail") for r in results)
    assert server.returncode == 0
    assert "fake judge stopped: " in err and "answered" in err
    # Eight in flight against a limit of three: some 429s, and still every session graded.
    assert re.search(r"\b0 rate limited", err) is None, err


def test_serve_fake_refuses_a_port_it_cannot_take(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer() as taken:
        port = taken.base_url.rsplit(":", 1)[1].split("/")[0]
        assert main(["serve-fake", "--port", port, "--max-seconds", "0"]) == 2
    assert f"cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err


def test_a_local_server_needs_no_key_and_gets_no_authorization(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps({"id": "s-1", "question": "q", "answer": "a", "trajectory": []}))
    from research_judge.testing import FakeJudge

    with FakeOpenAIServer(FakeJudge()) as server:
        code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "m",
                     "--base-url", server.base_url, "--no-cache",
                     "--quiet"])  # fmt: skip
    assert code == 0
    assert server.stats.requests == 2 and server.stats.with_authorization == 0


def test_serve_fake_reads_the_prompts_folder_the_run_grades_with(tmp_path: Path) -> None:
    reworded = Path(__file__).resolve().parent / "reworded_prompts"
    server = subprocess.Popen(
        [sys.executable, "-m", "research_judge", "serve-fake", "--port", "0",
         "--prompts", str(reworded), "--max-seconds", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        base_url = first.split()[-1]
        hint = server.stdout.readline() + server.stdout.readline()
        assert f"--base-url {base_url}\n" in hint  # the suggested command needs no other flag
        out = tmp_path / "results.jsonl"
        argv = ["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), "--model",
                "fake-judge", "--base-url", base_url, "--no-cache", "--quiet"]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "sk-unused"}
        reworded_run = subprocess.run(
            [sys.executable, "-m", "research_judge", *argv, "--prompts", str(reworded)],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        shipped_run = subprocess.run(
            [sys.executable, "-m", "research_judge", *argv, "--out", str(tmp_path / "s.jsonl")],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
    assert reworded_run.returncode == 0, reworded_run.stderr
    assert all(r.error is None for r in read_results(out))
    # The shipped prompts are not what this fake reads: refused (400), never guessed at.
    # (Each 400 is that session's error, or stops the run when the server refuses them all.)
    assert shipped_run.returncode != 0
    written = tmp_path / "s.jsonl"
    said = shipped_run.stderr + (written.read_text() if written.exists() else "")
    assert "not those of the prompts folder" in said
