"""A chat-shaped log as an ordered list of turns: what a chat converter hands on.

A converter for a chat format (a JSONL record, a Claude Agent SDK stream) walks its messages once
and records, per user turn, the question, the answer, the references gathered while answering it
and the provider citations on the answer. ``ChatLog`` collects them in order; the record's
sessions are then built from its turns by the turn rule every chat format shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._common import RecordError, SessionDict
from .citations import record_session


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

    def answered_turns(self) -> list[Turn]:
        """The turns that have an answer; a log with none is an error naming what it lacks."""
        if not self.turns:
            raise RecordError("no user message with text (the question)")
        if self._early:
            self.turns[-1].references.extend(self._early)
        done = [t for t in self.turns if t.answer is not None and t.answer.strip()]
        if not done:
            raise RecordError("no assistant message with text (the answer)")
        return done


def log_session(record: Mapping[str, Any], session_id: str, log: ChatLog) -> SessionDict:
    """The record as one session: the first question, the last answer and every reference."""
    turns = log.answered_turns()
    refs = [r for t in log.turns for r in t.references]
    last = turns[-1]
    return record_session(
        record, session_id, log.turns[0].question, last.answer or "", refs, last.citations
    )
