"""The client chain, built in one place for the CLI, the Python API and the benchmarks.

Outermost first::

    recording   saves what the judge saw, cache hits included (--record DIR)
    cache       answers a request seen before from disk (on unless --no-cache)
    resilience  retries, 429 backoff, adaptive concurrency, circuit breaker
                (with --batch: BatchClient instead, calls answered through provider batches)
    provider    OpenAIClient or AnthropicClient (the only layer that talks to the network)

Replay (``--replay DIR``) replaces the whole chain: no network client is built, no key needed.
``ClientSettings`` (in ``clients.settings``, which imports nothing heavy, so ``--help`` stays
fast) holds every setting of the chain with its one default; the ``grade`` flags and
``research_judge.grade`` take their defaults from it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from . import make_client
from .base import JudgeClient
from .batch import BatchClient, BatchCounters, BatchState
from .cache import CachingClient
from .recording import RecordingClient, ReplayClient
from .resilience import ResilientClient
from .settings import BASELINE, ClientSettings, RetryPolicy, default_cache_dir
from .wrapper import find_layer, layers

__all__ = [
    "ClientSettings",
    "RetryPolicy",
    "build_client",
    "default_cache_dir",
    "layers",
    "resilience_of",
]


def build_client(
    settings: ClientSettings,
    *,
    on_batch_change: Callable[[BatchCounters], None] | None = None,
    local: JudgeClient | None = None,
) -> JudgeClient:
    """The whole chain for ``settings``; whoever builds it closes it (``await c.aclose()``).

    ``on_batch_change`` is told whenever a batch changes state (batch mode only: progress).
    ``local`` is a judge that runs in this process (the baseline judge, built by the caller,
    which knows the prompts): it needs no retries and no cache, only the recording layer."""
    if settings.replay is not None:
        return ReplayClient(
            settings.replay,
            provider=settings.provider,
            model=settings.model,
            variant=settings.variant,
        )
    if local is not None:
        return local if settings.record is None else RecordingClient(local, settings.record)
    if settings.provider == BASELINE:
        # It reads requests through the prompts, which only grade's own setup knows.
        raise ConfigError("the baseline judge cannot sit on a --jury: grade with it alone")
    client: JudgeClient = make_client(
        settings.provider,
        settings.model,
        base_url=settings.base_url,
        mode=settings.mode,
        api_key=settings.api_key,
        timeout=settings.timeout,
        token_limit_field=settings.token_field,
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


def resilience_of(client: JudgeClient) -> ResilientClient | None:
    """The chain's resilience layer, whose counters (retries, 429s, cuts) a caller may report."""
    return find_layer(client, ResilientClient)
