"""Stopping a run from outside: Ctrl-C and SIGTERM end it the same way, saying what was saved.

SIGTERM (what ``kill``, systemd, Docker and CI runners send) used to end the process with 143 and
no word. Now it cancels the run like Ctrl-C: complete result lines are already on disk (the engine
hands each to the OS as it is written), the output lock is released, and the user is told how
many sessions are saved and that the same command resumes.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Coroutine
from typing import Any

from ..errors import ExitCode


def run_stoppable(
    main: Callable[[], Coroutine[Any, Any, int]], stopped: Callable[[str], None]
) -> int:
    """Run ``main()``; on Ctrl-C or SIGTERM call ``stopped(how)`` and return the shell's code."""
    terminated = False

    async def guarded() -> int:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def on_sigterm() -> None:
            nonlocal terminated
            terminated = True
            if task is not None:
                task.cancel()

        try:
            loop.add_signal_handler(signal.SIGTERM, on_sigterm)
        except (RuntimeError, ValueError):  # not the main thread: leave SIGTERM as it is
            return await main()
        try:
            return await main()
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(guarded())
    except asyncio.CancelledError:
        if not terminated:
            raise
        stopped("stopped by SIGTERM")
        return ExitCode.TERMINATED
    except KeyboardInterrupt:
        stopped("interrupted")
        return ExitCode.INTERRUPTED


def saved_lines(path: str) -> int:
    """Complete result lines in ``path`` (a torn last line is cut off on resume)."""
    try:
        with open(path, "rb") as handle:
            return sum(1 for line in handle if line.endswith(b"\n") and line.strip())
    except OSError:
        return 0
