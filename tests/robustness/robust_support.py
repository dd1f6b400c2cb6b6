"""Small builders for the robustness suite."""

from __future__ import annotations

from research_judge.clients.base import JudgeRequest, Message


def request_for(session_id: str, text: str = "material") -> JudgeRequest:
    return JudgeRequest(
        call="scoring",
        system="instructions",
        messages=(Message("user", text),),
        schema_name="criterion_scores",
        schema={"type": "object"},
        session_id=session_id,
    )
