"""Provider citation annotations -> the session's ``citations`` (resolved to reference ids), the
excerpts they carry appended to the references they resolve to, and the session dict a chat
record's turn becomes with them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..citations import ReferenceIndex
from ._common import SessionDict, metadata_of


def link_citations(
    raw: Sequence[Mapping[str, Any]], trajectory: list[dict[str, Any]], answer: str
) -> list[dict[str, Any]]:
    """Each annotation with the reference it points at (``reference`` null when none does).

    The excerpt an annotation carries is appended to that reference's ``excerpts`` (``trajectory``
    is updated in place), so the judge reads it with the reference: an Anthropic
    ``cited_text`` as ``quoted`` (for an encrypted web search result it is all there is to read),
    an OpenAI ``url_citation``'s span of the answer as ``attributed``.
    """
    if not raw:
        return []  # most answers carry none: no index to build
    index = ReferenceIndex(trajectory)
    by_id = {str(ref["id"]): ref for ref in trajectory}
    out = []
    for item in raw:
        citation = {k: v for k, v in item.items() if v is not None}
        if "reference" not in citation:
            citation["reference"] = index.find(item.get("url"), item.get("title"))
        target = by_id.get(str(citation["reference"]))
        excerpt = _excerpt(citation, answer)
        if target is not None and excerpt is not None:
            excerpts = target.setdefault("excerpts", [])
            if excerpt not in excerpts:
                excerpts.append(excerpt)
        out.append(citation)
    return out


def _excerpt(citation: Mapping[str, Any], answer: str) -> dict[str, str] | None:
    quoted = citation.get("cited_text")
    if isinstance(quoted, str) and quoted.strip():
        return {"text": quoted.strip(), "kind": "quoted"}
    start, end = citation.get("start"), citation.get("end")
    if citation.get("kind") == "url_citation" and isinstance(start, int) and isinstance(end, int):
        span = answer[start:end].strip()
        if span:
            return {"text": span, "kind": "attributed"}
    return None


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
    citations = link_citations(raw_citations, trajectory, answer)
    if citations:
        session["citations"] = citations
    return session
