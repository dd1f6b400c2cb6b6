"""A fake judge that answers any session validly from the request's structured material.

It never reads the prompt: the reference ids (and claims, when fixed) come from
``JudgeRequest.material``. In-process, use it as a scripted judge::

    ScriptedClient(fake_judge_reply)

Over HTTP (``research-judge serve-fake``), the OpenAI client sends the same material in the
``X-Research-Judge-Material`` header when asked to (``grade --send-material``), and
``FakeJudge`` answers from that header. A header rather than the body: the body is what real
servers see and what recordings and the cache hash, and neither may change for a test judge.

Its answers are deterministic but arbitrary (a hash of the session id and the reference id), so
runs are reproducible and show a mix of passes and fails: plumbing, not judgement. Its evidence
quotes nothing from the session, so evidence verification reports them unverified, as it should.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from research_judge.clients.base import CallKind, JudgeRequest, Material
from research_judge.clients.material import header_material, request_material
from research_judge.judge.verdicts import SCORE_NAMES


def fake_reply(call: CallKind, session_id: str, material: Material) -> dict[str, Any]:
    """A valid wire reply (contract section 2) for one call."""
    if call == "scoring":
        return {"scores": [_score(session_id, criterion) for criterion in SCORE_NAMES]}
    verdicts: list[dict[str, Any]] = []
    for ref_id in material.reference_ids:
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
    sources = material.reference_ids
    for n, (claim_id, claim) in enumerate(material.claims or ()):
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


def fake_judge_reply(request: JudgeRequest) -> dict[str, Any]:
    """A ``ScriptedClient`` responder answering from ``request.material``."""
    return fake_reply(request.call, request.session_id, request_material(request))


class FakeJudge:
    """The fake server's responder for ``serve-fake``: answers from the material header."""

    def respond(self, body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        return json.dumps(fake_reply(*header_material(headers, "this fake judge")))


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
