"""Builders shared by the judge and engine tests: sessions and well-formed judge replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from research_judge.clients.base import JudgeRequest
from research_judge.judge.prompts import PromptSet
from research_judge.testing.shown import RequestShown

CRITERIA = ("effectiveness", "fluff", "structure")


def session(sid: str = "s-1", *, refs: int = 2, answer: str | None = None) -> dict[str, Any]:
    trajectory = [
        {"id": f"r{i}", "title": f"Source {i}", "url": None, "content": f"Fact {i} is true here."}
        for i in range(1, refs + 1)
    ]
    return {
        "id": sid,
        "question": f"What is true about question {sid}?",
        "answer": answer if answer is not None else "Fact 1 is true [r1]. Fact 9 is invented.",
        "trajectory": trajectory,
        "metadata": {"agent_version": "v1"},
    }


def offloaded(sid: str, ref: str) -> dict[str, Any]:
    """A session whose first reference is offloaded: ``content_ref`` ``ref``, no content."""
    s = session(sid)
    s["trajectory"][0] = {"id": "r1", "title": "Source 1", "content_ref": ref}
    return s


def write_sessions(path: Path, sessions: list[dict[str, Any]], extra_lines: list[str] = ()) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for s in sessions:
            out.write(json.dumps(s) + "\n")
        for line in extra_lines:
            out.write(line + "\n")
    return path


def counting_reply(ref_ids: list[str], grounded: list[bool] = (True, False)) -> dict[str, Any]:
    verdicts: list[dict[str, Any]] = []
    for rid in ref_ids:
        n = rid.removeprefix("r")
        verdicts.append(
            {"id": rid, "check": "relevant", "answer": "yes", "evidence": f"Fact {n} is true"}
        )
        verdicts.append(
            {
                "id": rid,
                "check": "used",
                "answer": "yes" if rid == "r1" else "no",
                "evidence": f"Fact {n} is true",
            }
        )
    claims = ["Fact 1 is true", "Fact 9 is invented"]
    for i, ok in enumerate(grounded, start=1):
        verdicts.append(
            {
                "id": f"c{i}",
                "check": "grounded",
                "answer": "yes" if ok else "no",
                "evidence": "Fact 1 is true here" if ok else "Fact 9 is invented",
                "claim": claims[(i - 1) % 2],
                "source": "r1" if ok else None,
            }
        )
    return {"verdicts": verdicts}


def scoring_reply(effectiveness: int = 3, fluff: int = 3, structure: int = 3) -> dict[str, Any]:
    values = {"effectiveness": effectiveness, "fluff": fluff, "structure": structure}
    return {
        "scores": [
            {"criterion": c, "reasoning": f"reasoning for {c}", "evidence": "Fact 1", "score": v}
            for c, v in values.items()
        ]
    }


_SHIPPED = RequestShown()


def ref_ids_in(request: JudgeRequest) -> list[str]:
    """Reference ids the request shows, read back through the shipped prompts (never from their
    wording)."""
    return [ref.id for ref in _SHIPPED.read(request, _reply_claims).references]


def _reply_claims(answer: str) -> list[tuple[str, str]]:
    """The claims ``counting_reply`` lists (what a follow-up call is shown)."""
    return [("c1", "Fact 1 is true"), ("c2", "Fact 9 is invented")]


def good_responder(request: JudgeRequest) -> dict[str, Any]:
    if request.call == "counting":
        return counting_reply(ref_ids_in(request))
    return scoring_reply()


class GoodResponder:
    """``good_responder``'s replies to requests rendered from ``prompts`` (the shipped ones by
    default): called with a request in process, ``respond`` with a body behind the fake server."""

    def __init__(self, prompts: PromptSet | Path | None = None) -> None:
        self.shown = _SHIPPED if prompts is None else RequestShown(prompts)

    def __call__(self, request: JudgeRequest) -> dict[str, Any]:
        if request.call == "counting":
            ids = [ref.id for ref in self.shown.read(request, _reply_claims).references]
            return counting_reply(ids)
        self.shown.read(request)  # refused when rendered from other prompts
        return scoring_reply()

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> str:
        # UnknownRequest is a ValueError, the request's fault: HTTP 400, never retried.
        shown = self.shown.read_body(body, _reply_claims)
        if shown.call == "counting":
            return json.dumps(counting_reply([ref.id for ref in shown.references]))
        return json.dumps(scoring_reply())


body_responder = GoodResponder()


class WithHeaders:
    """A fake-server responder from a function of the body and the headers."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Any:
        return self.reply(body, headers)
