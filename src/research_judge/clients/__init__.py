"""Judge clients: one protocol (``JudgeClient``), a client per provider, scripts, record/replay.

``make_client`` builds what the command line asks for. The network clients (and the HTTP and SDK
libraries under them) are imported only when one is built (``OpenAIClient`` and ``AnthropicClient``
are loaded on first access), so importing this package stays cheap and ``--replay`` never loads
them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from research_judge.clients._http import (
    MODES,
    AnthropicMode,
    OpenAIMode,
    check_mode,
    resolve_base_url,
)
from research_judge.clients.base import JudgeClient, JudgeRequest, JudgeResponse, Message, Usage
from research_judge.clients.recording import RecordingClient, ReplayClient
from research_judge.clients.scripted import ScriptedClient, ScriptExhausted
from research_judge.clients.variant import judge_variant
from research_judge.cost.tokens import estimate_tokens
from research_judge.errors import ConfigError
from research_judge.safety.settings import check_finite

if TYPE_CHECKING:
    from research_judge.clients.anthropic import AnthropicClient
    from research_judge.clients.openai import OpenAIClient

__all__ = [
    "MODES",
    "PROVIDERS",
    "AnthropicClient",
    "JudgeClient",
    "JudgeRequest",
    "JudgeResponse",
    "Message",
    "OpenAIClient",
    "RecordingClient",
    "ReplayClient",
    "ScriptExhausted",
    "ScriptedClient",
    "Usage",
    "estimate_tokens",
    "make_client",
]

PROVIDERS: tuple[str, ...] = tuple(MODES)


def make_client(
    provider: str,
    model: str,
    *,
    base_url: str | None = None,
    mode: str | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
) -> JudgeClient:
    """The judge client for ``--provider/--model`` and friends.

    ``replay`` wins over the network: no network client is built and no key is needed. ``record``
    wraps the network client and saves every exchange. Both together is a configuration error.
    """
    if provider not in PROVIDERS:
        raise ConfigError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    if not model:
        raise ConfigError("no judge model given (--model)")
    chosen = mode or MODES[provider][0]
    check_mode(provider, chosen)
    if replay is not None:
        if record is not None:
            raise ConfigError("--record and --replay cannot be used together")
        env = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}[provider]
        variant = judge_variant(provider, resolve_base_url(base_url, env), chosen)
        return ReplayClient(replay, provider=provider, model=model, variant=variant)
    check_finite("timeout", timeout)  # 0, -1 or nan once switched the timeout off
    options: dict[str, Any] = {"api_key": api_key, "base_url": base_url}
    if timeout is not None:
        options["timeout"] = timeout
    client: JudgeClient
    if provider == "openai":
        from research_judge.clients.openai import OpenAIClient

        client = OpenAIClient(model, mode=cast(OpenAIMode, chosen), **options)
    else:
        from research_judge.clients.anthropic import AnthropicClient

        client = AnthropicClient(model, mode=cast(AnthropicMode, chosen), **options)
    return RecordingClient(client, record) if record is not None else client


def __getattr__(name: str) -> Any:
    # Lazy exports: aiohttp and the anthropic SDK take 0.3-2.5 s to import; load them when used.
    if name == "OpenAIClient":
        from research_judge.clients.openai import OpenAIClient

        return OpenAIClient
    if name == "AnthropicClient":
        from research_judge.clients.anthropic import AnthropicClient

        return AnthropicClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
