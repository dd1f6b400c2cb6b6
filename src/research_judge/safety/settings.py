"""Settings checked before anything is sent.

``--timeout 0``, ``-1`` or ``nan`` used to switch the timeout off and ``--max-cost nan`` to mean
no limit; a base URL with ``user:pass@`` failed every session with an internal error. A setting
is either sane or a configuration error naming the flag and why.
"""

from __future__ import annotations

import math
import re
from urllib.parse import urlsplit

from ..errors import ConfigError

# The largest offloaded object read from --store: real pages and the text of long PDFs fit; a
# 600 MB object never reaches the tokenizer (eight at once would need gigabytes).
DEFAULT_MAX_REF_BYTES = 20_000_000


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


# A URL inside free text: scheme://, then up to a blank, a quote or a bracket.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>()]+")
_USERINFO = re.compile(r"(?<=://)[^/?#@\s]+@")


def redact_url(url: str) -> str:
    """``url`` as it may be shown: its user information, every query value and its fragment
    replaced by ``***`` (``?api-key=K123`` -> ``?api-key=***``), so a key put in a URL is never
    echoed in a message, a log or a recording."""
    base, hash_, _fragment = url.partition("#")
    base, mark, query = base.partition("?")
    base = _USERINFO.sub("***@", base)
    if mark:
        query = "".join(_redact_query_part(part) for part in re.split("([&;])", query))
    return base + mark + query + ("#***" if hash_ else "")


def redact_urls(text: str) -> str:
    """Every ``scheme://`` URL inside ``text`` through ``redact_url``."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group()), text)


def _redact_query_part(part: str) -> str:
    if part in ("", "&", ";"):
        return part
    name, eq, value = part.partition("=")
    if not eq:
        return "***"  # a bare value (``?K123``) may be the key itself
    return f"{name}=***" if value else part
