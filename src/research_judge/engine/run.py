"""Grade many sessions: streamed input, bounded concurrency, ordered output, resume, budget.

One async path. The input is read line by line; at most ``concurrency`` sessions are being
graded at once and at most ``window`` are graded-but-unwritten, so memory is bounded whatever
the file size. Results are written in input order through a small reorder buffer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
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
    ResearchJudgeError,
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
    # A session's extra top-level key that no prompt template reads -> sessions carrying it.
    unread_keys: dict[str, int] = field(default_factory=dict)
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
    run = _Run(
        out,
        judge,
        options,
        progress=progress or Progress.disabled(),
        budget=budget,
        on_input_error=on_input_error,
        store=store,
        stats=RunStats() if stats is None else stats,
    )
    return await run.run(items)


_Prepared = tuple[Session, float, FirstRequests | None, ContentRefError | None]


class _Spent(Enum):
    SPENT = "spent"  # --max-cost cannot cover the next session


_SPENT = _Spent.SPENT


class _State(Enum):
    """Where a run is. It only moves down the list."""

    RUNNING = "running"  # sessions are submitted and results written as they finish
    STOPPING = "stopping"  # something ended the run (``_Run.stop``): nothing more is submitted
    BROKEN = "broken"  # a write failed: nothing more is written either, the file stays as it is


# What ends a whole run rather than one session: the provider is gone, a recording cannot be
# written, or a prompt template cannot render a session (the user's template, e.g. a misspelt
# variable). The next session would fare the same.
_RUN_ENDING = (ProviderDownError, ConfigError, OutputError)


class _Run:
    """One run of ``grade_sessions``: submits sessions in input order, at most ``concurrency``
    in flight and ``window`` graded-but-unwritten, and writes results in input order."""

    def __init__(
        self,
        out: ResultsSink,
        judge: Judge,
        options: RunOptions,
        *,
        progress: Progress,
        budget: Budget | None,
        on_input_error: Callable[[InputFileError], None] | None,
        store: ContentStore | None,
        stats: RunStats,
    ) -> None:
        self.out, self.judge, self.options = out, judge, options
        self.progress, self.budget, self.store, self.stats = progress, budget, store, stats
        self.on_input_error = on_input_error
        self.state = _State.RUNNING
        self.stop: ResearchJudgeError | None = None  # what ended the run, the first one only
        self.window = asyncio.Semaphore(options.window or max(64, 4 * options.concurrency))
        self.in_flight = asyncio.Semaphore(options.concurrency)
        self.finished: dict[int, Result] = {}  # graded, waiting for the ones before them
        self.next_index = 0  # the next result to write
        self.tasks: set[asyncio.Task[None]] = set()

    async def run(self, items: Iterable[Session | InputFileError]) -> RunStats:
        try:
            existing = self.out.load()
        except OSError as exc:
            raise _output_error(exc) from exc
        self.stats.repaired_torn_line = existing.repaired
        try:
            await self._submit_all(iter(items), existing)
            if self.tasks:
                outcomes = await asyncio.gather(*self.tasks, return_exceptions=True)
                for outcome in outcomes:
                    if isinstance(outcome, Exception):  # a cancelled task's is no Exception
                        raise outcome
        finally:
            self._close()
        self._finalize()
        self.progress.close()
        if self.stop is not None:
            if isinstance(self.stop, ProviderDownError):  # the one stop a caller reports
                self.stats.stopped = "provider_down"
            raise self.stop
        return self.stats

    # --- submitting --------------------------------------------------------------------------

    async def _submit_all(
        self, items: Iterator[Session | InputFileError], existing: ExistingResults
    ) -> None:
        stats, judge = self.stats, self.judge
        submitted = 0
        for item in items:
            if isinstance(item, InputFileError):
                stats.input_errors.append(item)
                if self.on_input_error:
                    self.on_input_error(item)
                self._report()
                continue
            stats.selected += 1
            for key in item.model_extra or {}:
                if key not in judge.prompts.reads:
                    stats.unread_keys[key] = stats.unread_keys.get(key, 0) + 1
            stats.order.append(item.id)
            if existing.reusable(item.id, judge.fingerprint, self.options.retry_errors):
                stats.reused += 1
                self._report()
                continue
            if not self._running():
                return
            prepared = await self._prepare(item)
            if prepared is _SPENT:
                stats.stopped = "budget"
                stats.not_sent = 1 + _count_not_done(items, existing, judge, self.options)
                return
            if prepared is None:  # the run stopped
                return
            await self.window.acquire()
            await self.in_flight.acquire()
            if not self._running():  # stopped while this one waited for its places
                self.in_flight.release()
                return
            task = asyncio.create_task(self._grade_one(submitted, *prepared))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            submitted += 1

    async def _prepare(self, session: Session) -> _Prepared | _Spent | None:
        """The session as it will be sent, the budget reserved for it, its first requests when
        the estimate rendered them, and the error reading its texts; ``_SPENT`` when the budget
        cannot cover it, None when the run stopped."""
        if self.budget is None:
            return session, 0.0, None, None
        if session.offloaded:
            # The estimate needs the texts: read them now (one session at a time).
            try:
                session = await resolve_session(session, self.store)
            except ContentRefError as exc:
                return session, 0.0, None, exc
        # Rendered once, for the estimate and then for the calls themselves.
        try:
            first = self.judge.first_requests(session)
        except ConfigError as exc:  # a user template that cannot render this session
            self._stop(exc)
            return None
        reserved = self.budget.reserve(session, first)
        if reserved is None:
            return _SPENT
        return session, reserved, first, None

    # --- grading one session -----------------------------------------------------------------

    async def _grade_one(
        self,
        index: int,
        session: Session,
        reserved: float,
        first: FirstRequests | None,
        unreadable: ContentRefError | None,
    ) -> None:
        judge = self.judge
        try:
            if unreadable is not None:
                raise unreadable
            # Read inside the in-flight slot: offloaded texts count against --concurrency too.
            session = await resolve_session(session, self.store)
            result = await judge.grade(session, first)
        except ContentRefError as exc:
            result = judge.error_result(session, str(exc), ErrorKind.CONTENT_REF)
        except _RUN_ENDING as exc:
            self._stop(exc)
            # This session will never be written: free its place in the reorder window, or a
            # submission waiting for that place would wait for ever.
            self.window.release()
            return
        except Exception as exc:  # a bug must cost one session, never the batch
            message = f"internal error: {type(exc).__name__}: {exc}"
            result = judge.error_result(session, message, ErrorKind.INTERNAL)
        finally:
            self.in_flight.release()
        if self.budget is not None:
            self.budget.settle(reserved, result.usage.cost_usd)
        self.finished[index] = result
        self._write_ready()

    # --- writing -----------------------------------------------------------------------------

    def _write_ready(self) -> None:
        """Write every finished result whose turn has come, in input order."""
        if self.state is _State.BROKEN:
            return
        try:
            while self.next_index in self.finished:
                result = self.finished.pop(self.next_index)
                self.out.append(result)
                self.stats.add(result)
                self.window.release()
                self.next_index += 1
            self.out.flush()
        except OSError as exc:
            self._break(exc)
            return
        self._report()

    def _break(self, exc: OSError) -> None:
        # Disk full, read-only file system: stop now. Requests still in flight are abandoned
        # (their replies could not be saved), and a submission waiting for a place is woken.
        self._stop(_output_error(exc))
        self.state = _State.BROKEN
        current = asyncio.current_task()
        for task in self.tasks:
            if task is not current:
                task.cancel()
        self.window.release()

    def _close(self) -> None:
        try:
            self.out.close()
        except OSError as exc:
            self._stop(_output_error(exc))
            self.state = _State.BROKEN

    def _finalize(self) -> None:
        # Even a stopped run leaves one line per session, in input order, ready to resume
        # (unless the file could not be written: then it is left exactly as it is).
        if self.state is _State.BROKEN:
            return
        try:
            self.stats.rewritten = self.out.finalize(self.stats.order)
        except OSError as exc:
            self._stop(_output_error(exc))

    # --- state -------------------------------------------------------------------------------

    def _running(self) -> bool:
        # A method, not an inline test: the state changes while the submission awaits a place.
        return self.state is _State.RUNNING

    def _stop(self, reason: ResearchJudgeError) -> None:
        """End the run: the first reason is the one raised when it is over."""
        if self.stop is None:
            self.stop = reason
        if self.state is _State.RUNNING:
            self.state = _State.STOPPING

    def _report(self) -> None:
        stats = self.stats
        self.progress.update(
            done=stats.reused + stats.graded,
            reused=stats.reused,
            skipped=len(stats.input_errors),
            errors=stats.errors,
            input_tokens=stats.input_tokens,
            output_tokens=stats.output_tokens,
            cost_usd=stats.cost_usd if stats.cost_known else None,
        )
