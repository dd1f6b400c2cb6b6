"""Sessions of any size with a known truth, and a judge that answers them truthfully.

For tests and benchmarks of long-session grading (``benchmarks/bench_long_sessions.py``): the
sessions are generated in code (never stored), and ``TruthfulJudge`` answers each counting call
from what that call shows, so it gets every verdict right whatever packs, parts or order the
planner chose. Ratios graded through it must equal ``LongSession.truth``.

It knows the sessions it was built with, and reads what each call shows of one (the references
or parts of them, the fixed claim list) back out of the request through the prompt templates
that rendered it (``testing.shown``), never from their wording: so it keeps working with
reworded templates (``--prompts``) once given the same folder. In-process it is a
``ScriptedClient`` responder; behind the fake server it reads the request body.

The construction: reference ``rK`` is relevant when its content carries ``RELEVANT_MARK``; it is
used when the answer cites ``[rK]``; claim ``cN`` is the answer's N-th line, grounded when some
reference's content holds the line's fact sentence.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from research_judge.clients.base import JudgeRequest
from research_judge.judge.prompts import PromptSet
from research_judge.results.model import Ratios
from research_judge.sessions.model import Session
from research_judge.testing.shown import RequestShown, ShownSession

RELEVANT_MARK = "This page bears directly on winter range."
_WORDS = [
    *("battery", "cell", "pack", "cold", "heater", "cabin", "range", "route", "depot"),
    *("charger", "grid", "load", "axle", "motor", "torque", "freight", "mile", "hour"),
    *("summer", "test", "fleet", "driver", "report", "study", "sensor", "energy", "loss"),
]
MAX_FACTS = 20
"""Claims per answer stay few, as in real answers: only the first 20 used references are cited
with a fact of their own."""


@dataclass(frozen=True)
class LongSession:
    """One generated session (a contract-section-1 dict) and the ratios a correct judge gives."""

    session: dict[str, Any]
    truth: Ratios


def _filler(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 14))).capitalize()
        words.append(sentence + ".")
        size += len(sentence) + 2
        if rng.random() < 0.15:
            words.append("\n\n")
    return " ".join(words)[:chars]


def make_session(
    sid: str,
    references: int,
    chars_per_reference: int,
    *,
    seed: int = 0,
    fact_at: float = 0.5,
) -> LongSession:
    """``references`` references of about ``chars_per_reference`` characters each.

    Two references in three are relevant, one in four is used; the answer states one fact per
    used reference (grounded in it) and one fact no reference holds. ``fact_at`` places the
    marker and fact sentences within each content (0 start, 1 end), to land them in a late part
    of a reference that is split.
    """
    rng = random.Random(f"{sid}:{seed}")
    trajectory = []
    lines: list[str] = []
    relevant = used = 0
    for k in range(1, references + 1):
        is_relevant = k % 3 != 0
        is_used = k % 4 == 1
        relevant += is_relevant
        used += is_used
        body = _filler(rng, chars_per_reference)
        inserts = []
        if is_relevant:
            inserts.append(RELEVANT_MARK)
        if is_used and len(lines) < MAX_FACTS:
            inserts.append(f"Fact {k} is {1000 + k * 7}.")
            lines.append(f"Fact {k} is {1000 + k * 7} [r{k}].")
        elif is_used:
            lines[-1] = lines[-1][:-1] + f" [r{k}]."  # cited beside the last fact: used too
        cut = body.rfind(" ", 0, int(len(body) * fact_at)) + 1
        content = body[:cut] + " ".join(inserts) + (" " if inserts else "") + body[cut:]
        trajectory.append(
            {
                "id": f"r{k}",
                "title": f"Page {k}",
                "url": f"https://example.org/{k}",
                "content": content,
            }
        )
    lines.append("Fact 0 is 999 [r1].")  # no reference states it: not grounded
    claims = len(lines)
    session = {
        "id": sid,
        "question": "What limits the range of electric trucks in winter?",
        "answer": "\n".join(lines),
        "trajectory": trajectory,
        "metadata": {"references": references},
    }
    n = references
    truth = Ratios(
        relevance=round(relevant / n, 4) if n else None,
        utilization=round(used / n, 4) if n else None,
        grounding=round((claims - 1) / claims, 4),
    )
    return LongSession(session, truth)


# --- the truthful judge --------------------------------------------------------------------


class UnknownSession(ValueError):
    """A request for a session the truthful judge was not built with (the fake server answers
    it with HTTP 400)."""


class TruthfulJudge:
    """The correct judge for the sessions it is built with, answering from what each request
    shows of one (read back through ``prompts``, the shipped templates by default).

    ``ScriptedClient(TruthfulJudge(sessions))`` in process; ``FakeOpenAIServer(TruthfulJudge(
    sessions))`` over HTTP, reading the request body.
    """

    def __init__(
        self,
        sessions: Iterable[LongSession | Session | Mapping[str, Any]],
        prompts: PromptSet | str | Path | None = None,
    ) -> None:
        self.sessions: dict[tuple[str, str], Session] = {}
        for item in sessions:
            raw = item.session if isinstance(item, LongSession) else item
            session = raw if isinstance(raw, Session) else Session.model_validate(raw)
            self.sessions[session.question, session.answer] = session
        self.shown = RequestShown(prompts)

    def __call__(self, request: JudgeRequest) -> dict[str, Any]:
        """The ``ScriptedClient`` responder."""
        return self.reply(self.shows(request))

    def shows(self, request: JudgeRequest) -> ShownSession:
        """What ``request`` shows of its session (the claims of a follow-up call are the ones
        this judge listed)."""
        return self.shown.read(request, _claims)

    @staticmethod
    def shows_claims(answer: str) -> list[tuple[str, str]]:
        """The claims this judge lists for an answer (what its follow-up calls are shown)."""
        return _claims(answer)

    def respond(self, body: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        """The fake server's responder: reads the request body."""
        return json.dumps(self.reply(self.shown.read_body(body, _claims)))

    def reply(self, shown: ShownSession) -> dict[str, Any]:
        """The correct wire reply to one call showing ``shown``."""
        if shown.call == "scoring":
            return {
                "scores": [
                    {
                        "criterion": c,
                        "reasoning": "tally: 0 padded sentences",
                        "evidence": "Fact",
                        "score": 3,
                    }
                    for c in ("effectiveness", "fluff", "structure")
                ]
            }
        session = self.sessions.get((shown.question, shown.answer))
        if session is None:
            raise UnknownSession(
                f"the truthful judge was not built with a session asking {shown.question[:60]!r}"
            )
        whole = {ref.id for ref in session.trajectory}
        unknown = [ref.id for ref in shown.references if ref.id not in whole]
        if unknown:
            raise UnknownSession(f"session {session.id!r} has no reference {unknown[0]!r}")
        contents = {ref.id: ref.content for ref in shown.references}
        lines = session.answer.splitlines()
        # The first call lists the claims, one per line of the answer; a follow-up is shown them.
        claims = list(shown.claims) if shown.claims is not None else _claims(session.answer)
        verdicts: list[dict[str, Any]] = []
        for rid, content in contents.items():
            relevant = RELEVANT_MARK in content
            opening = _opening(content)
            verdicts.append(
                _verdict(rid, "relevant", relevant, RELEVANT_MARK if relevant else opening)
            )
            cited = next((line for line in lines if f"[{rid}]" in line), None)
            verdicts.append(_verdict(rid, "used", cited is not None, cited or opening))
        for cid, text in claims:
            fact = text.split(" [", 1)[0] + "."
            source = next((rid for rid, content in contents.items() if fact in content), None)
            verdict = _verdict(cid, "grounded", source is not None, fact[:-1] if source else text)
            verdict.update(claim=text, source=source)
            verdicts.append(verdict)
        return {"verdicts": verdicts}


def _claims(answer: str) -> list[tuple[str, str]]:
    """The claims the truthful judge lists: one per line of the answer."""
    return [(f"c{i}", line) for i, line in enumerate(answer.splitlines(), start=1) if line]


def _opening(shown: str) -> str:
    """The first words of the text shown, whole (a quote cut inside a word is not found in the
    session by evidence verification)."""
    words = shown.split()
    return " ".join(words[:6])


def _verdict(vid: str, check: str, yes: bool, evidence: str) -> dict[str, Any]:
    return {
        "id": vid,
        "check": check,
        "answer": "yes" if yes else "no",
        "evidence": " ".join(evidence.split()),
        "claim": None,
        "source": None,
    }
