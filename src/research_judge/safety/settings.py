"""Settings checked before anything is sent.

``--timeout 0``, ``-1`` or ``nan`` used to switch the timeout off and ``--max-cost nan`` to mean
no limit; a base URL with ``user:pass@`` failed every session with an internal error. A setting
is either sane or a configuration error naming the flag and why.
"""

from __future__ import annotations

import math
from urllib.parse import urlsplit

from ..errors import ConfigError


def check_finite(
    what: str, value: float | None, *, minimum: float = 0.0, allow_minimum: bool = False
) -> None:
    """``value`` must be a finite number above ``minimum`` (or equal, if ``allow_minimum``)."""
    if value is None:
        return
    if not math.isfinite(value):
        raise ConfigError(f"{what} must be a finite number, got {value}")
    if value < minimum or (value == minimum and not allow_minimum):
        if allow_minimum:
            bound = f"at least {minimum:g}"
        else:
            bound = "positive" if minimum == 0 else f"more than {minimum:g}"
        raise ConfigError(f"{what} must be {bound}, got {value:g}")


def check_base_url(what: str, url: str | None) -> None:
    """A URL without credentials in it (the clients check the rest of its shape).

    Credentials in a URL end up in logs, recordings and error messages; the API key belongs in
    the environment (``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``).
    """
    if url is None:
        return
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a port that is not a number
    except ValueError as exc:
        raise ConfigError(f"{what} is not a valid URL: {exc}") from None
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"{what} must not carry a user name or password (user:pass@host): credentials in a "
            "URL leak into logs and recordings; put the API key in the environment instead"
        )
