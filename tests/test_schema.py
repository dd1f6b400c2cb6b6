"""The schemas sent with each request are the wire models' own, in the providers' strict form."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, ValidationError

from research_judge.judge.schema import strict_schema
from research_judge.judge.verdicts import (
    COUNTING_SCHEMA,
    SCORING_SCHEMA,
    WireCounting,
    WireScoring,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PAIRS: list[tuple[dict[str, Any], type[BaseModel], str]] = [
    (COUNTING_SCHEMA, WireCounting, "counting"),
    (SCORING_SCHEMA, WireScoring, "scoring"),
]


def replies(call: str) -> list[dict[str, Any]]:
    """The authored judge replies of the fixtures that carry every key (strict form)."""
    out = []
    for line in (FIXTURES / "judge_replies.jsonl").read_text(encoding="utf-8").splitlines():
        reply = json.loads(line)[call]
        items = reply.get("verdicts", reply.get("scores", []))
        if all("claim" in v for v in items) or call == "scoring":
            out.append(reply)
    return out


def schema_accepts(schema: dict[str, Any], reply: Any) -> bool:
    try:
        jsonschema.validate(reply, schema)
    except jsonschema.ValidationError:
        return False
    return True


def model_accepts(model: type[BaseModel], reply: Any) -> bool:
    try:
        model.model_validate(reply)
    except ValidationError:
        return False
    return True


def walk(node: Any) -> list[dict[str, Any]]:
    """Every object schema inside ``node``."""
    if isinstance(node, list):
        return [d for item in node for d in walk(item)]
    if not isinstance(node, dict):
        return []
    found = [node] if node.get("type") == "object" else []
    return found + [d for value in node.values() for d in walk(value)]


@pytest.mark.parametrize(("schema", "model", "call"), PAIRS)
def test_the_schema_is_the_models_json_schema_in_strict_form(
    schema: dict[str, Any], model: type[BaseModel], call: str
) -> None:
    assert schema == strict_schema(model)
    jsonschema.Draft202012Validator.check_schema(schema)
    text = json.dumps(schema)
    assert "$ref" not in text and '"title"' not in text and '"default"' not in text
    for obj in walk(schema):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])  # every key, in field order
    # Every field of the model, and nothing else, is in the schema.
    item = schema["properties"][next(iter(model.model_fields))]["items"]
    inner = model.model_fields[next(iter(model.model_fields))].annotation
    assert list(item["properties"]) == list(inner.__args__[0].model_fields)  # type: ignore[union-attr]


@pytest.mark.parametrize(("schema", "model", "call"), PAIRS)
def test_valid_replies_validate_against_both(
    schema: dict[str, Any], model: type[BaseModel], call: str
) -> None:
    good = replies(call)
    assert len(good) >= 10
    for reply in good:
        assert schema_accepts(schema, reply), reply
        assert model_accepts(model, reply), reply


BROKEN_COUNTING = {
    "unknown check": ("check", "cited"),
    "answer not yes/no": ("answer", "maybe"),
    "evidence not text": ("evidence", 3),
    "claim not text": ("claim", ["x"]),
}
BROKEN_SCORING = {
    "score above 3": ("score", 4),
    "score below 1": ("score", 0),
    "score as text": ("score", "3"),
    "unknown criterion": ("criterion", "style"),
}


@pytest.mark.parametrize(
    ("call", "field", "value"),
    [("counting", *v) for v in BROKEN_COUNTING.values()]
    + [("scoring", *v) for v in BROKEN_SCORING.values()],
    ids=[*BROKEN_COUNTING, *BROKEN_SCORING],
)
def test_invalid_replies_are_refused_by_both(call: str, field: str, value: Any) -> None:
    schema, model, _ = PAIRS[0] if call == "counting" else PAIRS[1]
    reply = copy.deepcopy(replies(call)[0])
    items = reply["verdicts"] if call == "counting" else reply["scores"]
    items[0][field] = value
    assert not schema_accepts(schema, reply)
    assert not model_accepts(model, reply)


def test_strict_form_writes_optional_fields_as_required_nullables() -> None:
    item = COUNTING_SCHEMA["properties"]["verdicts"]["items"]
    assert item["properties"]["claim"] == {"type": ["string", "null"]}
    assert item["properties"]["source"] == {"type": ["string", "null"]}
    assert "claim" in item["required"]
