"""Which server and which structured-output mode answered: part of every key and fingerprint.

A local server serving a model under a real model's name, the same alias on another server, or
another ``--mode`` can answer differently, so the response cache, recordings and resume must not
mix them. The variant is empty for a provider's official endpoint and default mode, so keys and
fingerprints made before it existed stay valid for the common case.
"""

from __future__ import annotations

from ._http import MODES

OFFICIAL_ENDPOINTS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}


def judge_variant(provider: str, base_url: str | None, mode: str | None) -> str:
    """``""`` for the default setup, else e.g. ``endpoint=http://127.0.0.1:8000/v1;mode=tool``."""
    parts = []
    endpoint = (base_url or "").strip().rstrip("/")
    if endpoint and endpoint != OFFICIAL_ENDPOINTS.get(provider):
        parts.append(f"endpoint={endpoint}")
    defaults = MODES.get(provider, ())
    if mode and (not defaults or mode != defaults[0]):
        parts.append(f"mode={mode}")
    return ";".join(parts)


def variant_of(client: object) -> str:
    """A client's variant; wrappers copy their inner client's, test doubles have none."""
    value = getattr(client, "variant", "")
    return value if isinstance(value, str) else ""


def fingerprint_part(client: object) -> dict[str, str]:
    """What the variant adds to a judge fingerprint: nothing for the default setup."""
    variant = variant_of(client)
    return {"variant": variant} if variant else {}
