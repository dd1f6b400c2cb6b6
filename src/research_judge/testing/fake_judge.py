"""A fake judge that answers any session validly from the request the judge sends.

It reads the references a request shows back out of the request itself, through the prompt
templates that rendered it (``testing.shown``), never from their wording. In-process, use it
as a scripted judge::

    ScriptedClient(fake_judge_reply)          # the shipped prompts
    ScriptedClient(FakeJudge(prompts_dir))    # the judge's --prompts folder

Over HTTP (``research-judge serve-fake``), ``FakeJudge`` reads the same from the request body:
a plain ``grade --base-url`` run needs nothing else.

Its answers are deterministic but arbitrary (a hash of the session's question and answer and the
reference id), so runs are reproducible and show a mix of passes and fails: plumbing, not
judgement. It lists no claims of its own, and its evidence quotes nothing from the session, so
evidence verification reports them unverified, as it should.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from research_judge.clients.base import JudgeRequest
from research_judge.judge.prompts import PromptSet
from research_judge.judge.verdicts import SCORE_NAMES
from research_judge.testing.shown import RequestShown, ShownSession


def fake_reply(shown: ShownSession) -> dict[str, Any]:
    """A valid wire reply (contract section 2) for one call showing ``shown``."""
    session_id = f"{shown.question}\0{shown.answer}"  # what identifies the session's material
    if shown.call == "scoring":
        return {"scores": [_score(session_id, criterion) for criterion in SCORE_NAMES]}
    verdicts: list[dict[str, Any]] = []
    sources = [ref.id for ref in shown.references]
    for ref_id in sources:
        roll = _roll(session_id, ref_id)
        relevant = roll % 4 != 0  # three references in four are relevant
        used = relevant and roll % 3 != 0
        for check, yes in (("relevant", relevant), ("used", used)):
            verdicts.append(
                {
                    "id": ref_id,
                    "check": check,
                    "answer": "yes" if yes else "no",
                    "evidence": f"fake judge: {check} decided by a hash, not by reading",
                    "claim": None,
                    "source": None,
                }
            )
    for n, (claim_id, claim) in enumerate(shown.claims or ()):
        grounded = bool(sources) and _roll(session_id, claim) % 5 != 0
        verdicts.append(
            {
                "id": claim_id,
                "check": "grounded",
                "answer": "yes" if grounded else "no",
                "evidence": claim,
                "claim": claim,
                "source": sources[n % len(sources)] if grounded else None,
            }
        )
    return {"verdicts": verdicts}


def _no_claims(answer: str) -> tuple[tuple[str, str], ...]:
    return ()  # the fake's first call lists none, so a follow-up call is shown none


class FakeJudge:
    """The fake judge for requests rendered from one prompts folder (the shipped one by default):
    a ``ScriptedClient`` responder (called with the request) and the fake server's responder
    for ``serve-fake`` (``respond`` with the body)."""

    def __init__(self, prompts: PromptSet | str | Path | None = None) -> None:
        self.shown = RequestShown(prompts)

    def __call__(self, request: JudgeRequest) -> dict[str, Any]:
        return fake_reply(self.shown.read(request, _no_claims))

    def respond(self, body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        return json.dumps(fake_reply(self.shown.read_body(body, _no_claims)))


@cache
def _shipped() -> FakeJudge:
    return FakeJudge()


def fake_judge_reply(request: JudgeRequest) -> dict[str, Any]:
    """A ``ScriptedClient`` responder for requests rendered from the shipped prompts."""
    return _shipped()(request)


def _score(session_id: str, criterion: str) -> dict[str, Any]:
    # Mostly 2s and 3s, with a 1 now and then, so some sessions fail the default policy.
    score = (1, 2, 3, 3, 2, 3)[_roll(session_id, criterion) % 6]
    return {
        "criterion": criterion,
        "reasoning": f"fake judge: {criterion} {score} chosen by a hash of the session id",
        "evidence": "",
        "score": score,
    }


def _roll(*parts: str) -> int:
    digest = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big")
