"""JSON schemas for the judge's replies, generated from the pydantic wire models.

Providers' strict structured-output modes (OpenAI's ``strict: true``, and the tool schemas local
servers compile into grammars) accept a subset of JSON Schema: every object closed
(``additionalProperties: false``) with every property required (an optional one is written as
nullable instead), no ``$ref``, no titles or defaults. ``strict_schema`` turns pydantic's
``model_json_schema`` into that form, so the schema sent and the model that checks the reply are
one definition.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_json_schema()`` in strict form (see the module docstring)."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})
    out = _strict(schema, definitions)
    assert isinstance(out, dict)
    return out


def _strict(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_strict(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _strict(definitions[ref.rsplit("/", 1)[-1]], definitions)
    out = {
        key: _strict(value, definitions)
        for key, value in node.items()
        if key not in ("title", "default")
    }
    if "properties" in out:
        out["properties"] = {
            name: _strict(value, definitions) for name, value in node["properties"].items()
        }
        out["additionalProperties"] = False
        # Strict modes want every key present; the optional ones are already nullable.
        out["required"] = list(out["properties"])
    nullable = _nullable_type(out.get("anyOf"))
    if nullable is not None:
        del out["anyOf"]
        out["type"] = [nullable, "null"]
    return out


def _nullable_type(options: Any) -> str | None:
    """``anyOf: [{"type": T}, {"type": "null"}]`` is written ``type: [T, "null"]``."""
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return None
    other = next(o for o in options if o != {"type": "null"})
    if set(other) == {"type"} and isinstance(other["type"], str):
        return str(other["type"])
    return None
