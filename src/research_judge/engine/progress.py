"""A progress line for long grading runs: one redrawn line on a terminal, sparse lines in CI logs.

The engine calls ``update`` with absolute counters after every finished or reused session, so
``update`` only stores numbers and reads the clock unless a line is due. Rate and ETA come from
the injected clock, which makes the whole thing testable without sleeping.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TextIO

from .._format import usd

TTY_REDRAW_INTERVAL = 0.1
"""Seconds between terminal redraws: about ten a second, fast enough to look live."""
BAR_WIDTH = 20
SEPARATOR = " | "


@dataclass(frozen=True)
class _Counters:
    done: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    reused: int = 0
    skipped: int = 0


class Progress:
    """Reports sessions done out of ``total`` (``None`` when the input's length is unknown).

    ``reused`` (in ``update``) counts the sessions of ``done`` that an earlier run had finished (a
    resume): they count towards ``done`` but not towards the rate, which would otherwise start
    absurdly high. ``skipped`` counts input lines found bad so far: they come off ``total`` (a
    count of non-blank lines), so a run with bad lines still ends at 100%. The engine only learns
    either while reading the input, so they come with every update rather than up front.

    ``live`` returns counters kept elsewhere (transport retries, 429s, re-asks), read at each
    drawing, so they show as they happen; ``refresh`` redraws, when a line is due, between
    finished sessions (the transport calls it on every retry).
    """

    def __init__(
        self,
        total: int | None,
        *,
        stream: TextIO | None = None,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        is_tty: bool | None = None,
        enabled: bool = True,
        width: int | None = None,
        live: Callable[[], Mapping[str, int]] | None = None,
    ) -> None:
        self.enabled = enabled
        self._live = live
        self._total = total
        self._stream: TextIO = stream if stream is not None else sys.stderr
        self._clock = clock
        self._counters = _Counters()
        self._closed = False
        self._drawn_length = 0
        if not enabled:
            self._tty = False
            self._start = self._next_due = 0.0
            self._width = 0
            self._period = interval
            return
        self._tty = _isatty(self._stream) if is_tty is None else is_tty
        # A line longer than the terminal wraps, and "\r" then only rewinds its last row.
        self._width = width if width is not None else shutil.get_terminal_size().columns - 1
        self._period = TTY_REDRAW_INTERVAL if self._tty else interval
        self._start = clock()
        # A terminal shows the line at once; a log gets its first line after one interval.
        self._next_due = self._start if self._tty else self._start + interval

    @classmethod
    def disabled(cls) -> Progress:
        """A progress that never writes (``--quiet``)."""
        return cls(None, enabled=False)

    def update(
        self,
        *,
        done: int,
        errors: int,
        input_tokens: int,
        output_tokens: int,
        cost_usd: float | None,
        reused: int = 0,
        skipped: int = 0,
    ) -> None:
        if not self.enabled or self._closed:
            return
        self._counters = _Counters(
            done, errors, input_tokens, output_tokens, cost_usd, reused, skipped
        )
        self.refresh()

    def refresh(self) -> None:
        """Redraw with the stored counters if a line is due."""
        if not self.enabled or self._closed:
            return
        now = self._clock()
        if now < self._next_due:
            return
        self._next_due = now + self._period
        self._write(self._line(now, final=False), final=False)

    def interrupt(self) -> None:
        """End a half-drawn terminal line (Ctrl-C), so what follows starts on its own line."""
        if not self.enabled or self._closed:
            return
        self._closed = True
        if self._tty and self._drawn_length:
            self._write_raw("\n")

    def close(self) -> None:
        """Write the final line (once); later updates are ignored."""
        if not self.enabled or self._closed:
            return
        self._closed = True
        self._write(self._line(self._clock(), final=True), final=True)

    # --- rendering ---------------------------------------------------------------------------

    def _line(self, now: float, *, final: bool) -> str:
        c = self._counters
        elapsed = max(now - self._start, 0.0)
        rate = (c.done - c.reused) / elapsed if elapsed > 0 else None
        parts = [self._count_part()]
        if final:
            parts.append(f"elapsed {format_duration(elapsed)}")
        elif self._total is not None:
            parts.append(f"ETA {self._eta(rate)}")
        speed = f"{rate:.2f} sessions/s" if rate is not None else "-- sessions/s"
        trouble = [f"errors {c.errors}", *self._live_parts(only_nonzero=self._tty)]
        # A terminal line is cut to its width from the right: what went wrong comes first there.
        parts += [*trouble, speed] if self._tty else [speed, *trouble]
        parts.append("cost n/a" if c.cost_usd is None else format_cost(c.cost_usd))
        parts.append(
            f"tokens {format_count(c.input_tokens)} in / {format_count(c.output_tokens)} out"
        )
        if not self._tty:
            return ("done: " if final else "progress: ") + SEPARATOR.join(parts)
        return _fit(parts, self._width)

    def _live_parts(self, *, only_nonzero: bool) -> list[str]:
        live = dict(self._live()) if self._live is not None else {}
        parts = []
        retries, rate_limited = live.get("retries"), live.get("429s", 0)
        if retries is not None and (retries or rate_limited or not only_nonzero):
            parts.append(f"retries {retries} (429s {rate_limited})")
        reasks = live.get("re-asks")
        if reasks is not None and (reasks or not only_nonzero):
            parts.append(f"re-asks {reasks}")
        return parts

    def _expected(self) -> int | None:
        """The sessions this run will end with: ``total`` less the bad lines found so far."""
        return None if self._total is None else self._total - self._counters.skipped

    def _count_part(self) -> str:
        done, total = self._counters.done, self._expected()
        if total is None:
            return f"{done} done"
        fraction = min(done / total, 1.0) if total > 0 else 1.0
        percent = f"{math.floor(fraction * 100)}%"
        if not self._tty:
            return f"{done}/{total} ({percent})"
        filled = math.floor(fraction * BAR_WIDTH)
        return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} {percent}"

    def _eta(self, rate: float | None) -> str:
        expected = self._expected()
        assert expected is not None
        remaining = expected - self._counters.done
        if remaining <= 0:
            return format_duration(0)
        if not rate:
            return "?"
        return format_duration(remaining / rate)

    def _write(self, line: str, *, final: bool) -> None:
        if self._tty:
            # Pad over the tail of a longer previous line instead of relying on terminal codes.
            text = "\r" + line + " " * max(self._drawn_length - len(line), 0)
            self._drawn_length = len(line)
            if final:
                text += "\n"
        else:
            text = line + "\n"
        self._write_raw(text)

    def _write_raw(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            # A closed pipe or stream must not stop a batch that is spending money: go quiet.
            self.enabled = False


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _fit(parts: list[str], width: int) -> str:
    """Join as many leading parts as fit in ``width``; the first part always shows."""
    line = parts[0]
    for part in parts[1:]:
        candidate = line + SEPARATOR + part
        if len(candidate) > width:
            break
        line = candidate
    return line


def format_duration(seconds: float) -> str:
    """``42s``, ``2m05s``, ``1h02m``."""
    total = round(seconds)
    if total < 60:
        return f"{total}s"
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    return f"{total // 3600}h{total % 3600 // 60:02d}m"


def format_count(n: int) -> str:
    """``950``, ``80.0k``, ``1.23M``."""
    if n < 1000:
        return str(n)
    if n < 999_950:  # what would round up to "1000.0k" is shown as millions
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


format_cost = usd
