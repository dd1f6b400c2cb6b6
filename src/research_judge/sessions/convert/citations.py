"""Provider citation annotations -> the session's ``citations`` (resolved to reference ids)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..citations import ReferenceIndex


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
