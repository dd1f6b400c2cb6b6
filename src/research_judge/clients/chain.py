"""The client chain, built in one place for the CLI, the Python API and the benchmarks.

Outermost first::

    recording   saves what the judge saw, cache hits included (--record DIR)
    cache       answers a request seen before from disk (on unless --no-cache)
    resilience  retries, 429 backoff, adaptive concurrency, circuit breaker
                (with --batch: BatchClient instead, calls answered through provider batches)
    provider    OpenAIClient or AnthropicClient (the only layer that talks to the network)

Replay (``--replay DIR``) replaces the whole chain: no network client is built, no key needed.
``ClientSettings`` holds every setting of the chain with its one default; the ``grade`` flags
and ``research_judge.grade`` take their defaults from it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from ..safety.settings import check_base_url, check_finite
from . import check_choices, make_client
from ._http import resolve_base_url
from .base import JudgeClient
from .batch import DEFAULT_POLL_INTERVAL, BatchClient, BatchCounters, BatchState
from .cache import CachingClient
from .recording import RecordingClient, ReplayClient
from .resilience import ResilientClient, RetryPolicy
from .variant import judge_variant

_RETRY = RetryPolicy()


def default_cache_dir() -> Path:
    """Where responses are cached unless told otherwise: under ``$XDG_CACHE_HOME``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "research-judge" / "responses"


@dataclass(frozen=True)
class ClientSettings:
    """Which judge to ask and how to reach it. Every default here is the tool's default."""

    provider: str = "openai"
    model: str = ""
    base_url: str | None = None  # None: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, then the SDK's
    mode: str | None = None  # None: the provider's first mode (json_schema, tool)
    timeout: float | None = None  # None: clients._http.DEFAULT_TIMEOUT
    api_key: str | None = field(default=None, repr=False)  # None: the provider's env variable
    concurrency: int = 8  # judge requests in flight at once (and sessions being graded)
    retries: int = _RETRY.attempts - 1  # transport retries per request
    down_after: float = _RETRY.down_after  # seconds without a success before the run stops
    cache: bool = True
    cache_dir: str | Path | None = None  # None: default_cache_dir()
    record: str | Path | None = None
    replay: str | Path | None = None
    batch: bool = False  # every call through the provider's batch API (docs/batch.md)
    batch_poll: float = DEFAULT_POLL_INTERVAL  # seconds between two polls of a batch
    batch_dir: str | Path | None = None  # where batches are recorded: required with batch

    def __post_init__(self) -> None:
        if self.replay is None:
            # A replay answers as whatever provider made the recordings (tests use "scripted").
            check_choices(self.provider, self.model, self.mode)
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.retries < 0:
            raise ConfigError(f"--retries must be 0 or more, got {self.retries}")
        if self.record is not None and self.replay is not None:
            raise ConfigError("--record and --replay cannot be used together")
        if self.batch and self.replay is not None:
            raise ConfigError("--batch sends to the provider; --replay never does: choose one")
        if self.batch and self.batch_dir is None:
            raise ConfigError("batch mode needs a folder to record its batches in (batch_dir)")
        if not self.batch_poll > 0:
            raise ConfigError(f"--batch-poll must be more than 0 seconds, got {self.batch_poll}")
        # 0, -1 or nan once switched the timeout off; credentials in a URL leak into logs.
        check_finite("--timeout", self.timeout)
        check_finite("--down-after", self.down_after, allow_minimum=True)
        check_base_url("--base-url", self.base_url)

    @property
    def resolved_cache_dir(self) -> Path:
        return Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()

    @property
    def variant(self) -> str:
        """The endpoint and mode a replay is keyed on: those the recording run used."""
        env = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}.get(self.provider)
        base_url = self.base_url if env is None else resolve_base_url(self.base_url, env)
        return judge_variant(self.provider, base_url, self.mode)

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(attempts=self.retries + 1, down_after=self.down_after)


def build_client(
    settings: ClientSettings, *, on_batch_change: Callable[[BatchCounters], None] | None = None
) -> JudgeClient:
    """The whole chain for ``settings``; whoever builds it closes it (``await c.aclose()``).

    ``on_batch_change`` is told whenever a batch changes state (batch mode only: progress)."""
    if settings.replay is not None:
        return ReplayClient(
            settings.replay,
            provider=settings.provider,
            model=settings.model,
            variant=settings.variant,
        )
    client: JudgeClient = make_client(
        settings.provider,
        settings.model,
        base_url=settings.base_url,
        mode=settings.mode,
        api_key=settings.api_key,
        timeout=settings.timeout,
    )
    if settings.batch:
        from .batch.providers import batch_api  # loads both SDKs: only when batching

        assert settings.batch_dir is not None  # checked in ClientSettings
        client = BatchClient(
            batch_api(client),
            BatchState.load(Path(settings.batch_dir)),
            poll_interval=settings.batch_poll,
            on_change=on_batch_change,
        )
    else:
        client = ResilientClient(
            client, concurrency=settings.concurrency, policy=settings.retry_policy
        )
    if settings.cache:
        client = CachingClient(client, settings.resolved_cache_dir)
    if settings.record is not None:
        client = RecordingClient(client, settings.record)
    return client


def layers(client: JudgeClient) -> Iterator[JudgeClient]:
    """The chain's clients, outermost first (each wrapper keeps the next one as ``inner``)."""
    current: JudgeClient | None = client
    while current is not None:
        yield current
        inner = getattr(current, "inner", None)
        current = inner if isinstance(inner, JudgeClient) else None


def resilience_of(client: JudgeClient) -> ResilientClient | None:
    """The chain's resilience layer, whose counters (retries, 429s, cuts) a caller may report."""
    return next((c for c in layers(client) if isinstance(c, ResilientClient)), None)
