"""Call untrusted agent code so that nothing it does can stop, hang or crash the run.

An agent is someone else's code. It may raise anything (``SystemExit`` from a stray
``sys.exit()``, a ``BaseException`` subclass of its own), return an object whose methods raise, or
never return at all. ``guarded_call`` turns each of those into a value the harness records as one
failed task; only ``KeyboardInterrupt`` (the user asking to stop) still propagates.

With a timeout the work runs in a daemon thread: Python cannot kill a thread, so a task that
overruns is *abandoned* (left running in the background, never joined) and the run moves on. The
thread dies with the process.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What a guarded call gave: a value, or the exception that replaced it, and the wall time."""

    value: T | None
    error: BaseException | None
    seconds: float


def check_timeout(timeout: float | None, name: str = "timeout") -> float | None:
    """A task timeout must be a finite number of seconds above zero (``None``: no limit)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ConfigError(f"{name} must be a number of seconds, got {type(timeout).__name__}")
    if not math.isfinite(timeout) or timeout <= 0:
        raise ConfigError(f"{name} must be a finite number of seconds above 0, got {timeout}")
    return float(timeout)


def guarded_call(work: Callable[[], T], timeout: float | None = None) -> Outcome[T]:
    """Run ``work()``; whatever it raises (but ``KeyboardInterrupt``) is returned, not raised.

    With ``timeout`` (seconds), a call still running after it yields ``TimeoutError`` and is
    abandoned in its daemon thread.
    """
    if timeout is None:
        return _call(work)
    box: list[Outcome[T]] = []
    thread = threading.Thread(
        target=lambda: box.append(_call(work, reraise_interrupt=False)),
        name="research-judge agent",
        daemon=True,
    )
    started = time.perf_counter()
    thread.start()
    # join() with a timeout is interruptible: Ctrl-C during a long task still reaches us.
    thread.join(timeout)
    if not box:
        seconds = time.perf_counter() - started
        message = f"the agent did not return within {timeout:g} s; it was abandoned"
        return Outcome(value=None, error=TimeoutError(message), seconds=seconds)
    outcome = box[0]
    if isinstance(outcome.error, KeyboardInterrupt):
        raise outcome.error
    return outcome


def _call(work: Callable[[], T], *, reraise_interrupt: bool = True) -> Outcome[T]:
    started = time.perf_counter()
    try:
        value = work()
    except KeyboardInterrupt as exc:
        if reraise_interrupt:
            raise
        return Outcome(value=None, error=exc, seconds=time.perf_counter() - started)
    except BaseException as exc:  # the point: SystemExit and friends are results
        return Outcome(value=None, error=exc, seconds=time.perf_counter() - started)
    return Outcome(value=value, error=None, seconds=time.perf_counter() - started)


def describe(exc: BaseException) -> str:
    """``str(exc)``, unless the exception's own ``__str__`` is hostile too."""
    try:
        return str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a message is a nicety; the type is the reason
        return f"<{type(exc).__name__} whose message could not be read>"
