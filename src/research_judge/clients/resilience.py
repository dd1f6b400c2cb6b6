"""Transport resilience around any judge client: retries, adaptive concurrency, a circuit breaker.

- Retries (tenacity) cover transient failures only: 429/529, 5xx, timeouts, dropped connections.
  A Retry-After from the provider is honoured up to a cap; otherwise jittered exponential backoff.
- ``AdaptiveLimiter`` caps requests in flight at ``--concurrency`` and halves the cap on a 429
  (once per window, so one burst of 429s counts once), then creeps back up by about
  one slot per window of successes (AIMD, as TCP does), so a rate-limited run slows down instead
  of failing.
- ``Health`` stops the run when the provider is plainly down: no success for ``down_after``
  seconds while failures keep arriving, credentials/model rejected outright, the request format
  (structured-output mode) refused, the first calls all refused with the same 4xx and text, or
  nothing answering at the address (refused, unknown host) before the provider ever answered.
  Once stopped, requests waiting for a slot are not sent.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_base, wait_random_exponential

from ..errors import (
    ApiError,
    ContextLengthError,
    ProviderDownError,
    RateLimitError,
    RequestFormatError,
    TransientApiError,
    UnreachableError,
)
from .base import JudgeClient, JudgeRequest, JudgeResponse
from .settings import RetryPolicy
from .wrapper import WrapperClient

# Rejected key, forbidden model or endpoint, unknown model or URL, proxy wanting credentials:
# every later call would get the same answer.
FATAL_STATUSES = frozenset({401, 403, 404, 407})
# Before any call has succeeded, this many refusals in a row with the same 4xx status and text
# (a required server option missing, a parameter the model does not take) mean every call will
# be refused alike: stop with the server's words instead of failing every session one by one.
SAME_REFUSAL_AFTER = 3


class AdaptiveLimiter:
    """A semaphore whose size moves: halved on rate limiting, grown back on success.

    A burst of 429s answers requests that were all sent under the same limit, so only the first
    of them cuts: each slot carries the limiter's epoch, and a 429 cuts only if its request was
    sent under the current epoch (TCP's once-per-window rule, without a clock).
    """

    def __init__(self, maximum: int) -> None:
        if maximum < 1:
            raise ValueError("concurrency must be at least 1")
        self.maximum = maximum
        self.limit = float(maximum)
        self.in_flight = 0
        self.peak_in_flight = 0
        self.cuts = 0
        self.epoch = 0
        # FIFO of waiters, woken one at a time: waking every waiter on each release (a
        # Condition's notify_all) costs O(waiters) task switches per request at batch scale.
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> int:
        """Wait for a slot (first come, first served); return the epoch it was granted in."""
        if self._waiters or self.in_flight >= int(self.limit):
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter  # the slot was taken for us by _wake
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self.release()  # granted just as we were cancelled: give it back
                elif waiter in self._waiters:  # _wake may have dropped it already
                    self._waiters.remove(waiter)
                raise
        else:
            self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return self.epoch

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < int(self.limit):
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    def on_rate_limited(self, epoch: int) -> None:
        if epoch == self.epoch:
            self.limit = max(1.0, self.limit / 2)
            self.epoch += 1
            self.cuts += 1

    def on_success(self) -> None:
        # Additive increase: a full window of successes buys one more slot.
        self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
        self._wake()


class Health:
    """Tracks whether the provider answers at all."""

    def __init__(self, policy: RetryPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self._policy = policy
        self._clock = clock
        self._failing_since: float | None = None
        self._failures = 0
        self._answered = False  # has the provider ever answered, even with an error?
        self._unreachable = 0
        self._succeeded = False  # has any call succeeded?
        self._refusal: tuple[int, str] | None = None  # the 4xx the last failures repeated
        self._refusals = 0
        # Once the provider is found down, requests already waiting for a slot are not sent.
        self.stopped: ProviderDownError | None = None

    def success(self) -> None:
        self._failing_since, self._failures = None, 0
        self._answered = True
        self._succeeded = True

    def failure(self, exc: ApiError) -> None:
        try:
            self._judge(exc)
        except ProviderDownError as down:
            self.stopped = down
            raise

    def _judge(self, exc: ApiError) -> None:
        if exc.status in FATAL_STATUSES:
            raise ProviderDownError(f"the provider rejected the request: {exc}", exc.status)
        if isinstance(exc, RequestFormatError):
            raise ProviderDownError(str(exc), exc.status)
        if exc.status is not None:
            self._answered = True
            self._same_refusal(exc)
        elif isinstance(exc, UnreachableError) and not self._answered:
            self._unreachable += 1
            if self._unreachable >= self._policy.unreachable_after:
                raise ProviderDownError(
                    f"cannot reach the provider ({self._unreachable} attempts, none answered): "
                    f"{exc}"
                )
        if not isinstance(exc, TransientApiError):
            # A 400 (say, a session too long for the context) is an answer: the provider is up.
            # Only transport failures, 5xx and 429 say it is not.
            return
        now = self._clock()
        if self._failing_since is None:
            self._failing_since = now
        self._failures += 1
        p = self._policy
        if self._failures >= p.min_failures_for_down and now - self._failing_since >= p.down_after:
            raise ProviderDownError(
                f"no successful judge call for {now - self._failing_since:.0f}s and "
                f"{self._failures} failures in a row (last: {exc}); stopping"
            )

    def _same_refusal(self, exc: ApiError) -> None:
        status = exc.status
        if (
            self._succeeded
            or status is None
            or not 400 <= status < 500
            or isinstance(exc, TransientApiError | ContextLengthError)
        ):
            return
        key = (status, exc.detail if exc.detail is not None else str(exc))
        self._refusals = self._refusals + 1 if key == self._refusal else 1
        self._refusal = key
        if self._refusals >= SAME_REFUSAL_AFTER:
            raise ProviderDownError(
                f"the first {self._refusals} judge calls were all refused with the same "
                f"answer, so every call would be: {exc}. Sessions that already got this answer "
                "are recorded as errors: add --retry-errors when you run again",
                status,
            )


class _RetryAfterWait(wait_base):
    def __init__(self, policy: RetryPolicy) -> None:
        self._cap = policy.max_retry_after
        self._fallback = wait_random_exponential(
            multiplier=policy.backoff_base, max=policy.backoff_max
        )

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        after = getattr(exc, "retry_after", None)
        if isinstance(after, int | float) and after >= 0:
            return min(float(after), self._cap)
        return float(self._fallback(retry_state))


class ResilientClient(WrapperClient):
    """Wraps a client so each request is limited, retried and watched."""

    def __init__(
        self,
        inner: JudgeClient,
        *,
        concurrency: int,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(inner)
        self.policy = policy or RetryPolicy()
        self.limiter = AdaptiveLimiter(concurrency)
        self.health = Health(self.policy, clock)
        self.retries = 0
        self.rate_limited = 0  # 429 (and 529) answers, retried or not
        # Called after each retry is counted: a progress display redraws with the new counts.
        self.on_retry: Callable[[], None] | None = None
        self._sleep = sleep

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        # Most calls succeed at once; building tenacity's machinery for each of them costs more
        # CPU than the rest of this layer, so it is only built once a call has failed.
        try:
            return await self._once(request)
        except TransientApiError as exc:
            failed: TransientApiError | None = exc
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TransientApiError),
            wait=_RetryAfterWait(self.policy),
            stop=stop_after_attempt(self.policy.attempts),
            sleep=self._sleep,
            reraise=True,
            before_sleep=self._count_retry,
        )
        async for attempt in retrying:
            with attempt:
                if failed is not None:
                    # Attempt 1 was the call above: hand its failure to tenacity, which then
                    # waits (honouring Retry-After) and retries as its policy says.
                    first, failed = failed, None
                    raise first
                return await self._once(request)
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def _once(self, request: JudgeRequest) -> JudgeResponse:
        epoch = await self.limiter.acquire()
        if (down := self.health.stopped) is not None:
            self.limiter.release()
            raise ProviderDownError(str(down), down.status)
        try:
            response = await self.inner.complete(request)
        except RateLimitError as exc:
            self.rate_limited += 1
            self.limiter.on_rate_limited(epoch)
            self.health.failure(exc)
            raise
        except ContextLengthError:
            # The provider answered, and will answer the same: the judge re-plans the request.
            self.health.success()
            raise
        except ApiError as exc:
            self.health.failure(exc)
            raise
        finally:
            self.limiter.release()
        self.limiter.on_success()
        self.health.success()
        return response

    def _count_retry(self, _state: RetryCallState) -> None:
        self.retries += 1
        if self.on_retry is not None:
            self.on_retry()
