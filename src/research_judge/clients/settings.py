"""The settings of the client chain, each with its one default.

Kept apart from the chain itself and free of heavy imports (no tenacity, no pydantic, no SDK):
the ``grade`` flags take their defaults from here, and ``--help`` should not pay for the
machinery they configure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from ..safety.settings import check_base_url, check_finite
from ._http import check_choices, resolve_base_url
from .variant import judge_variant


@dataclass(frozen=True)
class RetryPolicy:
    """Transport retries per request, and when a provider that keeps failing counts as down."""

    attempts: int = 8
    max_retry_after: float = 60.0
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    down_after: float = 120.0
    min_failures_for_down: int = 10
    # Connection failures before the provider ever answered: a wrong address, not an outage.
    unreachable_after: int = 3


def default_cache_dir() -> Path:
    """Where responses are cached unless told otherwise: under ``$XDG_CACHE_HOME``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "research-judge" / "responses"


_RETRY = RetryPolicy()

BASELINE = "baseline"
"""``--provider baseline``: the judge that is code, not a model (``research_judge.baseline``)."""
BASELINE_MODEL = "lexical-1"
"""Its model name: the rules' version, bumped whenever a rule or threshold changes."""

DEFAULT_POLL_INTERVAL = 30.0
"""Seconds between two polls of a provider batch (``grade --batch-poll``)."""


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
    # OpenAI-compatible servers only: the output-cap field (None: by server, see OpenAIClient).
    token_field: str | None = None

    def __post_init__(self) -> None:
        if self.provider == BASELINE:
            self._check_baseline()
        elif self.replay is None:
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

    def _check_baseline(self) -> None:
        """The baseline judge runs in this process: settings for reaching a model mean nothing."""
        if not self.model:
            object.__setattr__(self, "model", BASELINE_MODEL)
        if self.model != BASELINE_MODEL:
            raise ConfigError(
                f"the baseline judge's model is {BASELINE_MODEL!r} (its rules' version), "
                f"not {self.model!r}: leave --model out"
            )
        for flag, value in (
            ("--base-url", self.base_url),
            ("--mode", self.mode),
            ("--token-field", self.token_field),
        ):
            if value is not None:
                raise ConfigError(f"{flag} means nothing to the baseline judge (no server)")
        if self.batch:
            raise ConfigError("--batch means nothing to the baseline judge (no server)")

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
