"""The base of every client layer that wraps another (recording, cache, resilience).

A layer answers as the client it wraps: same provider, model and variant (so keys and
fingerprints are the provider's), and it passes on what it does not handle itself, the judge's
``reply_checked`` verdicts and ``aclose``, without each layer forwarding them by hand. The chain
is walked through ``inner`` of ``WrapperClient`` instances only (``layers``), never by guessing at
attributes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

from .base import JudgeClient, JudgeRequest, JudgeResponse, forward_reply_checked
from .variant import variant_of

__all__ = ["WrapperClient", "find_layer", "layers"]


class WrapperClient:
    """A client layer around ``inner``: override ``complete`` (and ``reply_checked`` to act on
    the judge's verdicts; call ``super()`` to pass them on)."""

    def __init__(self, inner: JudgeClient) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.variant = variant_of(inner)  # another server or mode never shares keys

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        return await self.inner.complete(request)

    def reply_checked(self, request: JudgeRequest, response: JudgeResponse, valid: bool) -> None:
        forward_reply_checked(self.inner, request, response, valid)

    async def aclose(self) -> None:
        await self.inner.aclose()


def layers(client: JudgeClient) -> Iterator[JudgeClient]:
    """The chain's clients, outermost first, down to the provider's."""
    current = client
    while isinstance(current, WrapperClient):
        yield current
        current = current.inner
    yield current


L = TypeVar("L")


def find_layer(client: JudgeClient, kind: type[L]) -> L | None:
    """The chain's first layer of type ``kind`` (its counters, say), or None."""
    return next((c for c in layers(client) if isinstance(c, kind)), None)
