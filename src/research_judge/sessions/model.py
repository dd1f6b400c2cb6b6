"""Ingest: logged research sessions from JSONL, validated at the boundary (contract section 1).

Reading is streamed: each line becomes a ``Session`` or an ``InputFileError`` naming the file and
line, so one bad line never stops the good ones from being graded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .._validation import describe_validation_error
from ..errors import InputFileError
from ..safety import jsonin
from .citations import AnswerCitation

# A tool call's arguments are a query or a URL, rarely more; a long argument (a pasted document)
# is shortened so it cannot crowd out the references themselves.
TOOL_CALL_CHARS = 500


class Excerpt(BaseModel):
    """A passage a provider's citation ties to a reference, shown to the judge with it.

    ``quoted``: text the provider quoted from the source (Anthropic ``cited_text``), often all
    the judge can read of a page whose content is encrypted. ``attributed``: a passage of the
    answer that the provider attributes to the source (an OpenAI ``url_citation`` span), the
    provider's word that the page says it, not the page's own text.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    kind: Literal["quoted", "attributed"] = "quoted"


class Reference(BaseModel):
    """One thing the agent pulled. Its text is ``content``, or, for a tool result the agent
    offloaded to storage, ``content_ref`` (a key or URI) read at grading time (``grade --store``).
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = Field(min_length=1)
    content: str
    content_ref: str | None = Field(default=None, min_length=1)
    title: str | None = None
    url: str | None = None
    excerpts: list[Excerpt] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _content_or_ref(cls, value: Any) -> Any:
        # Exactly one of the two. An offloaded reference's text is empty until it is read;
        # without either, pydantic reports "content: missing" as for any missing field.
        if isinstance(value, dict) and value.get("content_ref") is not None:
            if value.get("content") is not None:
                raise ValueError("has both content and content_ref; give one")
            return {**value, "content": ""}
        return value

    @property
    def excerpt_texts(self) -> list[str]:
        return [excerpt.text for excerpt in self.excerpts]

    @property
    def tool_call(self) -> str | None:
        """The call that pulled this reference, as the converters record it (extra keys ``tool``
        and ``args``): ``web_search {"query": "..."}``, arguments shortened past
        ``TOOL_CALL_CHARS``; None when no tool is named. What the agent asked for is part of
        what the judge weighs."""
        extra = self.model_extra or {}
        tool = extra.get("tool")
        if not isinstance(tool, str) or not tool.strip():
            return None
        args = extra.get("args")
        if args in (None, "", {}, []):
            return " ".join(tool.split())
        shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        shown = " ".join(shown.split())  # one line: the judge reads it as one call
        if len(shown) > TOOL_CALL_CHARS:
            shown = shown[: TOOL_CALL_CHARS - 3] + "..."
        return f"{' '.join(tool.split())} {shown}"

    @property
    def offloaded(self) -> bool:
        """True while the text is still in storage (``content_ref`` set, not yet read)."""
        return self.content_ref is not None


class EarlierTurn(BaseModel):
    """One earlier turn of the conversation a session's question continues."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str
    answer: str


class Session(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    id: str = Field(min_length=1)
    question: str
    answer: str
    trajectory: list[Reference] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # Provider citation annotations on the answer, carried over by ``convert``.
    citations: list[AnswerCitation] = Field(default_factory=list)
    # The earlier turns of a conversation, oldest first: the question may only make sense in
    # their light ("how about Mexico City?"), so the judge is shown them as context.
    conversation: list[EarlierTurn] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _has_trajectory(cls, value: Any) -> Any:
        # Without this, a session that names its references another way would be graded on
        # none and pass; an explicit [] stays valid (an answer with no sources).
        if isinstance(value, dict) and "trajectory" not in value:
            raise ValueError(missing_trajectory(value))
        return value

    @field_validator("metadata", mode="before")
    @classmethod
    def _null_metadata_is_empty(cls, value: Any) -> Any:
        # Many loggers write null for "no metadata"; that is not a mistake worth a bad line.
        return {} if value is None else value

    @model_validator(mode="after")
    def _unique_reference_ids(self) -> Session:
        seen: set[str] = set()
        for ref in self.trajectory:
            if ref.id in seen:
                raise ValueError(f"duplicate reference id {ref.id!r} in trajectory")
            seen.add(ref.id)
        return self

    @property
    def reference_ids(self) -> list[str]:
        return [ref.id for ref in self.trajectory]

    @property
    def offloaded(self) -> list[Reference]:
        """References whose text must be read from a store before the session is graded."""
        return [ref for ref in self.trajectory if ref.offloaded]


# What agents and other tools call the list of sources, in order of how often.
_TRAJECTORY_NAMES = (
    "references", "sources", "documents", "docs", "results", "search_results", "context",
    "contexts", "retrieved", "passages", "citations", "evidence", "tool_results", "steps",
)  # fmt: skip
_SESSION_KEYS = frozenset({"id", "question", "answer", "metadata", "conversation"})


def missing_trajectory(raw: dict[str, Any]) -> str:
    """Why a session without ``trajectory`` is refused, naming the key it has instead."""
    lists = [k for k, v in raw.items() if isinstance(v, list) and k not in _SESSION_KEYS]
    named = [k for k in _TRAJECTORY_NAMES if k in lists and k != "citations"]
    if named:
        return (
            f"no 'trajectory'; it has {named[0]!r}: rename it to 'trajectory' (a list of "
            "references, each with 'id' and 'content')"
        )
    keys = ", ".join(repr(str(k)) for k in list(raw)[:8])
    return (
        "no 'trajectory' (the references the agent pulled, each with 'id' and 'content'; "
        f"[] when it pulled none); it has {keys}"
    )


def iter_sessions(path: str | Path) -> Iterator[tuple[int, Session | InputFileError]]:
    """Yield ``(line_number, session_or_error)`` for every non-blank line, in file order.

    Duplicate session ids are errors on the later line; the first occurrence is kept.
    """
    p = Path(path)
    try:
        handle = p.open("rb")
    except OSError as exc:
        raise InputFileError(p, f"cannot read sessions: {exc.strerror or exc}") from exc
    seen: set[str] = set()
    lines = 0
    with handle:
        for number, raw in enumerate(handle, start=1):
            # Decoded line by line, so one line of bad bytes is that line's error, not the file's;
            # "utf-8-sig" on line 1 drops the byte-order mark some editors write.
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield number, InputFileError(p, f"not valid UTF-8 (byte {exc.start + 1})", number)
                continue
            if not line.strip():
                continue
            lines += 1
            item = parse_session_line(p, number, line)
            if isinstance(item, Session):
                if item.id in seen:
                    item = InputFileError(p, f"duplicate session id {item.id!r}", number)
                else:
                    seen.add(item.id)
            yield number, item
    if not lines:
        # Grading nothing and exiting 0 would pass a CI gate on a log that was never written.
        yield 0, InputFileError(p, "no sessions in this file (it is empty)")


def parse_session_line(path: Path, number: int, line: str) -> Session | InputFileError:
    try:
        raw = jsonin.loads(line.rstrip("\r\n"))
    except jsonin.UnusableJson as exc:  # bad JSON, deep nesting, huge numbers, lone surrogates
        return InputFileError(path, str(exc), number)
    if not isinstance(raw, dict):
        return InputFileError(path, f"expected a JSON object, got {type(raw).__name__}", number)
    label = f"session {raw['id']!r}: " if isinstance(raw.get("id"), str) else ""
    if "trajectory" not in raw:
        return InputFileError(path, label + _not_a_session(raw), number)
    try:
        return Session.model_validate(raw)
    except ValidationError as exc:
        return InputFileError(path, label + describe_validation_error(exc), number)


def _not_a_session(raw: dict[str, Any]) -> str:
    """A line without ``trajectory``: an agent log given to grade (naming the ``convert``
    format that reads it), or a session whose references go by another name."""
    from .convert._sniff import looks_like  # only for bad lines: convert imports this module

    looks = looks_like(raw)
    if looks.formats and not {"question", "answer"} <= set(raw):
        return (
            f"not a session: it looks like {looks.looks_like}; convert the log first "
            f"(research-judge convert {looks.formats[0]} FILE --out sessions.jsonl)"
        )
    try:  # what else is wrong with it, so the user fixes the line once
        Session.model_validate({**raw, "trajectory": []})
    except ValidationError as exc:
        return f"{describe_validation_error(exc)}; {missing_trajectory(raw)}"
    return missing_trajectory(raw)
