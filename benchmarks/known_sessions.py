"""A responder for the lines of a provider batch: bodies in an uploaded file.

``KnownSessions`` is built from the sessions a benchmark generated, rendered by the real
``Judge`` with the prompts the run uses, and recognises each request by its exact messages (a
line of any other session is an error). Every reply comes from the references that request
shows, read back through the same prompts (``research_judge.testing.shown``), never from their
wording, so reworded prompts (``--prompts``) work as long as the responder renders with them too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from judge_replies import MODEL, log_asked, reply_text
from pipeline import DUMMY_KEY, first_requests
from research_judge.clients.base import CallKind, JudgeRequest
from research_judge.clients.openai import OpenAIClient
from research_judge.judge.prompts import PromptSet
from research_judge.testing.shown import RequestShown


class KnownSessions:
    """``responder(body) -> reply text`` for the requests of known sessions; a request for any
    other session (or rendered from other prompts) is an error, never a guess."""

    def __init__(self, requests: Iterable[JudgeRequest], prompts: PromptSet | None = None) -> None:
        # Messages do not depend on the server: any base URL renders the same ones.
        wire = OpenAIClient(MODEL, api_key=DUMMY_KEY, base_url="http://127.0.0.1:9/v1")
        reader = RequestShown(prompts)
        self._known: dict[str, tuple[CallKind, str, tuple[str, ...]]] = {}
        for request in requests:
            shown = reader.read(request)
            key = messages_key(wire.request_body(request))
            ids = tuple(ref.id for ref in shown.references)
            self._known[key] = (request.call, shown.question, ids)

    @classmethod
    def from_file(cls, sessions: Path, prompts: PromptSet | None = None) -> KnownSessions:
        """Every session of a generated file, rendered with ``prompts`` (the shipped ones by
        default): the requests a run over that file with those prompts opens with."""
        pairs = first_requests(sessions, prompts)
        return cls((request for _, pair in pairs for request in pair), prompts)

    def __len__(self) -> int:
        return len(self._known)

    def __call__(self, body: dict[str, Any]) -> str:
        found = self._known.get(messages_key(body))
        if found is None:
            raise KeyError("a request for no session this fake knows (other sessions or prompts?)")
        call, question, reference_ids = found
        log_asked(call, question)
        return reply_text(call, reference_ids)


def messages_key(body: Mapping[str, Any]) -> str:
    """A request body's identity here: a hash of its exact messages (system and user), whatever
    token cap or schema the planner chose."""
    text = json.dumps(body.get("messages"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
