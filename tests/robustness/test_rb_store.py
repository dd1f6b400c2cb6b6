"""The store is hostile too: what ``--store`` reads goes to the judge, the cache and recordings.

A link out of the store, a FIFO, an object of hundreds of megabytes: each is that session's
``content_ref`` error naming why, the other sessions are graded, and no read can hold up the end
of a run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from research_judge.clients import ScriptedClient
from research_judge.clients.base import JudgeRequest
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge
from research_judge.results.model import Result, read_results
from research_judge.sessions.store import FolderStore, open_store

from support import good_responder, offloaded, session, write_sessions

SECRET = "sk-live-THE-CI-KEY-0123456789"
STORED = "Fact 1 is true here, read back from storage."


class Seen:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, request: JudgeRequest) -> dict[str, Any]:
        self.prompts.extend(m.content for m in request.messages)
        return good_responder(request)


async def grade(
    tmp_path: Path, sessions: list[dict[str, Any]], store: Any, seen: Seen
) -> list[Result]:
    src = write_sessions(tmp_path / "sessions.jsonl", sessions)
    out = tmp_path / "results.jsonl"
    await grade_file(src, out, Judge(ScriptedClient(seen)), RunOptions(concurrency=2), store=store)
    return read_results(out)


def errors_of(results: list[Result]) -> dict[str, str]:
    assert {r.error_kind for r in results if not r.ok} <= {"content_ref"}
    return {r.session_id: str(r.error) for r in results if not r.ok}


async def test_links_out_of_the_store_are_refused_and_nothing_secret_reaches_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    root = tmp_path / "store"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "real.txt").write_text(STORED, encoding="utf-8")
    outside = tmp_path / "secrets.txt"
    outside.write_text(f"token={SECRET}", encoding="utf-8")
    (root / "env.txt").symlink_to("/proc/self/environ")
    (root / "sibling.txt").symlink_to(outside)
    (root / "up").symlink_to(tmp_path)  # a folder link: up/secrets.txt
    (root / "alias.txt").symlink_to("pages/real.txt")  # a link that stays inside is fine
    seen = Seen()
    results = await grade(
        tmp_path,
        [offloaded("env", "env.txt"), offloaded("sib", "sibling.txt"),
         offloaded("up", "up/secrets.txt"), offloaded("alias", "alias.txt")],
        FolderStore(root),
        seen,
    )  # fmt: skip
    errors = errors_of(results)
    assert set(errors) == {"env", "sib", "up"}
    assert f"its real path /proc/{os.getpid()}/environ is outside the store" in errors["env"]
    assert f"its real path {outside} is outside the store" in errors["sib"]
    assert f"its real path {outside} is outside the store" in errors["up"]
    assert all("reference 'r1': cannot read content_ref" in e for e in errors.values())
    assert any(STORED in p for p in seen.prompts)
    assert not any(SECRET in p for p in seen.prompts)
    assert SECRET not in (tmp_path / "results.jsonl").read_text(encoding="utf-8")


async def test_a_fifo_a_folder_and_a_device_are_not_read(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    os.mkfifo(root / "pipe.txt")
    (root / "dir.txt").mkdir()
    (root / "ok.txt").write_text(STORED, encoding="utf-8")
    seen = Seen()
    results = await grade(
        tmp_path,
        [offloaded("fifo", "pipe.txt"), offloaded("dir", "dir.txt"), offloaded("ok", "ok.txt")],
        FolderStore(root),
        seen,
    )
    errors = errors_of(results)
    assert set(errors) == {"fifo", "dir"}
    assert "not a regular file (a FIFO)" in errors["fifo"]
    assert "not a regular file (a folder)" in errors["dir"]


async def test_objects_over_the_cap_are_refused_before_they_are_read(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "big.txt").write_bytes(b"a" * 5_000)
    (root / "small.txt").write_text(STORED, encoding="utf-8")
    seen = Seen()
    results = await grade(
        tmp_path,
        [offloaded("big", "big.txt"), offloaded("small", "small.txt")],
        open_store(str(root), max_bytes=1_000),
        seen,
    )
    errors = errors_of(results)
    assert set(errors) == {"big"}
    assert (
        "too large (5,000 bytes; the cap is 1,000 bytes, raise it with --max-ref-bytes)"
        in (errors["big"])
    )


async def test_a_file_that_reports_no_size_still_stops_at_the_cap() -> None:
    # procfs files say st_size 0 whatever they hold: the cap is kept while reading, not only
    # from the size the file system reports.
    store = FolderStore("/", max_bytes=8)
    with pytest.raises(Exception, match="too large"):
        await store.read("proc/self/environ")


def test_the_cap_is_a_grade_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from research_judge.cli import main

    root = tmp_path / "store"
    root.mkdir()
    (root / "big.txt").write_bytes(b"word " * 4_000)
    src = write_sessions(tmp_path / "s.jsonl", [offloaded("big", "big.txt")])
    flags = ["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "m", "--dry-run",
             "--store", str(root)]  # fmt: skip
    assert main([*flags, "--max-ref-bytes", "1000"]) == 2
    assert "too large (20,000 bytes; the cap is 1,000 bytes" in capsys.readouterr().err
    assert main(flags) == 0  # 20 KB is well under the default cap
    with pytest.raises(SystemExit):
        main([*flags, "--max-ref-bytes", "0"])
    assert "--max-ref-bytes: must be more than 0 bytes" in capsys.readouterr().err


# --- the whole command: a FIFO cannot hang it, a stuck read cannot hold up SIGTERM ----------


def _grade_cmd(src: Path, out: Path, store: str, base_url: str) -> list[str]:
    return [sys.executable, "-m", "research_judge", "grade", str(src), "--out", str(out),
            "--provider", "openai", "--model", "gpt-4o-mini", "--base-url", base_url,
            "--no-cache", "--quiet", "--store", store]  # fmt: skip


def test_a_fifo_in_the_store_does_not_hang_grade(tmp_path: Path) -> None:
    from research_judge.testing.fake_openai import FakeOpenAIServer

    from support import body_responder

    root = tmp_path / "store"
    root.mkdir()
    os.mkfifo(root / "page.txt")
    src = write_sessions(tmp_path / "s.jsonl", [offloaded("fifo", "page.txt"), session("plain")])
    out = tmp_path / "o.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    env.pop("OPENAI_BASE_URL", None)
    with FakeOpenAIServer(body_responder) as srv:
        proc = subprocess.Popen(_grade_cmd(src, out, str(root), srv.base_url), env=env,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:  # the old behaviour: blocked in open() for ever
                proc.kill()
                proc.communicate()
    assert proc.returncode == 2, err
    results = {r.session_id: r for r in read_results(out)}
    assert results["plain"].ok
    assert "not a regular file (a FIFO)" in str(results["fifo"].error)


@pytest.fixture
def silent_s3() -> Iterator[tuple[str, threading.Event]]:
    """An "S3 endpoint" that accepts connections and never answers: a read stuck in the network."""
    server = socket.create_server(("127.0.0.1", 0))
    connected = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            connected.set()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", connected
    finally:
        server.close()
        for conn in held:
            conn.close()


def test_sigterm_ends_a_run_whose_store_read_is_stuck(
    tmp_path: Path, silent_s3: tuple[str, threading.Event]
) -> None:
    pytest.importorskip("s3fs")
    from research_judge.testing.fake_openai import FakeOpenAIServer

    from support import body_responder

    endpoint, connected = silent_s3
    src = write_sessions(tmp_path / "s.jsonl", [offloaded("stuck", "k/page.txt")])
    out = tmp_path / "o.jsonl"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "AWS_ENDPOINT_URL": endpoint,
           "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": str(tmp_path / "none"),
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}  # fmt: skip
    for name in ("OPENAI_BASE_URL", "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        env.pop(name, None)
    with FakeOpenAIServer(body_responder) as srv:
        proc = subprocess.Popen(_grade_cmd(src, out, "s3://bucket/prefix", srv.base_url),
                                env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert connected.wait(60), "the read never started"
            time.sleep(0.3)
            proc.send_signal(signal.SIGTERM)
            # Within seconds, not after the network's own timeouts and retries (minutes).
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 143, err
    assert "stopped by SIGTERM: 0 session(s) are saved" in err
