"""``BatchClient``: a ``JudgeClient`` whose calls are answered through provider batches.

The judge grades each session exactly as in a direct run (same requests, re-asks, validation
and assembly): it just waits longer for each reply. ``complete`` puts the request into the
current round and waits; when no new request has arrived for ``settle`` seconds (or a round is
as large as one batch may be), the round is sent as one or more batches, split at the provider's
request-count and byte limits. Each batch is recorded beside ``--out`` as soon as the provider has
accepted it (``state.BatchState``), then polled every ``poll_interval`` seconds; when it ends its
lines are matched to the waiting calls by ``custom_id`` (the request's content key).

What the judge sends after reading a reply (a re-ask) arrives as a new call and goes into the
next round. A line that failed for a passing reason (5xx, expired, canceled) goes into the next
round too, up to ``line_attempts`` times in all; other failures come back to the judge as the
same errors a direct call raises. Identical requests share one line.

On a rerun, a request already held by a recorded batch is not sent again: its batch is polled
(or its results downloaded again) instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from research_judge.clients.base import JudgeRequest, JudgeResponse
from research_judge.clients.batch.api import BatchAPI, LineResult
from research_judge.clients.batch.state import BatchRecord, BatchState
from research_judge.clients.resilience import FATAL_STATUSES
from research_judge.clients.settings import DEFAULT_POLL_INTERVAL
from research_judge.clients.variant import variant_of
from research_judge.errors import (
    ApiError,
    ProviderDownError,
    ResearchJudgeError,
    TransientApiError,
)

DEFAULT_SETTLE = 0.2
"""Seconds without a new request before a round is sent."""
LINE_ATTEMPTS = 3
"""Times one request is put into a batch before its failure is final."""
POLL_FAILURES = 5
"""Polls of one batch that may fail in a row (after the SDK's own retries) before giving up."""


@dataclass
class BatchCounters:
    """What the batches have done so far in this run, for progress and the summary."""

    submitted: int = 0  # batches created by this run
    resumed: int = 0  # batches of an earlier run picked up again
    in_progress: int = 0
    ended: int = 0
    requests_sent: int = 0
    requests_left: int = 0  # calls waiting for a batch answer
    failed_lines: int = 0  # lines that came back failed (sent again or final)
    expired_lines: int = 0
    statuses: dict[str, str] = field(default_factory=dict)


class BatchClient:
    """A ``JudgeClient`` over a ``BatchAPI``; ``aclose()`` stops polling (batches keep running)."""

    def __init__(
        self,
        api: BatchAPI,
        state: BatchState,
        *,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        settle: float = DEFAULT_SETTLE,
        line_attempts: int = LINE_ATTEMPTS,
        on_change: Callable[[BatchCounters], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if poll_interval <= 0:
            raise ValueError("the poll interval must be positive")
        self.api = api
        self.provider = api.provider
        self.model = api.model
        self.variant = variant_of(api)  # keys (custom_id, cache, recordings) as a direct run's
        self.state = state
        self.poll_interval = poll_interval
        self.settle = settle
        self.line_attempts = line_attempts
        self.counters = BatchCounters()
        self._on_change = on_change or (lambda counters: None)
        self._sleep = sleep
        self._waiters: dict[str, list[asyncio.Future[JudgeResponse]]] = {}
        self._requests: dict[str, JudgeRequest] = {}
        self._attempts: dict[str, int] = {}
        self._pending: list[str] = []
        self._flusher: asyncio.Task[None] | None = None
        self._watchers: dict[str, asyncio.Task[None]] = {}
        # Raw lines of batches that have ended and not yet been asked for, by batch id then
        # custom_id: a line is dropped once delivered (its reply is in the response cache if
        # that is on), so memory holds only what a resumed run has still to ask for.
        self._ended: dict[str, dict[str, object]] = {}
        # Batches whose line for a key failed: that key goes to a new batch, not back to them.
        self._spent: set[tuple[str, str]] = set()
        # Batches sent by this run. A failed line in an earlier run's batch was already that
        # run's verdict on it: a rerun sends the request again rather than rereading the failure.
        self._own: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        # Uploads of an earlier run whose batch was never recorded: found or made on first use.
        self._intent_of = {key: rec for rec in state.intents() for key in rec.custom_ids}
        self._resolving: set[str] = set()

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        key = request.key(self.provider, self.model, self.variant)
        future: asyncio.Future[JudgeResponse] = asyncio.get_running_loop().create_future()
        waiters = self._waiters.setdefault(key, [])
        waiters.append(future)
        if len(waiters) == 1:  # the first call with this content: find or send it
            self._requests[key] = request
            self.counters.requests_left += 1
            self._route(key)
        return await future

    async def aclose(self) -> None:
        tasks = [*self._watchers.values(), *self._tasks]
        if self._flusher is not None:
            tasks.append(self._flusher)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._watchers.clear()
        self._tasks.clear()
        self._flusher = None
        await self.api.aclose()

    # --- routing a request ---------------------------------------------------------------

    def _route(self, key: str) -> None:
        intent = self._intent_of.get(key)
        if intent is not None:
            if intent.upload_id not in self._resolving:
                self._resolving.add(str(intent.upload_id))
                task = asyncio.create_task(self._from_upload(intent))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            return
        record = self.state.holder(key)
        if record is not None and (record.batch_id, key) not in self._spent:
            ended = self._ended.get(record.batch_id)
            if ended is not None:
                self._deliver(record.batch_id, key, ended.pop(key, None))
            else:
                self._watch(record, resumed=True)
            return
        self._pending.append(key)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_when_settled())

    async def _flush_when_settled(self) -> None:
        while self._pending:
            seen = len(self._pending)
            await self._sleep(self.settle)
            if len(self._pending) != seen and len(self._pending) < self.api.max_requests:
                continue  # still arriving: let the round fill
            keys, self._pending = self._pending, []
            try:
                for chunk in self._chunks(keys):
                    await self._submit(chunk)
            except Exception as exc:  # a bug must fail its calls, never leave them waiting
                error = ApiError(f"internal error sending a batch: {type(exc).__name__}: {exc}")
                for key in keys:
                    if key in self._waiters:
                        self._fail(key, error)

    def _chunks(self, keys: list[str]) -> list[list[tuple[str, object]]]:
        chunks: list[list[tuple[str, object]]] = []
        current: list[tuple[str, object]] = []
        size = 0
        for key in keys:
            line, length = self.api.line(key, self._requests[key])
            if current and (
                len(current) >= self.api.max_requests or size + length > self.api.max_bytes
            ):
                chunks.append(current)
                current, size = [], 0
            current.append((key, line))
            size += length
        if current:
            chunks.append(current)
        return chunks

    async def _submit(self, chunk: list[tuple[str, object]]) -> None:
        keys = [key for key, _ in chunk]
        lines = [line for _, line in chunk]
        for key in keys:
            self._attempts[key] = self._attempts.get(key, 0) + 1
        try:
            upload_id = await self.api.upload(lines)
            if upload_id is not None:  # recorded first: a crash now must not lose the upload
                self.state.add(self.provider, self.model, "", keys, upload_id)
            batch_id = await self.api.submit(lines, upload_id)
            record = self.state.add(self.provider, self.model, batch_id, keys, upload_id)
        except ResearchJudgeError as exc:
            error = _run_stopper(exc, "sending a batch")
            for key in keys:
                self._fail(key, error)
            return
        self.counters.submitted += 1
        self.counters.requests_sent += len(keys)
        self._watch(record, resumed=False)

    async def _from_upload(self, intent: BatchRecord) -> None:
        """An earlier run's upload: the batch made from it, else a batch made from it now."""
        upload_id = str(intent.upload_id)
        record: BatchRecord | None = None
        try:
            batch_id = await self.api.find(upload_id) or await self.api.submit([], upload_id)
            record = self.state.add(
                self.provider, self.model, batch_id, intent.custom_ids, upload_id
            )
        except ResearchJudgeError:
            pass  # the upload is gone (files expire): its requests are sent afresh below
        for key in intent.custom_ids:
            self._intent_of.pop(key, None)
        if record is not None:
            self._watch(record, resumed=True)
            return
        for key in intent.custom_ids:
            if key in self._waiters:
                self._route(key)

    # --- waiting for a batch ---------------------------------------------------------------

    def _watch(self, record: BatchRecord, *, resumed: bool) -> None:
        if record.batch_id in self._watchers:
            return
        if resumed:
            self.counters.resumed += 1
        else:
            self._own.add(record.batch_id)
        self.counters.in_progress += 1
        self._changed()
        task = asyncio.create_task(self._follow(record))
        self._watchers[record.batch_id] = task

    async def _follow(self, record: BatchRecord) -> None:
        try:
            await self._follow_until_ended(record)
        except Exception as exc:  # e.g. an unreadable results file: fail, never hang
            reason = f"internal error reading batch {record.batch_id}: {type(exc).__name__}: {exc}"
            self._give_up(record, ApiError(reason))

    async def _follow_until_ended(self, record: BatchRecord) -> None:
        batch_id = record.batch_id
        failures = 0
        while True:
            try:
                status = await self.api.poll(batch_id)
            except TransientApiError as exc:
                failures += 1
                if failures >= POLL_FAILURES:
                    self._give_up(record, exc)
                    return
            except ApiError as exc:
                self._give_up(record, exc)
                return
            else:
                failures = 0
                self.counters.statuses[batch_id] = status.status
                self._changed()
                if status.ended:
                    break
            await self._sleep(self.poll_interval)
        try:
            lines = await self.api.results(batch_id, status)
        except ApiError as exc:
            self._give_up(record, exc)
            return
        self._ended[batch_id] = lines
        for key in record.custom_ids:
            if key in self._waiters:
                self._deliver(batch_id, key, lines.pop(key, None))
        self.counters.in_progress -= 1
        self.counters.ended += 1
        self._changed()

    def _give_up(self, record: BatchRecord, exc: ApiError) -> None:
        self.counters.in_progress -= 1
        if exc.status == 404:
            # The provider no longer has the batch or its results (deleted, or past the
            # retention time of an old record): they cannot be had, so the requests go again.
            self.counters.statuses[record.batch_id] = "gone"
            for key in record.custom_ids:
                self._spent.add((record.batch_id, key))
                if key in self._waiters:
                    self._route(key)
            self._changed()
            return
        self.counters.statuses[record.batch_id] = "unreachable"
        error = _run_stopper(exc, f"following batch {record.batch_id}")
        for key in record.custom_ids:
            if key in self._waiters:
                self._fail(key, error)
        self._changed()

    def _deliver(self, batch_id: str, key: str, raw: object | None) -> None:
        outcome: LineResult = self.api.outcome(raw, self._requests[key])
        if outcome.response is not None:
            self._resolve(key, outcome.response)
            return
        self.counters.failed_lines += 1
        if batch_id not in self._own:
            self._spent.add((batch_id, key))
            self._route(key)  # into this run's next round, as a fresh request
            return
        if outcome.retry is not None:
            self.counters.expired_lines += "expired" in outcome.retry
            self._spent.add((batch_id, key))
            if self._attempts.get(key, 1) < self.line_attempts:
                self._route(key)  # into the next round
            else:
                tries = self._attempts.get(key, 1)
                self._fail(
                    key, TransientApiError(f"batch line failed {tries} times: {outcome.retry}")
                )
            return
        assert outcome.error is not None
        self._fail(key, outcome.error)

    def _resolve(self, key: str, response: JudgeResponse) -> None:
        for future in self._waiters.pop(key, ()):
            if not future.done():
                future.set_result(response)
        self._forget(key)

    def _fail(self, key: str, error: Exception) -> None:
        for future in self._waiters.pop(key, ()):
            if not future.done():
                future.set_exception(error)
        self._forget(key)

    def _forget(self, key: str) -> None:
        self._requests.pop(key, None)
        self.counters.requests_left -= 1
        self._changed()

    def _changed(self) -> None:
        self._on_change(self.counters)


def _run_stopper(exc: ResearchJudgeError, doing: str) -> ApiError:
    """The error the waiting calls get when a control call failed.

    The SDK has already retried it; an unreachable provider or rejected credentials would fail
    every later call alike, so the run stops (resumable: the batches already out stay recorded).
    Anything else (a batch the provider refused, say) is that batch's sessions' error.
    """
    if not isinstance(exc, ApiError):
        return ApiError(f"{doing}: {exc}")
    if isinstance(exc, TransientApiError) or exc.status in FATAL_STATUSES:
        return ProviderDownError(f"{doing}: {exc}", exc.status)
    return ApiError(f"{doing}: {exc}", exc.status)
