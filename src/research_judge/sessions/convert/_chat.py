"""A chat-shaped log as an ordered list of turns: what a chat converter hands on.

A converter for a chat format (a JSONL record, a Claude Agent SDK stream) walks its messages once
and records, per user turn, the question, the answer, the references gathered while answering it
and the provider citations on the answer. ``ChatLog`` collects them in order; the record's
sessions are then built from its turns by the turn rule every chat format shares
(``_turns.turn_sessions``, one session per answered turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._common import Converted
from ._turns import Answered, Asked, Event, Pulled, turn_sessions


@dataclass
class Turn:
    question: str
    where: str  # the user message that asked it, for messages: "items[3]"
    answer: str | None = None
    references: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ChatLog:
    """Turns in log order; references seen before the first question belong to the first."""

    turns: list[Turn] = field(default_factory=list)
    _early: list[dict[str, Any]] = field(default_factory=list)

    def ask(self, question: str, where: str) -> None:
        self.turns.append(Turn(question, where, references=self._early))
        self._early = []

    def pulled(self, ref: dict[str, Any]) -> None:
        (self.turns[-1].references if self.turns else self._early).append(ref)

    def answered(self, text: str, citations: list[dict[str, Any]] | None = None) -> None:
        """An assistant text of the current turn; the last one is its answer."""
        if not self.turns:
            return  # assistant text before any question: a greeting, not an answer
        turn = self.turns[-1]
        turn.answer, turn.citations = text, list(citations or [])


def log_sessions(
    record: Mapping[str, Any], session_id: str, log: ChatLog, *, last_turn: bool = False
) -> Converted:
    """The record's sessions by the turn rule every chat format shares (``_turns``): one per
    answered turn, the earlier turns as its conversation."""
    events: list[Event] = []
    for turn in log.turns:
        events.append(Asked(turn.question, turn.where))
        events.extend(Pulled(ref) for ref in turn.references)
        if turn.answer is not None:
            events.append(Answered(turn.answer, tuple(turn.citations)))
    return turn_sessions(record, session_id, events, last_turn=last_turn)
