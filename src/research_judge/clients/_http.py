"""Shared by the network clients: modes, credentials, ``Retry-After``, HTTP failures as ours.

Nothing here imports an HTTP library or a provider SDK, so ``make_client`` can check a mode
without loading one.

The provider modules catch their SDK's exceptions (the ``openai`` SDK's, over its aiohttp
transport, and the ``anthropic`` SDK's) and hand the status, headers and the provider's error
text to :func:`error_for_status`, so both providers retry (or not) the same way.
"""

from __future__ import annotations

import email.utils
import math
import os
import re
import time
from collections.abc import Mapping
from typing import Literal, get_args

from research_judge.errors import (
    ApiError,
    ConfigError,
    ContextLengthError,
    RateLimitError,
    RequestFormatError,
    TransientApiError,
    UnreachableError,
)
from research_judge.safety.settings import check_base_url, redact_urls

DEFAULT_TIMEOUT = 300.0
"""Seconds one HTTP request may take, for every provider (``--timeout``)."""

OpenAIMode = Literal["json_schema", "json_object", "tool"]
AnthropicMode = Literal["tool", "native"]
# Structured-output modes per provider; the first is the default.
MODES: dict[str, tuple[str, ...]] = {
    "openai": get_args(OpenAIMode),
    "anthropic": get_args(AnthropicMode),
}


def check_choices(provider: str, model: str, mode: str | None) -> str:
    """Refuse an unknown provider, an empty model or a mode the provider lacks; return the
    mode to use (the provider's first when none is given)."""
    if provider not in MODES:
        raise ConfigError(f"unknown provider {provider!r}; choose one of {', '.join(MODES)}")
    if not model:
        raise ConfigError("no judge model given (--model)")
    chosen = mode or MODES[provider][0]
    check_mode(provider, chosen)
    return chosen


# 408 request timeout, 409 conflict (OpenAI's "try again"), 425 too early, every 5xx.
_TRANSIENT_STATUSES = frozenset({408, 409, 425})
# Anthropic answers 529 when it is overloaded: that is back-pressure, like a 429.
_SLOW_DOWN_STATUSES = frozenset({429, 529})
_HINTS = {
    401: "the API key was rejected; check {env_var}",
    403: "the API key may not use this model or endpoint; check {env_var}",
    404: "check the model name and the base URL",
    407: "the proxy wants credentials; check HTTPS_PROXY / HTTP_PROXY",
}
# Provider error texts sometimes quote the key (OpenAI's 401 does, partly masked): drop anything
# shaped like a secret key as well as the exact key we sent.
_KEY_SHAPED = re.compile(r"\b(sk|key|api)[-_][A-Za-z0-9_\-*.]{6,}", re.IGNORECASE)
# Credentials inside a URL (a proxy's, typically): scheme://user:password@host.
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s'\"]+@")
_MAX_DETAIL = 400

# How providers say a request is larger than the model's window. OpenAI sends the code
# ``context_length_exceeded``; Anthropic a 400 "prompt is too long: N tokens > M maximum" (or
# "input length and `max_tokens` exceed context limit"); vLLM "maximum context length is N
# tokens"; llama.cpp "exceeds the available context size" (code exceed_context_size_error).
_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_CONTEXT_PHRASES = (
    "maximum context length",
    "context_length_exceeded",
    "prompt is too long",
    "exceed context limit",
    "exceeds the available context size",
    "context window",
    "too many tokens",
)


def resolve_api_key(
    explicit: str | None, env_var: str, provider: str, *, required: bool = True
) -> str:
    """The key passed in, else the one in ``env_var``; a missing key is a configuration error
    unless not ``required`` (a server on this machine), when it is ``""``: send none."""
    key = explicit if explicit is not None else os.environ.get(env_var)
    key = (key or "").strip()  # a key pasted from a file often brings its newline along
    if not key and not required:
        return ""
    if not key:
        raise ConfigError(
            f"no {provider} API key: set {env_var} (or answer from recordings with --replay DIR)"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        # It could never be sent as a header; say so once instead of failing every call.
        raise ConfigError(f"the {provider} API key contains control characters (check {env_var})")
    return key


def resolve_base_url(explicit: str | None, env_var: str) -> str | None:
    """The base URL passed in, else ``env_var``, else None (the provider's default endpoint)."""
    url = explicit if explicit is not None else os.environ.get(env_var)
    check_base_url("--base-url" if explicit is not None else env_var, url or None)
    return url or None


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` may hold seconds or an HTTP date. The value is returned as given (the engine
    caps it); a missing, negative or unreadable header gives None.
    """
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    raw_date = headers.get("retry-after")
    if raw_date is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(raw_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is always GMT; be lenient with ones that omit it
        return None
    wait = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, wait)


def redact(text: str, secret: str | None) -> str:
    """``text`` with the key, anything shaped like a key, and the credentials of any URL
    (``scheme://user:password@``, query values such as ``?api-key=...``) replaced by ``***``."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return redact_urls(_URL_USERINFO.sub("***@", _KEY_SHAPED.sub("***", text)))


def error_for_status(
    *,
    provider: str,
    status: int,
    detail: str,
    headers: Mapping[str, str],
    session_id: str,
    secret: str | None,
    env_var: str,
    permanent: bool = False,
    code: str | None = None,
) -> ApiError:
    """Our exception for an HTTP error answer: retryable ones carry the server's Retry-After.

    ``permanent`` forces a non-retryable error whatever the status (e.g. OpenAI's 429
    ``insufficient_quota``: waiting will not bring the money back). A request larger than the
    model's window (``code`` or the provider's words) is a ``ContextLengthError``: never retried,
    the judge re-plans it into smaller calls.
    """
    detail = redact(" ".join(detail.split()), secret)[:_MAX_DETAIL] or "no details given"
    where = f" for session {session_id!r}" if session_id else ""
    message = f"{provider} API answered HTTP {status}{where}: {detail}"
    hint = _HINTS.get(status)
    if hint:
        message += f" ({hint.format(env_var=env_var)})"
    error = _error_class(status, detail, headers, permanent, code, message)
    error.detail = detail
    return error


def _error_class(
    status: int,
    detail: str,
    headers: Mapping[str, str],
    permanent: bool,
    code: str | None,
    message: str,
) -> ApiError:
    if permanent:
        return ApiError(message, status)
    if is_context_error(status, code, detail):
        return ContextLengthError(message, status)
    retry_after = parse_retry_after(headers)
    if status in _SLOW_DOWN_STATUSES:
        return RateLimitError(message, status, retry_after)
    if status in _TRANSIENT_STATUSES or status >= 500:
        return TransientApiError(message, status, retry_after)
    return ApiError(message, status)


def is_context_error(status: int, code: str | None, detail: str) -> bool:
    """True when an error answer says the request does not fit the model's window."""
    if status not in (400, 413, 422):
        return False
    if code in _CONTEXT_CODES:
        return True
    lowered = detail.lower()
    return any(phrase in lowered for phrase in _CONTEXT_PHRASES)


ConnectionFailure = Literal["could not connect", "timed out", "lost the connection"]


def connection_error(
    provider: str, base_url: str, session_id: str, what: ConnectionFailure, reason: str = ""
) -> ApiError:
    """A request that got no (whole) HTTP answer: always worth retrying. ``reason`` is the
    transport's own words (refused, DNS, certificate...), which tell the user what to fix."""
    where = f" for session {session_id!r}" if session_id else ""
    because = f": {' '.join(reason.split())[:_MAX_DETAIL]}" if reason else ""
    message = f"{provider} request {what}{where} ({base_url}){because}"
    if what == "could not connect":
        return UnreachableError(f"{message} (check --base-url and that the server is running)")
    return TransientApiError(message)


# Words a server's error names when it refuses the request's structured-output parameters.
_FORMAT_PARAMETERS = ("response_format", "json_schema", "json_object", "tool_choice", "tools")
# What to try instead of each mode, best first.
_OTHER_MODES = {
    "json_schema": "--mode json_object (llama.cpp's servers, Ollama) or --mode tool",
    "json_object": "--mode tool or --mode json_schema (vLLM, OpenAI)",
    "tool": "--mode json_object (llama.cpp's servers, Ollama) or --mode json_schema (vLLM)",
}


def format_rejection(
    provider: str, mode: str, base_url: str, status: int, detail: str
) -> RequestFormatError | None:
    """A refusal of the request's shape, told apart from other errors, or None.

    Servers refuse a structured-output mode they lack in different ways (llama.cpp's Python
    server answers HTTP 500, others 400 or 422), but each names the parameter it refused. Only
    such an answer counts: a 500 naming none of them stays a transient server error.
    """
    if status not in (400, 422, 500) or not any(p in detail for p in _FORMAT_PARAMETERS):
        return None
    shown = " ".join(detail.split())[:_MAX_DETAIL]
    return RequestFormatError(
        f"{provider} server at {base_url} refused the request format of --mode {mode} "
        f"(HTTP {status}: {shown}); this server needs another mode: try "
        f"{_OTHER_MODES.get(mode, 'another --mode')}",
        status,
    )


def check_mode(provider: str, mode: str) -> None:
    """Refuse a structured-output mode the provider's client does not have."""
    modes = MODES[provider]
    if mode not in modes:
        raise ConfigError(
            f"{provider} has no structured-output mode {mode!r}; choose one of {', '.join(modes)}"
        )
