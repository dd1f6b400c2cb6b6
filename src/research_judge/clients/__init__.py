"""Judge clients: one protocol (``JudgeClient``), a client per provider, scripts, record/replay.

``make_client`` builds one provider's client; ``chain.build_client`` stacks the whole chain
(resilience, cache, recording, or replay instead) that the CLI, the Python API and the benchmarks
all use. The network clients (and the HTTP and SDK libraries under them) are imported only when
one is built (``OpenAIClient`` and ``AnthropicClient``
are loaded on first access), so importing this package stays cheap and ``--replay`` never loads
them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from research_judge._lazy import lazy_exports
from research_judge.clients._http import MODES, AnthropicMode, OpenAIMode, check_choices
from research_judge.clients.base import JudgeClient, JudgeRequest, JudgeResponse, Message, Usage
from research_judge.errors import ConfigError
from research_judge.safety.settings import check_finite

if TYPE_CHECKING:
    from research_judge.clients.anthropic import AnthropicClient
    from research_judge.clients.openai import OpenAIClient, TokenLimitField
    from research_judge.clients.recording import RecordingClient, ReplayClient
    from research_judge.clients.scripted import ScriptedClient, ScriptExhausted
    from research_judge.cost.tokens import estimate_tokens

# Loaded on first access (name -> module): the SDKs and aiohttp take 0.3-2.5 s to import, and
# even pydantic (recordings) is more than ``--help`` should pay for.
_LAZY = {
    "OpenAIClient": "research_judge.clients.openai",
    "AnthropicClient": "research_judge.clients.anthropic",
    "RecordingClient": "research_judge.clients.recording",
    "ReplayClient": "research_judge.clients.recording",
    "ScriptedClient": "research_judge.clients.scripted",
    "ScriptExhausted": "research_judge.clients.scripted",
    "estimate_tokens": "research_judge.cost.tokens",
}

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
    "check_choices",
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
    api_key: str | None = None,
    timeout: float | None = None,
    token_limit_field: str | None = None,
) -> JudgeClient:
    """The provider's client alone: the innermost layer of the chain, with no retries, cache or
    recording. To grade, build the whole chain with ``clients.chain.build_client``.
    ``token_limit_field`` (OpenAI-compatible servers only) chooses the output-cap field
    (default: by server, see ``OpenAIClient``).
    """
    chosen = check_choices(provider, model, mode)
    check_finite("timeout", timeout)  # 0, -1 or nan once switched the timeout off
    options: dict[str, Any] = {"api_key": api_key, "base_url": base_url}
    if timeout is not None:
        options["timeout"] = timeout
    if provider == "openai":
        from research_judge.clients.openai import OpenAIClient

        if token_limit_field not in (None, "max_tokens", "max_completion_tokens"):
            raise ConfigError(
                f"unknown token field {token_limit_field!r}; use max_tokens or "
                "max_completion_tokens"
            )
        return OpenAIClient(
            model,
            mode=cast(OpenAIMode, chosen),
            token_limit_field=cast("TokenLimitField | None", token_limit_field),
            **options,
        )
    if token_limit_field:
        raise ConfigError("--token-field is for OpenAI-compatible servers (--provider openai)")
    from research_judge.clients.anthropic import AnthropicClient

    return AnthropicClient(model, mode=cast(AnthropicMode, chosen), **options)


__getattr__ = lazy_exports(__name__, _LAZY)
