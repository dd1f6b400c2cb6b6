"""Conversations with several user turns -> one session per answered turn (every chat format).

A chat log holds a conversation: the user asks, the agent calls tools and answers, the user asks
again ("how about Mexico City?"). Grading the first question against the last answer judges the
wrong pair, so each answered turn becomes its own session:

- question: the turn's user text (consecutive user texts with no answer between them are one
  question, joined by a blank line);
- answer: the turn's final assistant text (text the agent wrote before calling a tool in the same
  turn, "Let me search for that", is not the answer);
- trajectory: the tool results that arrived while that turn was answered (a result logged before
  the first question belongs to the first turn);
- ``conversation``: the earlier answered turns, oldest first, as ``{"question", "answer"}``, so
  the judge can read a follow-up in its context;
- id: the record's id when the record has one answered turn, else ``<record id>#<turn>``, the
  turn numbered from 1 among the answered turns (stable whether or not ``--last-turn`` is given).

A user turn left without an answer at the end of the log (the log stops after the question, or
while the agent was still calling tools) is not a session; it is named in the conversion's notes
so it is never lost unnoticed. Each converter walks its own message shapes and hands this module
a flat, format-neutral list of events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._common import Converted, RecordError
from .citations import record_session


@dataclass(frozen=True)
class Asked:
    """The user's text (where: the log's position of it, e.g. ``messages[4]``, for notes)."""

    text: str
    where: str = ""


@dataclass(frozen=True)
class Answered:
    """Assistant text, with the provider citations on it (spans relative to ``text``)."""

    text: str
    citations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Pulled:
    """One tool result: a trajectory reference, already built by ``_common.reference``."""

    reference: dict[str, Any]


Event = Asked | Answered | Pulled


@dataclass
class Turn:
    question: str
    where: str
    answer: Answered | None = None
    trajectory: list[dict[str, Any]] = field(default_factory=list)


def split_turns(events: Iterable[Event]) -> list[Turn]:
    """The turns of a conversation, in order, answered or not."""
    turns: list[Turn] = []
    early: list[dict[str, Any]] = []  # results logged before the first question
    for event in events:
        current = turns[-1] if turns else None
        if isinstance(event, Asked):
            if not event.text.strip():
                continue
            if current is not None and current.answer is None:
                current.question += "\n\n" + event.text  # asked again before any answer
            else:
                turns.append(Turn(event.text, event.where, trajectory=early if not turns else []))
        elif isinstance(event, Answered):
            if current is not None and event.text.strip():
                current.answer = event  # the last text of the turn is its answer
        elif current is None:
            early.append(event.reference)
        else:
            current.trajectory.append(event.reference)
    return turns


def turn_sessions(
    record: Mapping[str, Any],
    record_id: str,
    events: Sequence[Event],
    *,
    last_turn: bool = False,
) -> Converted:
    """The sessions of one record: one per answered turn (only the final one with
    ``last_turn``), and a note for each turn left unanswered."""
    turns = split_turns(events)
    if not turns:
        raise RecordError("no user message with text (the question)")
    answered = [t for t in turns if t.answer is not None]
    if not answered:
        raise RecordError("no assistant message with text (the answer)")
    notes = [
        f"turn asked at {t.where or 'the end'} has no answer in the log; not graded"
        + (f" ({len(t.trajectory)} tool result(s) left out)" if t.trajectory else "")
        for t in turns
        if t.answer is None
    ]
    numbered = list(enumerate(answered, start=1))
    if last_turn:
        numbered = numbered[-1:]
    sessions = []
    for number, turn in numbered:
        assert turn.answer is not None
        session_id = record_id if len(answered) == 1 else f"{record_id}#{number}"
        session = record_session(
            record,
            session_id,
            turn.question,
            turn.answer.text,
            turn.trajectory,
            turn.answer.citations,
        )
        earlier = answered[: number - 1]
        if earlier:
            session["conversation"] = [
                {"question": t.question, "answer": t.answer.text}
                for t in earlier
                if t.answer is not None
            ]
        sessions.append(session)
    return Converted(sessions, notes)
