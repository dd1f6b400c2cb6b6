"""The one protocol every judge client speaks: a ``JudgeRequest`` in, a ``JudgeResponse`` out.

Requests are plain data so they can be hashed (record/replay and the cache key on that hash),
rendered for any provider, and inspected in tests. SDK quirks live in the provider modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from .._canonical import content_hash
from ..usage import Usage

__all__ = [
    "CallKind",
    "JudgeClient",
    "JudgeRequest",
    "JudgeResponse",
    "Message",
    "ReplyCheckListener",
    "Role",
    "Usage",
    "forward_reply_checked",
]

Role = Literal["user", "assistant"]
CallKind = Literal["counting", "scoring"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call, fully rendered.

    ``system`` holds the static instructions (first, so provider prompt caches hit);
    ``messages`` holds the session material and, on a re-ask, the bad reply and the feedback.
    ``schema`` is the JSON schema of the reply. ``session_id`` only labels errors: it is not part
    of the content hash, so identical material is answered identically whatever its id.
    """

    call: CallKind
    system: str
    messages: tuple[Message, ...]
    schema_name: str
    schema: dict[str, Any]
    max_output_tokens: int = 4096
    temperature: float | None = 0.0
    session_id: str = ""
    # Which of `grade --repeats K` samples this is. It enters the hash only when non-zero, so
    # single-sample keys (cache, recordings) are exactly what they were before repeats existed.
    sample: int = 0
    # ``key()`` per (provider, model, variant), kept on first use: the response cache looks a
    # request up and then records it, and hashing a whole prompt is the costliest step of
    # either. ``replace`` builds a new request with an empty one.
    _keys: dict[tuple[str, str, str], str] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def canonical(self, provider: str, model: str, variant: str = "") -> dict[str, Any]:
        """The exact content that identifies this request for a given provider and model.

        ``variant`` names a non-default endpoint or output mode (``clients.variant``); it is left
        out when empty so keys of the default setup never change.
        """
        extra = {"variant": variant} if variant else {}
        return {
            **extra,
            "provider": provider,
            "model": model,
            "call": self.call,
            "system": self.system,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "schema_name": self.schema_name,
            "schema": self.schema,
            "max_output_tokens": self.max_output_tokens,
            "temperature": self.temperature,
        } | ({"sample": self.sample} if self.sample else {})

    def key(self, provider: str, model: str, variant: str = "") -> str:
        """SHA-256 of the canonical JSON (sorted keys, no whitespace): the record/cache key."""
        key = self._keys.get((provider, model, variant))
        if key is None:
            canonical = self.canonical(provider, model, variant)
            key = self._keys[provider, model, variant] = content_hash(canonical)
        return key


@dataclass(frozen=True)
class JudgeResponse:
    """The judge's reply as text (JSON expected) plus what it cost.

    ``cached`` is true when the reply came from the on-disk cache or a recording, so nothing
    was spent on it.
    """

    content: str
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    cached: bool = False


@runtime_checkable
class JudgeClient(Protocol):
    """Anything that can answer a judge request. ``provider`` and ``model`` name it in results."""

    provider: str
    model: str

    async def complete(self, request: JudgeRequest) -> JudgeResponse: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ReplyCheckListener(Protocol):
    """A client layer that wants to know whether the judge accepted a reply it passed on.

    The response cache stores only replies that passed validation, and drops a cached reply
    that did not; wrappers forward the call to the layer they wrap.
    """

    def reply_checked(
        self, request: JudgeRequest, response: JudgeResponse, valid: bool
    ) -> None: ...


def forward_reply_checked(
    inner: object, request: JudgeRequest, response: JudgeResponse, valid: bool
) -> None:
    if isinstance(inner, ReplyCheckListener):
        inner.reply_checked(request, response, valid)
