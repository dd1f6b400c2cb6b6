"""A responder for requests that carry no headers: the lines of a provider batch.

The material header (``send_material``) rides on HTTP requests; a batch line is a body in an
uploaded file, with nothing beside it. ``KnownSessions`` answers those from the same material
all the same: it is built from the sessions a benchmark generated, rendered by the real ``Judge``
with the prompts the run uses, and recognises each request by its exact messages. Every reply
comes from that request's material (``judge_replies.reply_text``); the prompt's wording is never
read, so reworded prompts (``--prompts``) work as long as the responder renders with them too.
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


class KnownSessions:
    """``responder(body) -> reply text`` for the requests of known sessions; a request for any
    other session (or rendered from other prompts) is an error, never a guess."""

    def __init__(self, requests: Iterable[JudgeRequest]) -> None:
        # Messages do not depend on the server: any base URL renders the same ones.
        wire = OpenAIClient(MODEL, api_key=DUMMY_KEY, base_url="http://127.0.0.1:9/v1")
        self._material: dict[str, tuple[CallKind, str, tuple[str, ...]]] = {}
        for request in requests:
            assert request.material is not None, "the judge fills every request's material"
            key = messages_key(wire.request_body(request))
            ids = request.material.reference_ids
            self._material[key] = (request.call, request.session_id, ids)

    @classmethod
    def from_file(cls, sessions: Path, prompts: PromptSet | None = None) -> KnownSessions:
        """Every session of a generated file, rendered with ``prompts`` (the shipped ones by
        default): the requests a run over that file with those prompts opens with."""
        return cls(request for _, pair in first_requests(sessions, prompts) for request in pair)

    def __len__(self) -> int:
        return len(self._material)

    def __call__(self, body: dict[str, Any]) -> str:
        found = self._material.get(messages_key(body))
        if found is None:
            raise KeyError("a request for no session this fake knows (other sessions or prompts?)")
        call, session_id, reference_ids = found
        log_asked(call, session_id)
        return reply_text(call, reference_ids)


def messages_key(body: Mapping[str, Any]) -> str:
    """A request body's identity here: a hash of its exact messages (system and user), whatever
    token cap or schema the planner chose."""
    text = json.dumps(body.get("messages"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
