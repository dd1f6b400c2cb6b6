"""The nonce that tags the markers around session text in the prompts.

Session text is data between markers such as ``<<answer NONCE>> ... <</answer NONCE>>``. The
nonce is a hash of everything the templates are given of the session (question, answer, and each
reference with all its keys, extra ones included, since a ``--prompts`` template may print them,
and the earlier turns of a conversation),
so text cannot know the marker that will surround it. Should the text contain the nonce anyway,
another is derived until none of the text contains it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from itertools import count
from typing import Any

from .._canonical import canonical_json
from ..sessions.model import Session

NONCE_LENGTH = 12


def marker_nonce(session: Session, *, extra_keys: bool) -> str:
    """``extra_keys``: the templates may print references' extra keys (custom ``--prompts``)."""
    digest = hashlib.sha256()
    parts = [session.question, session.answer]
    for ref in session.trajectory:
        parts += [ref.id, ref.title or "", ref.url or "", ref.content]
        # Only when there are some, so a reference without excerpts keeps its nonce.
        parts += [f"{e.kind}:{e.text}" for e in ref.excerpts]
        if extra_keys and ref.model_extra:
            # Only then, so the nonce under the shipped templates (and with it every recording
            # keyed on their prompts) is what it always was. The shipped templates do print a
            # reference's tool call (its ``tool`` and ``args``); the seed leaves them out, which
            # is safe: ``choose_nonce`` checks every string of the reference, extras included.
            parts.append(canonical_json(ref.model_extra))
    for turn in session.conversation:
        # Only when there is one, so a session without earlier turns keeps its nonce.
        parts += [turn.question, turn.answer]
    if extra_keys and session.model_extra:
        parts.append(canonical_json(session.model_extra))  # custom templates may print them
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return choose_nonce(_texts(session), digest.hexdigest())


def choose_nonce(texts: Iterable[str], seed: str) -> str:
    """``seed``'s first characters, or the first derived tag that no text contains."""
    material = list(texts)
    for attempt in count():
        nonce = seed if attempt == 0 else hashlib.sha256(f"{seed}:{attempt}".encode()).hexdigest()
        nonce = nonce[:NONCE_LENGTH]
        if not any(nonce in text for text in material):
            return nonce
    raise AssertionError("unreachable")


def _texts(session: Session) -> Iterator[str]:
    yield session.question
    yield session.answer
    for turn in session.conversation:
        yield turn.question
        yield turn.answer
    yield from _strings(session.model_extra or {})
    for ref in session.trajectory:
        yield from _strings(ref.model_dump())


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
