"""What a judge request shows, read back from the request the judge really sends.

A fake judge answers from that request and nothing beside it: in process the ``JudgeRequest``,
over HTTP the body of ``POST /chat/completions`` (or a batch line's body). The session text is
read back through the prompt templates that rendered it (``judge.reading``), never from their
wording, so a fake answers reworded ``--prompts`` as it answers the shipped ones once it is
given the same folder. Which call a body is comes from its instructions (the system message):
each call's are the static text of its template.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..clients.base import CallKind, JudgeRequest, Message
from ..judge.prompts import PromptSet
from ..judge.reading import (
    ClaimsFor,
    RequestReader,
    ShownReference,
    ShownSession,
    UnreadableRequest,
)

__all__ = [
    "ClaimsFor",
    "RequestShown",
    "ShownReference",
    "ShownSession",
    "UnknownRequest",
    "request_from_body",
]


class UnknownRequest(ValueError):
    """A request a fake judge cannot read back (not rendered from the prompts it was given, or
    not a judge request at all). A ``ValueError``: the fake server answers it with HTTP 400."""


class RequestShown:
    """Reads requests rendered from one prompts folder (the shipped one by default)."""

    def __init__(self, prompts: PromptSet | str | Path | None = None) -> None:
        self.prompts = prompts if isinstance(prompts, PromptSet) else PromptSet(prompts)
        self._reader = RequestReader(self.prompts)
        systems: dict[str, CallKind] = {
            self.prompts.calls["counting"].system: "counting",
            self.prompts.calls["scoring"].system: "scoring",
        }
        if self.prompts.pack is not None:
            systems[self.prompts.pack.system] = "counting"
        self._calls = systems

    def read(self, request: JudgeRequest, claims_for: ClaimsFor | None = None) -> ShownSession:
        """The session material ``request`` shows; a follow-up counting call (its prompt lists
        the claims the first call found) needs ``claims_for``: the claims the fake gave."""
        if self.call_of(request.system) != request.call:
            raise UnknownRequest(f"a {request.call} request opened by another call's instructions")
        try:
            return self._reader.read(request, claims_for)
        except UnreadableRequest as exc:
            raise UnknownRequest(str(exc)) from None

    def read_body(
        self, body: Mapping[str, Any], claims_for: ClaimsFor | None = None
    ) -> ShownSession:
        """``read`` for the JSON body of an OpenAI-compatible chat request."""
        return self.read(request_from_body(body, self.call_of), claims_for)

    def call_of(self, system: str) -> CallKind:
        """Which call instructions ``system`` open."""
        call = self._calls.get(system)
        if call is None:
            raise UnknownRequest(
                "the request's instructions are not those of the prompts folder this fake "
                f"judge reads ({self.prompts.directory})"
            )
        return call


def request_from_body(body: Mapping[str, Any], call_of: Callable[[str], CallKind]) -> JudgeRequest:
    """The ``JudgeRequest`` a chat body was made from, as far as its reading needs: the
    instructions, the messages and the call they open (``call_of(system)``). Bodies of both
    providers: OpenAI's (instructions as the first message) and Anthropic's (a ``system`` list
    of text blocks beside the messages)."""
    messages = body.get("messages")
    if not isinstance(messages, Sequence) or not messages:
        raise UnknownRequest("the body has no messages")
    if "system" in body:
        system = _text(body["system"])
    else:
        first, messages = messages[0], messages[1:]
        if not isinstance(first, Mapping) or first.get("role") not in ("system", "developer"):
            raise UnknownRequest("the body's first message is not the instructions")
        system = _text(first.get("content"))
    if system is None:
        raise UnknownRequest("the instructions are not text")
    turns: list[Message] = []
    for message in messages:
        role = message.get("role") if isinstance(message, Mapping) else None
        content = _text(message.get("content")) if isinstance(message, Mapping) else None
        if role not in ("user", "assistant") or content is None:
            raise UnknownRequest("a message is not a user or assistant turn of text")
        turns.append(Message(role, content))
    call = call_of(system)
    return JudgeRequest(call, system, tuple(turns), schema_name=call, schema={})


def _text(content: object) -> str | None:
    """A message's text: a string, or a list of text blocks (Anthropic's shape)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and content:
        parts = [b.get("text") for b in content if isinstance(b, Mapping)]
        if len(parts) == len(content) and all(isinstance(t, str) for t in parts):
            return "".join(str(t) for t in parts)
    return None
