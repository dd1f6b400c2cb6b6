"""Progress of ``grade --batch``: one line on stderr whenever a batch changes state.

Sessions finish in bursts (a whole batch at a time), so the session progress line alone would sit
still for minutes; this line says what the batches are doing meanwhile.
"""

from __future__ import annotations

from typing import TextIO

from ..clients.batch import BatchCounters
from .progress import format_count


class BatchProgress:
    def __init__(self, stream: TextIO, *, enabled: bool = True) -> None:
        self._stream = stream
        self._enabled = enabled
        self._last: tuple[object, ...] | None = None

    def __call__(self, counters: BatchCounters) -> None:
        if not self._enabled:
            return
        states = sorted(counters.statuses.values())
        shown = (
            counters.submitted,
            counters.resumed,
            counters.in_progress,
            counters.ended,
            counters.failed_lines,
            tuple(states),
        )
        if shown == self._last:
            return  # requests_left alone moves with every reply: not worth a line each
        self._last = shown
        print(format_batches(counters), file=self._stream, flush=True)


def format_batches(c: BatchCounters) -> str:
    resumed = f" (+{c.resumed} picked up from an earlier run)" if c.resumed else ""
    return (
        f"batches: {c.submitted} submitted{resumed}, {c.in_progress} in progress, "
        f"{c.ended} ended | failed lines {format_count(c.failed_lines)} "
        f"(expired {format_count(c.expired_lines)}) | requests left "
        f"{format_count(c.requests_left)}"
    )
