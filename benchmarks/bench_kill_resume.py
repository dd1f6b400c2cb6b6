"""Benchmark 5: ``kill -9`` the real CLI at several moments, run the same command again.

Pass means: the resumed run exits 0, ``read_results`` (which raises on duplicate ids) finds every
session exactly once and in input order, and no session that already had a complete line in the
results file after the kill was sent to the judge again. What was sent is known server-side: the
fake judge logs the question of each request it answers, read back from the request body, and
every generated session asks its own question.

Each run gets a fresh server (and log); the base URL changes only in its port, which is not part
of the judge's fingerprint, so the second run resumes the first one's file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from judge_replies import write_sessions
from pipeline import MODEL, Figure
from research_judge.results.model import read_results
from server_process import BENCH_DIR, FakeServerProcess

CLI = BENCH_DIR.parent / ".venv" / "bin" / "research-judge"
RUN_TIMEOUT = 300.0


@dataclass(frozen=True)
class Case:
    kill_at: tuple[float, ...]  # kill when this share of sessions has a line (0: when first asked)
    jitter: float = 0.0  # then wait this long, so the kill lands anywhere, mid-write included


@dataclass
class Outcome:
    case: Case
    killed_with_lines: list[int]
    torn: int  # kills that left a partly written last line
    exit_code: int
    complete: bool
    resent: list[str]
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.complete and not self.resent and self.exit_code == 0 and not self.problem


def run(
    workdir: Path,
    *,
    sessions: int = 400,
    concurrency: int = 8,
    latency: float = 0.02,
    cases: tuple[Case, ...] = (
        Case((0.0,)),
        Case((0.25,)),
        Case((0.6,), jitter=0.013),
        Case((0.95,), jitter=0.031),
        Case((0.3, 0.7), jitter=0.007),
    ),
) -> list[Figure]:
    src = write_sessions(workdir / "kill.sessions.jsonl", sessions)
    order = [json.loads(line)["id"] for line in src.read_text(encoding="utf-8").splitlines()]
    outcomes = [
        _one_case(workdir, src, order, case, i, concurrency, latency)
        for i, case in enumerate(cases)
    ]
    for o in outcomes:
        print(
            f"[kill] kill at {'/'.join(f'{k:.0%}' for k in o.case.kill_at)}: lines when killed "
            f"{o.killed_with_lines} (torn last line: {o.torn}), resumed exit {o.exit_code}, "
            f"every session once {o.complete}, already-graded sessions sent again {len(o.resent)}"
            + (f" -- {o.problem}" if o.problem else "")
        )
    passed = sum(o.ok for o in outcomes)
    resent = sum(len(o.resent) for o in outcomes)
    detail = (
        f"{sessions} sessions, real CLI at concurrency {concurrency}, server latency {latency}s, "
        f"{len(outcomes)} cases ({sum(len(c.kill_at) for c in cases)} kills)"
    )
    print(f"[kill] {passed}/{len(outcomes)} cases pass; {detail}")
    return [
        Figure(
            "kill-resume",
            "cases passing",
            f"{passed}/{len(outcomes)}",
            f"{len(outcomes)}/{len(outcomes)}",
            passed == len(outcomes),
            detail,
        ),
        Figure("kill-resume", "graded sessions sent again", str(resent), "0", resent == 0),
    ]


def _one_case(
    workdir: Path,
    src: Path,
    order: list[str],
    case: Case,
    number: int,
    concurrency: int,
    latency: float,
) -> Outcome:
    out = workdir / f"kill.{number}.out.jsonl"
    out.unlink(missing_ok=True)
    total = len(order)
    killed_with: list[int] = []
    torn = 0
    resent: set[str] = set()
    # One server for the whole case: a new one would listen on another port, and another
    # endpoint is another judge (resume rightly regrades everything on a changed endpoint).
    log = workdir / f"kill.{number}.asked.log"
    log.unlink(missing_ok=True)
    sessions = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
    ids = {" ".join(s["question"].split()): s["id"] for s in sessions}
    with FakeServerProcess(latency=latency, ask_log=log) as server:
        for share in case.kill_at:
            seen = _log_lines(log)
            before = _graded_ids(out)
            proc = _start_cli(src, out, server.base_url, concurrency)
            reached = _wait_for(out, log, seen, max(1, round(share * total)) if share else 0, proc)
            if not reached:
                proc.wait(RUN_TIMEOUT)
                problem = f"the run ended (exit {proc.returncode}) before kill point {share:.0%}"
                return Outcome(case, killed_with, torn, proc.returncode, False, [], problem)
            time.sleep(case.jitter)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(RUN_TIMEOUT)
            killed_with.append(len(_graded_ids(out)))
            left = out.read_bytes() if out.exists() else b""
            torn += bool(left) and not left.endswith(b"\n")
            resent |= _asked(log, ids, seen) & before
        seen = _log_lines(log)
        before = _graded_ids(out)
        proc = _start_cli(src, out, server.base_url, concurrency)
        exit_code = proc.wait(RUN_TIMEOUT)
        asked = _asked(log, ids, seen)
    resent |= asked & before
    problem = ""
    if not set(order) - before <= asked:  # proves the log sees what the resumed run sends
        problem = "some ungraded sessions were never sent by the resumed run"
    try:
        complete = [r.session_id for r in read_results(out)] == order
    except Exception as exc:  # read_results raises on duplicates: that is a failure to report
        complete, problem = False, f"{type(exc).__name__}: {exc}"
    return Outcome(case, killed_with, torn, exit_code, complete, sorted(resent), problem)


def _start_cli(src: Path, out: Path, base_url: str, concurrency: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OPENAI_API_KEY": "dummy"}  # the child's env only
    cmd = [
        str(CLI),
        "grade",
        str(src),
        "--out",
        str(out),
        "--base-url",
        base_url,
        "--provider",
        "openai",
        "--model",
        MODEL,
        "--no-cache",
        "--quiet",
        "--concurrency",
        str(concurrency),
    ]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for(out: Path, log: Path, seen: int, lines: int, proc: subprocess.Popen[bytes]) -> bool:
    """Wait until ``out`` holds ``lines`` complete lines (0: until the judge was first asked
    after the log's first ``seen`` lines); False if the run ended first."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        if lines == 0 and _log_lines(log) > seen:
            return True
        if lines > 0 and out.exists() and _count_lines(out) >= lines:
            return True
        time.sleep(0.005)
    return False


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return handle.read().count(b"\n")


def _graded_ids(out: Path) -> set[str]:
    """Sessions with a complete line in ``out`` (a torn last line does not count)."""
    if not out.exists():
        return set()
    data = out.read_bytes()
    return {json.loads(line)["session_id"] for line in data[: data.rfind(b"\n") + 1].splitlines()}


def _log_lines(log: Path) -> int:
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def _asked(log: Path, ids: dict[str, str], skip: int = 0) -> set[str]:
    """Sessions the server was asked about after the log's first ``skip`` lines (the log names
    each by its question; ``ids`` maps questions to session ids)."""
    if not log.exists():
        return set()
    lines = log.read_text(encoding="utf-8").splitlines()[skip:]
    return {ids[line.split(" ", 1)[1]] for line in lines}
