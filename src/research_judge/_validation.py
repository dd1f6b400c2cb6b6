"""Pydantic's validation errors in words a user can act on, formatted one way everywhere.

``trajectory.1.content: missing; answer: Input should be a valid string`` -- the location as a
dotted path, then what is wrong; more problems than ``limit`` are counted, not listed.
(The judge's re-ask feedback keeps its own form in ``judge.verdicts``: it is part of every
recorded request, so changing it would orphan the recordings.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import InputFileError

M = TypeVar("M", bound=BaseModel)


def describe_validation_error(exc: ValidationError, *, limit: int = 3, root: str = "") -> str:
    """Up to ``limit`` problems of ``exc``; ``root`` names a problem with no location."""
    errors = exc.errors()
    parts = []
    for err in errors[:limit]:
        if err.get("type") == "json_invalid":
            parts.append("not valid JSON")
            continue
        where = ".".join(str(p) for p in err.get("loc", ())) or root
        msg = "missing" if err.get("type") == "missing" else str(err.get("msg"))
        msg = msg.removeprefix("Value error, ")
        parts.append(f"{where}: {msg}" if where else msg)
    if len(errors) > limit:
        parts.append(f"and {len(errors) - limit} more")
    return "; ".join(parts)


def parse_json_file(text: str, path: str | Path, model: type[M]) -> M:
    """A JSON file's text as ``model``; a file:line error naming the first problem otherwise."""
    try:
        raw: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"not valid JSON: {exc.msg}", exc.lineno) from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problem = describe_validation_error(exc, limit=1, root="(top level)")
        raise InputFileError(path, problem) from exc
