"""Retries, 429s and re-asks show in the progress line as they happen and in the closing summary;
an interrupted progress line is ended so the next message starts on its own line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.clients.scripted import ScriptedClient
from research_judge.engine.progress import Progress
from research_judge.judge.grader import Judge
from research_judge.sessions.model import Session
from research_judge.testing import FakeJudge, FakeOpenAIServer, fake_judge_reply
from test_progress import CountingStream, FakeClock, tick

from support import session, write_sessions


def test_live_counters_are_read_at_each_drawing() -> None:
    counts = {"retries": 0, "429s": 0, "re-asks": 0}
    stream, clock = CountingStream(), FakeClock()
    progress = Progress(10, stream=stream, clock=clock, is_tty=False, live=lambda: counts)
    clock.advance(10)
    tick(progress, 1)
    counts.update({"retries": 5, "429s": 3, "re-asks": 2})
    clock.advance(10)
    progress.refresh()  # a retry, between finished sessions
    first, second = stream.getvalue().splitlines()
    assert "retries 0 (429s 0) | re-asks 0" in first
    assert "retries 5 (429s 3) | re-asks 2" in second


def test_refresh_draws_only_when_a_line_is_due() -> None:
    stream, clock = CountingStream(), FakeClock()
    progress = Progress(10, stream=stream, clock=clock, is_tty=False, live=dict)
    progress.refresh()
    progress.refresh()
    assert stream.getvalue() == ""


def test_an_interrupt_ends_the_terminal_line() -> None:
    stream, clock = CountingStream(), FakeClock()
    progress = Progress(10, stream=stream, clock=clock, is_tty=True, width=200)
    tick(progress, 3)
    assert not stream.getvalue().endswith("\n")
    progress.interrupt()
    progress.close()  # nothing more after an interrupt
    assert stream.getvalue().endswith("\n") and "done" not in stream.getvalue()


async def test_the_judge_counts_its_re_asks() -> None:
    raw = session("s-1")
    good = fake_judge_reply
    client = ScriptedClient(lambda request: "not json" if not judge.reasks else good(request))
    judge = Judge(client)
    result = await judge.grade(Session.model_validate(raw))
    assert result.error is None
    assert judge.reasks >= 1


def test_a_rate_limited_run_shows_its_429s_while_running_and_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(12)])
    with FakeOpenAIServer(FakeJudge(), latency=0.02, max_concurrent=2, retry_after=0.02) as srv:
        code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "m",
                     "--base-url", srv.base_url, "--no-cache",
                     "--concurrency", "8", "--json"])  # fmt: skip
        sent_429 = srv.stats.rate_limited
    captured = capsys.readouterr()
    assert code == 0 and sent_429 > 0
    [done] = [line for line in captured.err.splitlines() if line.startswith("done: ")]
    assert f"(429s {sent_429})" in done
    run = json.loads(captured.out)["run"]
    assert run["rate_limited"] == sent_429 and run["retries"] >= sent_429
    assert run["reasks"] == 0


def test_a_terminal_line_shows_trouble_before_speed_and_hides_zero_counters() -> None:
    counts = {"retries": 0, "429s": 0, "re-asks": 0}
    stream, clock = CountingStream(), FakeClock()
    progress = Progress(20, stream=stream, clock=clock, is_tty=True, width=90, live=lambda: counts)
    tick(progress, 5)
    assert "retries" not in stream.writes[-1] and "re-asks" not in stream.writes[-1]
    counts.update({"retries": 12, "429s": 7, "re-asks": 1})
    clock.advance(1)
    tick(progress, 6)
    # 90 columns: the counters still show; the speed and the cost are what gets cut.
    assert "errors 0 | retries 12 (429s 7) | re-asks 1" in stream.writes[-1]


class Terminal(CountingStream):
    def isatty(self) -> bool:
        return True


def test_ctrl_c_during_grade_prints_its_message_on_its_own_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from research_judge.cli import _grading

    async def interrupted_run(*_args: object, progress: Progress, **_kwargs: object) -> None:
        progress.update(done=1, errors=0, input_tokens=10, output_tokens=5, cost_usd=0.0)
        raise KeyboardInterrupt  # Ctrl-C while the bar is half drawn

    monkeypatch.setattr(_grading, "grade_file", interrupted_run)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--provider", "scripted",
                 "--model", "m", "--replay", str(tmp_path)])  # fmt: skip
    assert code == 130
    text = terminal.getvalue()
    bar, _, message = text.rpartition("\n")[0].rpartition("\n")
    assert "\r" in bar and "1/3" in bar  # the progress line, redrawn in place, was ended
    assert message.startswith("research-judge grade: interrupted: ")


def test_server_errors_show_as_retries_in_the_summary_never_as_errors_0_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 16 saw a run with 27 HTTP 500s end on "errors 0" and nothing else: the 500s that
    # were retried away must show as retries (and are not 429s, nor errors).
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(4)])
    with FakeOpenAIServer(FakeJudge(), fail_status=500, fail_count=2, retry_after=0) as srv:
        code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "m",
                     "--base-url", srv.base_url, "--no-cache",
                     "--concurrency", "1", "--json"])  # fmt: skip
        failed = srv.stats.failed
    captured = capsys.readouterr()
    assert code == 0 and failed == 2
    run = json.loads(captured.out)["run"]
    assert run["retries"] == 2 and run["rate_limited"] == 0
    [done] = [line for line in captured.err.splitlines() if line.startswith("done: ")]
    assert "errors 0 | retries 2 (429s 0)" in done
