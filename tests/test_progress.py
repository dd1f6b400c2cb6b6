from __future__ import annotations

import io

import pytest

from research_judge.engine.progress import (
    Progress,
    format_cost,
    format_count,
    format_duration,
)


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class CountingStream(io.StringIO):
    """A StringIO that remembers each write, so tests can count redraws."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def tick(
    progress: Progress,
    done: int,
    *,
    errors: int = 0,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cost_usd: float | None = 0.0,
    reused: int = 0,
    skipped: int = 0,
) -> None:
    progress.update(
        done=done,
        reused=reused,
        skipped=skipped,
        errors=errors,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost_usd,
    )


def make(
    total: int | None = 400, *, tty: bool, interval: float = 10.0
) -> tuple[Progress, CountingStream, FakeClock]:
    stream, clock = CountingStream(), FakeClock()
    progress = Progress(
        total,
        stream=stream,
        interval=interval,
        clock=clock,
        is_tty=tty,
        width=200,
    )
    return progress, stream, clock


# --- not a terminal (CI logs) ---------------------------------------------------------------


def test_log_mode_writes_one_plain_line_per_interval() -> None:
    progress, stream, clock = make(tty=False, interval=10.0)
    for step in range(1, 10):  # 9 seconds: nothing yet
        clock.advance(1.0)
        tick(progress, step)
    assert stream.writes == []
    clock.advance(1.0)  # t = 10 s
    tick(progress, 10)
    assert len(stream.writes) == 1
    assert stream.writes[0].startswith("progress: 10/400 (2%)")
    assert stream.writes[0].endswith("\n")
    clock.advance(9.9)
    tick(progress, 20)
    assert len(stream.writes) == 1
    clock.advance(0.1)
    tick(progress, 21)
    assert len(stream.writes) == 2 and "21/400" in stream.writes[1]
    progress.close()
    assert len(stream.writes) == 3 and stream.writes[2].startswith("done: 21/400 (5%)")
    assert "\r" not in stream.getvalue()


def test_log_mode_writes_a_final_line_even_for_a_short_run() -> None:
    progress, stream, clock = make(total=3, tty=False)
    clock.advance(1.5)
    tick(progress, 3, errors=1)
    progress.close()
    assert stream.getvalue().splitlines() == [
        "done: 3/3 (100%) | elapsed 2s | 2.00 sessions/s | errors 1 | $0.0000 | tokens 0 in / 0 out"
    ]


def test_close_is_final_and_idempotent() -> None:
    progress, stream, clock = make(tty=False, interval=1.0)
    progress.close()
    progress.close()
    clock.advance(100)
    tick(progress, 5)
    assert len(stream.writes) == 1


def test_terminal_detection_uses_the_stream() -> None:
    stream, clock = io.StringIO(), FakeClock()  # StringIO is not a TTY
    progress = Progress(10, stream=stream, clock=clock)
    tick(progress, 1)
    progress.close()
    assert "\r" not in stream.getvalue() and stream.getvalue().startswith("done: 1/10")


# --- terminal ----------------------------------------------------------------------------------


def test_terminal_redraws_one_line_with_a_bar() -> None:
    progress, stream, clock = make(tty=True)
    clock.advance(60.0)
    tick(progress, 120, errors=3, input_tokens=1_234_567, output_tokens=80_000, cost_usd=0.42)
    line = stream.writes[-1]
    assert line.startswith("\r[######..............] 120/400 30%")
    # 120 sessions in 60 s is 2/s; 280 left at 2/s is 140 s.
    assert "ETA 2m20s" in line and "2.00 sessions/s" in line
    assert "errors 3" in line and "$0.4200" in line and "tokens 1.23M in / 80.0k out" in line
    assert "\n" not in line
    progress.close()
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\n") == 1


def test_terminal_redraws_at_most_ten_times_a_second() -> None:
    progress, stream, clock = make(tty=True)
    for done in range(1, 1001):  # 1000 updates over one second
        tick(progress, done)
        clock.advance(0.001)
    assert 9 <= len(stream.writes) <= 11
    assert clock.calls <= 1001 + 1  # one clock read per update, plus the start


def test_updates_between_redraws_only_store_the_counters() -> None:
    progress, stream, clock = make(tty=True)
    tick(progress, 1)
    clock.advance(0.05)
    tick(progress, 2, cost_usd=None)
    assert len(stream.writes) == 1
    clock.advance(0.06)
    tick(progress, 3, errors=1)
    assert len(stream.writes) == 2 and " 3/400 " in stream.writes[1]
    clock.advance(0.01)
    tick(progress, 4, errors=2, cost_usd=None)  # not drawn, but close shows it
    assert len(stream.writes) == 2
    progress.close()
    assert " 4/400 " in stream.writes[2] and "errors 2" in stream.writes[2]
    assert "cost n/a" in stream.writes[2]


def test_shorter_line_erases_the_tail_of_the_previous_one() -> None:
    progress, stream, clock = make(tty=True)
    tick(progress, 1, errors=0, cost_usd=1234.5)
    clock.advance(1.0)
    tick(progress, 2, errors=0, cost_usd=None)
    first, second = stream.writes
    assert len(second) >= len(first)
    assert second.rstrip(" ").endswith("out")


def test_narrow_terminal_drops_trailing_parts_whole() -> None:
    stream, clock = CountingStream(), FakeClock()
    progress = Progress(400, stream=stream, clock=clock, is_tty=True, width=50)
    clock.advance(10)
    tick(progress, 100, input_tokens=5000)
    line = stream.writes[-1].lstrip("\r")
    assert len(line) <= 50
    assert line.startswith("[#####...............] 100/400 25% | ETA 30s")
    assert "tokens" not in line


# --- content ---------------------------------------------------------------------------------


def test_unknown_cost_is_shown_as_not_available() -> None:
    progress, stream, _ = make(tty=True)
    tick(progress, 1, cost_usd=None)
    assert "cost n/a" in stream.getvalue() and "$" not in stream.getvalue()


def test_unknown_total_shows_counts_without_bar_percent_or_eta() -> None:
    for tty in (True, False):
        progress, stream, clock = make(total=None, tty=tty, interval=1.0)
        clock.advance(4.0)
        tick(progress, 8)
        progress.close()
        text = stream.getvalue()
        assert "8 done" in text and "2.00 sessions/s" in text
        assert "[" not in text and "%" not in text and "ETA" not in text


def test_eta_is_unknown_before_anything_finished() -> None:
    progress, stream, clock = make(tty=True)
    tick(progress, 0)  # elapsed 0: no rate at all
    clock.advance(5)
    tick(progress, 0)  # rate 0: no ETA
    assert "-- sessions/s" in stream.writes[0] and "ETA ?" in stream.writes[0]
    assert "0.00 sessions/s" in stream.writes[1] and "ETA ?" in stream.writes[1]


def test_resumed_sessions_count_as_done_but_not_towards_the_rate() -> None:
    progress, stream, clock = make(total=100, tty=True)
    clock.advance(10)
    tick(progress, 80, reused=60)
    line = stream.writes[-1]
    # 20 new sessions in 10 s: 2/s; 20 left: 10 s.
    assert "80/100 80%" in line and "2.00 sessions/s" in line and "ETA 10s" in line


def test_bad_input_lines_come_off_the_total() -> None:
    progress, stream, clock = make(total=10, tty=True)
    clock.advance(1)
    tick(progress, 2, skipped=4)
    # 6 sessions in all, 2 done at 2/s: 4 left, 2 s.
    assert "] 2/6 33%" in stream.writes[-1] and "ETA 2s" in stream.writes[-1]
    clock.advance(2)
    tick(progress, 3, skipped=7)
    progress.close()
    assert "[####################] 3/3 100%" in stream.writes[-1]


def test_done_beyond_total_keeps_the_bar_full() -> None:
    progress, stream, _ = make(total=0, tty=True)
    tick(progress, 0)
    assert "[####################] 0/0 100%" in stream.getvalue()


def test_disabled_progress_writes_nothing_and_reads_no_clock() -> None:
    def exploding_clock() -> float:
        raise AssertionError("a disabled progress must not read the clock")

    stream = io.StringIO()
    quiet = Progress(10, stream=stream, clock=exploding_clock, enabled=False)
    tick(quiet, 5)
    quiet.close()
    assert stream.getvalue() == ""
    assert Progress.disabled().enabled is False


def test_a_broken_stream_silences_progress_instead_of_failing() -> None:
    class BrokenPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError("gone")

    clock = FakeClock()
    progress = Progress(10, stream=BrokenPipe(), clock=clock, is_tty=True, width=100)
    tick(progress, 1)
    assert progress.enabled is False
    clock.advance(1)
    tick(progress, 2)
    progress.close()


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (59.4, "59s"), (60, "1m00s"), (125, "2m05s"), (3600, "1h00m"), (7380, "2h03m")],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1.0k"),
        (80_000, "80.0k"),
        (999_999, "1.00M"),
        (1_234_567, "1.23M"),
    ],
)
def test_format_count(n: int, text: str) -> None:
    assert format_count(n) == text


@pytest.mark.parametrize(
    ("usd", "text"), [(0.0, "$0.0000"), (0.0421, "$0.0421"), (1.5, "$1.50"), (1234.5, "$1,234.50")]
)
def test_format_cost(usd: float, text: str) -> None:
    assert format_cost(usd) == text
