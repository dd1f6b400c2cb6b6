"""A request's material as an HTTP header, for test judges behind a real client.

``OpenAIClient(send_material=True)`` (``grade --send-material``) sends it; the fake judge of
``research-judge serve-fake`` reads it. The body is left alone, so recordings and the cache are
the same with or without it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from research_judge.clients.base import CallKind, JudgeRequest, Material

MATERIAL_HEADER = "X-Research-Judge-Material"


class MaterialMissing(ValueError):
    """A request reached the fake judge without its material."""


def encode_material(request: JudgeRequest) -> str:
    """The header value for ``request``: ASCII JSON (session text escapes to ``\\uXXXX``, so no
    byte can end the header early)."""
    material = request.material or Material()
    return json.dumps(
        {
            "call": request.call,
            "session_id": request.session_id,
            "reference_ids": list(material.reference_ids),
            "claims": None if material.claims is None else [list(c) for c in material.claims],
            "parts": [list(p) for p in material.parts],
        },
        ensure_ascii=True,
        separators=(",", ":"),
    )


def request_material(request: JudgeRequest) -> Material:
    """``request.material``, or ``MaterialMissing`` naming the session and call when it is unset:
    what an in-process fake judge answers from."""
    if request.material is None:
        raise MaterialMissing(
            f"request for session {request.session_id!r} ({request.call}) carries no material"
        )
    return request.material


def header_material(headers: Mapping[str, str], judge: str) -> tuple[CallKind, str, Material]:
    """Call kind, session id and material from a request's headers (lower-cased names), as a
    fake judge behind the fake server reads them; ``MaterialMissing`` naming ``judge`` (who
    answers from them) and the flag that sends them when the header is absent or unusable."""
    value = headers.get(MATERIAL_HEADER.lower())
    if value is None:
        raise MaterialMissing(
            f"{judge} answers from the {MATERIAL_HEADER} header, which the request lacks: "
            "grade with --send-material (send_material=True)"
        )
    return decode_material(value)


def decode_material(value: str) -> tuple[CallKind, str, Material]:
    """Call kind, session id and material from a header value; ``MaterialMissing`` if unusable."""
    try:
        data = json.loads(value)
        call = data["call"]
        session_id = str(data.get("session_id", ""))
        ids = tuple(str(i) for i in data["reference_ids"])
        claims = data.get("claims")
        if call not in ("counting", "scoring") or not isinstance(data["reference_ids"], list):
            raise ValueError("unknown call kind or reference ids not a list")
        fixed = None if claims is None else tuple((str(i), str(t)) for i, t in claims)
        parts = tuple((str(i), _offset(s), _offset(e)) for i, s, e in data.get("parts", []))
        material = Material(ids, fixed, parts)
    except (ValueError, KeyError, TypeError) as exc:
        raise MaterialMissing(f"unreadable {MATERIAL_HEADER} header: {exc}") from None
    return call, session_id, material


def _offset(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"a part's character offset must be a whole number >= 0, not {value!r}")
    return value
