"""Provider citation annotations -> the session's ``citations`` (resolved to reference ids), and
the session dict a JSONL record (``anthropic``, ``openai-chat``) becomes with them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..citations import ReferenceIndex
from ._common import SessionDict, metadata_of


def link_citations(
    raw: Sequence[Mapping[str, Any]], trajectory: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Each annotation with the reference it points at (``reference`` null when none does)."""
    if not raw:
        return []  # most answers carry none: no index to build
    index = ReferenceIndex(trajectory)
    out = []
    for item in raw:
        citation = {k: v for k, v in item.items() if v is not None}
        if "reference" not in citation:
            citation["reference"] = index.find(item.get("url"), item.get("title"))
        out.append(citation)
    return out


def record_session(
    record: Mapping[str, Any],
    session_id: str,
    question: str,
    answer: str,
    trajectory: list[dict[str, Any]],
    raw_citations: Sequence[Mapping[str, Any]],
) -> SessionDict:
    """A JSONL record's session, with its metadata, and ``citations`` only when it has some."""
    session: SessionDict = {
        "id": session_id,
        "question": question,
        "answer": answer,
        "trajectory": trajectory,
        "metadata": metadata_of(record),
    }
    citations = link_citations(raw_citations, trajectory)
    if citations:
        session["citations"] = citations
    return session
