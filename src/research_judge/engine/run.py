"""Grade many sessions: streamed input, bounded concurrency, ordered output, resume, budget.

One async path. The input is read line by line; at most ``concurrency`` sessions are being
graded at once and at most ``window`` are graded-but-unwritten, so memory is bounded whatever
the file size. Results are written in input order through a small reorder buffer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clients.base import JudgeRequest
from ..clients.settings import ClientSettings
from ..errors import (
    ConfigError,
    ContentRefError,
    ErrorKind,
    InputFileError,
    OutputError,
    ProviderDownError,
)
from ..judge.estimate import Budget
from ..judge.grader import Judge
from ..results.model import Result
from ..results.output import ExistingResults, ResultsFile
from ..results.sink import ResultsSink
from ..safety import OutputLock, check_distinct
from ..sessions.model import Session
from ..sessions.store import ContentStore, resolve_session
from .progress import Progress
from .select import Selection, selected_sessions

FirstRequests = tuple[JudgeRequest, JudgeRequest]


BATCH_SESSIONS_IN_FLIGHT = 50_000
"""Sessions graded at once in batch mode: up to 100,000 requests per round, one Anthropic batch
or two OpenAI ones. Later sessions go into later rounds."""


@dataclass(frozen=True)
class RunOptions:
    concurrency: int = ClientSettings.concurrency  # one setting: sessions and requests in flight
    retry_errors: bool = False
    selection: Selection = field(default_factory=Selection)
    window: int | None = None  # reorder buffer; default 4 x concurrency, at least 64

    @classmethod
    def for_client(cls, settings: ClientSettings, **options: Any) -> RunOptions:
        """The options for a chain built from ``settings`` (the CLI's and the Python API's):
        in batch mode a session waits for its batch, not for a connection, so a whole round is
        in flight at once."""
        if settings.batch:
            in_flight = BATCH_SESSIONS_IN_FLIGHT
            return cls(concurrency=in_flight, window=in_flight, **options)
        return cls(concurrency=settings.concurrency, **options)


@dataclass
class RunStats:
    """What this run did (the summary of the whole file is computed from the file itself)."""

    selected: int = 0
    reused: int = 0
    graded: int = 0
    errors: int = 0
    input_errors: list[InputFileError] = field(default_factory=list)
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True  # False once a billable call had no price
    stopped: str | None = None  # "budget" (--max-cost) or "provider_down", as --json says
    not_sent: int = 0  # selected sessions left ungraded when --max-cost stopped the run
    rewritten: bool = False
    repaired_torn_line: bool = False
    order: list[str] = field(default_factory=list)

    def add(self, result: Result) -> None:
        self.graded += 1
        self.errors += result.error is not None
        u = result.usage
        self.input_tokens += u.input_tokens
        self.cached_input_tokens += u.cached_input_tokens
        self.output_tokens += u.output_tokens
        self.calls += u.calls
        self.cache_hits += u.cache_hits
        if u.cost_usd is not None:
            self.cost_usd += u.cost_usd
        elif u.calls > u.cache_hits:
            self.cost_known = False


async def grade_file(
    sessions_path: str | Path,
    out_path: str | Path,
    judge: Judge,
    options: RunOptions,
    *,
    progress: Progress | None = None,
    budget: Budget | None = None,
    on_input_error: Callable[[InputFileError], None] | None = None,
    store: ContentStore | None = None,
    stats: RunStats | None = None,
) -> RunStats:
    """Grade every selected session of ``sessions_path`` into ``out_path`` (resuming it).

    ``out_path`` may not be the sessions file, and is locked for the run: a second run on it
    stops with ``OutputError``. ``stats``, when given, is filled in as the run goes: a caller
    still has what a stopped run covered (``ProviderDownError``) when nothing is returned.
    """
    check_distinct([("the sessions file", sessions_path)], [("the results file", out_path)])
    with OutputLock(out_path):
        return await grade_sessions(
            selected_sessions(sessions_path, options.selection),
            ResultsFile(out_path),
            judge,
            options,
            progress=progress,
            budget=budget,
            on_input_error=on_input_error,
            store=store,
            stats=stats,
        )


def _count_not_done(
    items: Iterator[Session | InputFileError],
    existing: ExistingResults,
    judge: Judge,
    options: RunOptions,
) -> int:
    """How many of the remaining selected sessions would still need grading (for the message)."""
    return sum(
        1
        for item in items
        if isinstance(item, Session)
        and not existing.reusable(item.id, judge.fingerprint, options.retry_errors)
    )


def _output_error(exc: OSError) -> OutputError:
    where = f" {exc.filename}" if exc.filename else ""
    return OutputError(
        f"cannot write the results{where}: {exc.strerror or exc}; every line written before is "
        "intact, so the same command resumes once the cause is fixed"
    )


async def grade_sessions(
    items: Iterable[Session | InputFileError],
    out: ResultsSink,
    judge: Judge,
    options: RunOptions,
    *,
    progress: Progress | None = None,
    budget: Budget | None = None,
    on_input_error: Callable[[InputFileError], None] | None = None,
    store: ContentStore | None = None,
    stats: RunStats | None = None,
) -> RunStats:
    """Grade ``items`` (already selected; errors are counted and reported, not graded) into
    ``out``, skipping sessions ``out`` already holds from an earlier run of the same judge.

    References with ``content_ref`` are read from ``store`` when their session is graded; one
    that cannot be read is that session's error (kind ``content_ref``); ``stats`` as for
    ``grade_file``."""
    stats = RunStats() if stats is None else stats
    progress = progress or Progress.disabled()
    try:
        existing = out.load()
    except OSError as exc:
        raise _output_error(exc) from exc
    stats.repaired_torn_line = existing.repaired
    window = asyncio.Semaphore(options.window or max(64, 4 * options.concurrency))
    in_flight = asyncio.Semaphore(options.concurrency)
    finished: dict[int, Result] = {}
    next_index = 0
    fatal: list[BaseException] = []
    tasks: set[asyncio.Task[None]] = set()
    broken = False  # a write failed: nothing more is written

    def report() -> None:
        progress.update(
            done=stats.reused + stats.graded,
            reused=stats.reused,
            skipped=len(stats.input_errors),
            errors=stats.errors,
            input_tokens=stats.input_tokens,
            output_tokens=stats.output_tokens,
            cost_usd=stats.cost_usd if stats.cost_known else None,
        )

    def drain() -> None:
        nonlocal next_index
        if broken:
            return
        try:
            while next_index in finished:
                result = finished.pop(next_index)
                out.append(result)
                stats.add(result)
                window.release()
                next_index += 1
            out.flush()
        except OSError as exc:
            stop_writing(exc)
            return
        report()

    def stop_writing(exc: OSError) -> None:
        # Disk full, read-only file system: stop now. Requests still in flight are abandoned
        # (their replies could not be saved), and the submission loop is woken to see ``fatal``.
        nonlocal broken
        broken = True
        fatal.append(_output_error(exc))
        current = asyncio.current_task()
        for task in tasks:
            if task is not current:
                task.cancel()
        window.release()

    async def grade_one(
        index: int,
        session: Session,
        reserved: float,
        first: FirstRequests | None,
        unreadable: ContentRefError | None,
    ) -> None:
        try:
            if unreadable is not None:
                raise unreadable
            # Read inside the in-flight slot: offloaded texts count against --concurrency too.
            session = await resolve_session(session, store)
            result = await judge.grade(session, first)
        except ContentRefError as exc:
            result = judge.error_result(session, str(exc), ErrorKind.CONTENT_REF)
        except (ProviderDownError, ConfigError, OutputError) as exc:
            # The provider is gone, a recording cannot be written, or a prompt template cannot
            # render this session (the user's template, e.g. a misspelt variable): the next
            # session would fare the same.
            fatal.append(exc)
            # This session will never be written: free its place in the reorder window, or a
            # submission loop waiting for that place would wait for ever.
            window.release()
            return
        except Exception as exc:  # a bug must cost one session, never the batch
            message = f"internal error: {type(exc).__name__}: {exc}"
            result = judge.error_result(session, message, ErrorKind.INTERNAL)
        finally:
            in_flight.release()
        if budget is not None:
            budget.settle(reserved, result.usage.cost_usd)
        finished[index] = result
        drain()

    submitted = 0
    iterator = iter(items)
    try:
        for item in iterator:
            if isinstance(item, InputFileError):
                stats.input_errors.append(item)
                if on_input_error:
                    on_input_error(item)
                report()
                continue
            stats.selected += 1
            stats.order.append(item.id)
            if existing.reusable(item.id, judge.fingerprint, options.retry_errors):
                stats.reused += 1
                report()
                continue
            if fatal:
                break
            reserved, first, unreadable = 0.0, None, None
            if budget is not None and item.offloaded:
                # The estimate needs the texts: read them now (one session at a time).
                try:
                    item = await resolve_session(item, store)
                except ContentRefError as exc:
                    unreadable = exc
            if budget is not None and unreadable is None:
                # Rendered once, for the estimate and then for the calls themselves.
                try:
                    first = judge.first_requests(item)
                except ConfigError as exc:  # a user template that cannot render this session
                    fatal.append(exc)
                    break
                amount = budget.reserve(item, first)
                if amount is None:
                    stats.stopped = "budget"
                    stats.not_sent = 1 + _count_not_done(iterator, existing, judge, options)
                    break
                reserved = amount
            await window.acquire()
            await in_flight.acquire()
            if fatal:
                in_flight.release()
                break
            task = asyncio.create_task(grade_one(submitted, item, reserved, first, unreadable))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            submitted += 1
        if tasks:
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
            for outcome in outcomes:
                if isinstance(outcome, Exception):  # cancelled tasks' errors are not Exceptions
                    raise outcome
    finally:
        try:
            out.close()
        except OSError as exc:
            broken = True
            if not fatal:
                fatal.append(_output_error(exc))
    # Even a stopped run leaves one line per session, in input order, ready to resume (unless
    # the file could not be written: then it is left exactly as it is).
    if not broken:
        try:
            stats.rewritten = out.finalize(stats.order)
        except OSError as exc:
            fatal.append(_output_error(exc))
    progress.close()
    if fatal:
        if isinstance(fatal[0], ProviderDownError):  # the one stop a caller reports (exit 3)
            stats.stopped = "provider_down"
        raise fatal[0]
    return stats
