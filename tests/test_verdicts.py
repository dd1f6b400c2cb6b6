"""The judge's wire format (contract section 2): a reply with exactly the contract's fields parses;
every way of breaking it raises InvalidJudgeOutput with a problem that names what broke."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from research_judge.errors import InvalidJudgeOutput
from research_judge.judge.verdicts import (
    COUNTING_SCHEMA,
    SCORE_NAMES,
    SCORING_SCHEMA,
    Score,
    Verdict,
    parse_counting,
    parse_scoring,
)

REFS = ["r1", "r2"]


def reference_verdict(rid: str, check: str, answer: str = "yes") -> dict[str, Any]:
    # Exactly the contract's fields: relevant/used objects carry no claim and no source.
    return {"id": rid, "check": check, "answer": answer, "evidence": f"quote from {rid}"}


def claim_verdict(cid: str, answer: str = "yes", source: str | None = "r2") -> dict[str, Any]:
    verdict = {"id": cid, "check": "grounded", "answer": answer, "evidence": "a quote"}
    verdict["claim"] = f"claim {cid}"
    if answer == "yes":
        verdict["source"] = source
    return verdict


def counting(**changes: Any) -> dict[str, Any]:
    verdicts = [
        reference_verdict("r1", "relevant"),
        reference_verdict("r1", "used", "no"),
        reference_verdict("r2", "relevant"),
        reference_verdict("r2", "used"),
        claim_verdict("c1"),
        claim_verdict("c2", "no"),
    ]
    return {"verdicts": verdicts, **changes}


def problems_of(text: str, refs: list[str] = REFS) -> list[str]:
    with pytest.raises(InvalidJudgeOutput) as caught:
        parse_counting(text, refs)
    assert caught.value.problems, "an invalid reply must say what is wrong"
    return caught.value.problems


def counting_problems(reply: dict[str, Any], refs: list[str] = REFS) -> str:
    return " | ".join(problems_of(json.dumps(reply), refs))


def with_verdict(index: int, **fields: Any) -> dict[str, Any]:
    reply = counting()
    reply["verdicts"][index].update(fields)
    return reply


# --- call 1: counting ------------------------------------------------------------------------


def test_valid_counting_reply_with_exactly_the_contract_fields_parses() -> None:
    verdicts = parse_counting(json.dumps(counting()), REFS)
    assert verdicts == [
        Verdict("r1", "relevant", True, "quote from r1"),
        Verdict("r1", "used", False, "quote from r1"),
        Verdict("r2", "relevant", True, "quote from r2"),
        Verdict("r2", "used", True, "quote from r2"),
        Verdict("c1", "grounded", True, "a quote", "claim c1", "r2"),
        Verdict("c2", "grounded", False, "a quote", "claim c2", None),
    ]


def test_null_claim_and_source_on_reference_checks_are_accepted() -> None:
    # The schema sent in strict mode makes the model fill every key, with null where unused.
    reply = with_verdict(0, claim=None, source=None)
    reply["verdicts"][5]["source"] = None
    assert len(parse_counting(json.dumps(reply), REFS)) == 6


def test_extra_keys_are_tolerated_everywhere() -> None:
    reply = counting(notes="extra top-level key")
    reply["verdicts"][0]["confidence"] = 0.9
    reply["verdicts"][4]["page"] = 3
    assert len(parse_counting(json.dumps(reply), REFS)) == 6


def test_no_references_and_no_claims_is_valid() -> None:
    assert parse_counting('{"verdicts": []}', []) == []


def test_claims_without_references_are_valid_when_ungrounded() -> None:
    reply = {"verdicts": [claim_verdict("c1", "no")]}
    [verdict] = parse_counting(json.dumps(reply), [])
    assert verdict.check == "grounded" and verdict.answer is False


@pytest.mark.parametrize("text", ["", "not json", '{"verdicts": [', "```json\n{}\n```"])
def test_reply_that_is_not_json(text: str) -> None:
    assert any("not valid JSON" in p for p in problems_of(text))


@pytest.mark.parametrize("text", ["[]", "null", '"verdicts"', "{}"])
def test_reply_that_is_not_the_expected_object(text: str) -> None:
    problems = problems_of(text)
    assert all(not p.startswith(":") for p in problems)
    assert any(p.startswith(("the reply", "verdicts")) for p in problems)


@pytest.mark.parametrize("rid", REFS)
@pytest.mark.parametrize("check", ["relevant", "used"])
def test_missing_reference_check(rid: str, check: str) -> None:
    reply = counting()
    reply["verdicts"] = [v for v in reply["verdicts"] if (v["id"], v["check"]) != (rid, check)]
    assert counting_problems(reply) == f"reference {rid!r} has no {check!r} verdict"


def test_reference_missing_entirely_reports_both_checks() -> None:
    problems = problems_of(json.dumps(counting()), [*REFS, "r3"])
    assert problems == [
        "reference 'r3' has no 'relevant' verdict",
        "reference 'r3' has no 'used' verdict",
    ]


@pytest.mark.parametrize("check", ["relevant", "used"])
def test_unknown_reference_id(check: str) -> None:
    reply = counting()
    reply["verdicts"].append(reference_verdict("r9", check))
    assert counting_problems(reply) == f"{check!r} verdict names unknown reference id 'r9'"


@pytest.mark.parametrize("index", [0, 1, 4])
def test_duplicate_id_check_pair(index: int) -> None:
    reply = counting()
    duplicate = copy.deepcopy(reply["verdicts"][index])
    duplicate["answer"] = "no"
    reply["verdicts"].append(duplicate)
    vid, check = duplicate["id"], duplicate["check"]
    assert f"2 {check!r} verdicts for id {vid!r}" in counting_problems(reply)


@pytest.mark.parametrize("answer", ["maybe", "Yes", "NO", "true", True, 1, None])
def test_answer_other_than_yes_or_no(answer: object) -> None:
    problems = counting_problems(with_verdict(2, answer=answer))
    assert problems.startswith("verdicts.2.answer:")
    assert "'yes' or 'no'" in problems


@pytest.mark.parametrize("check", ["relevance", "grounding", "Used", ""])
def test_unknown_check_kind(check: str) -> None:
    assert counting_problems(with_verdict(0, check=check)).startswith("verdicts.0.check:")


@pytest.mark.parametrize("field", ["id", "check", "answer", "evidence"])
def test_missing_required_verdict_field(field: str) -> None:
    reply = counting()
    del reply["verdicts"][1][field]
    assert f"verdicts.1.{field}: Field required" in counting_problems(reply)


@pytest.mark.parametrize("field", ["id", "evidence", "claim", "source"])
def test_non_string_verdict_field(field: str) -> None:
    assert f"verdicts.4.{field}:" in counting_problems(with_verdict(4, **{field: 12}))


@pytest.mark.parametrize("claim", [None, ""])
def test_grounded_without_claim(claim: str | None) -> None:
    reply = with_verdict(5, claim=claim)
    assert counting_problems(reply) == "grounded verdict 'c2' does not quote its claim"


def test_grounded_without_claim_key() -> None:
    reply = counting()
    del reply["verdicts"][4]["claim"]
    assert counting_problems(reply) == "grounded verdict 'c1' does not quote its claim"


def test_grounded_yes_without_source() -> None:
    reply = counting()
    del reply["verdicts"][4]["source"]
    assert counting_problems(reply) == "grounded verdict 'c1' is 'yes' but names no source"
    assert "names no source" in counting_problems(with_verdict(4, source=None))


def test_grounded_no_may_name_a_source_it_checked() -> None:
    verdicts = parse_counting(json.dumps(with_verdict(5, source="r1")), REFS)
    assert verdicts[5].source == "r1" and verdicts[5].answer is False


@pytest.mark.parametrize(("index", "source"), [(4, "r9"), (5, "r9"), (4, "c2")])
def test_grounded_names_unknown_source(index: int, source: str) -> None:
    cid = counting()["verdicts"][index]["id"]
    problems = counting_problems(with_verdict(index, source=source))
    assert problems == f"grounded verdict {cid!r} names unknown source {source!r}"


def test_claim_id_equal_to_a_reference_id() -> None:
    problems = counting_problems(with_verdict(4, id="r1"))
    assert problems == "claim id 'r1' clashes with a reference id; use c1, c2, ..."


def test_every_problem_is_reported_at_once() -> None:
    reply = counting()
    reply["verdicts"] = reply["verdicts"][1:]  # drops r1 relevant
    reply["verdicts"].append(reference_verdict("r7", "used"))
    reply["verdicts"][3]["source"] = None  # c1: yes without source
    problems = problems_of(json.dumps(reply))
    assert len(problems) == 3
    joined = " | ".join(problems)
    assert "'r7'" in joined and "names no source" in joined and "'r1' has no 'relevant'" in joined


def test_schema_problems_are_few_and_short() -> None:
    reply = {"verdicts": [{"id": "x" * 500, "check": "nope"} for _ in range(40)]}
    problems = problems_of(json.dumps(reply))
    assert len(problems) <= 10
    assert all(len(p) < 300 for p in problems)


# --- call 2: scoring -------------------------------------------------------------------------


def score(criterion: str, value: object = 2) -> dict[str, Any]:
    return {
        "criterion": criterion,
        "reasoning": f"why {criterion}",
        "evidence": "q",
        "score": value,
    }


def scoring(*items: dict[str, Any]) -> str:
    chosen = list(items) or [score("effectiveness", 3), score("fluff", 2), score("structure", 1)]
    return json.dumps({"scores": chosen})


def scoring_problems(text: str) -> str:
    with pytest.raises(InvalidJudgeOutput) as caught:
        parse_scoring(text)
    assert caught.value.problems
    return " | ".join(caught.value.problems)


def test_valid_scoring_reply_parses() -> None:
    assert parse_scoring(scoring()) == {
        "effectiveness": Score("effectiveness", 3, "why effectiveness", "q"),
        "fluff": Score("fluff", 2, "why fluff", "q"),
        "structure": Score("structure", 1, "why structure", "q"),
    }


def test_scoring_order_does_not_matter_and_extra_keys_are_tolerated() -> None:
    items = [score("structure"), score("effectiveness"), {**score("fluff"), "tally": 2}]
    parsed = parse_scoring(json.dumps({"scores": items, "overall": "ignored"}))
    assert set(parsed) == set(SCORE_NAMES)


@pytest.mark.parametrize("missing", SCORE_NAMES)
def test_missing_criterion(missing: str) -> None:
    items = [score(c) for c in SCORE_NAMES if c != missing]
    assert scoring_problems(scoring(*items)) == f"criterion {missing!r} is missing"


def test_duplicate_criterion() -> None:
    items = [score(c) for c in SCORE_NAMES] + [score("fluff", 3)]
    assert scoring_problems(scoring(*items)) == "criterion 'fluff' appears 2 times"


@pytest.mark.parametrize("name", ["overall", "Fluff", "clarity", ""])
def test_unknown_or_extra_criterion(name: str) -> None:
    items = [score(c) for c in SCORE_NAMES] + [score(name)]
    assert scoring_problems(scoring(*items)).startswith("scores.3.criterion:")


@pytest.mark.parametrize("value", [0, 4, -1, "3", True, 2.0, 2.5, None])
def test_score_outside_the_integers_1_to_3(value: object) -> None:
    items = [score("effectiveness"), score("fluff", value), score("structure")]
    problems = scoring_problems(scoring(*items))
    assert problems.startswith("scores.1.score:")
    assert "got" in problems


@pytest.mark.parametrize("text", ["nope", "[]", '{"scores": "all threes"}', "{}"])
def test_malformed_scoring_reply(text: str) -> None:
    problems = scoring_problems(text)
    assert not problems.startswith(":")


# --- schemas sent with the requests ----------------------------------------------------------


def objects_in(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found += objects_in(value)
    elif isinstance(schema, list):
        for value in schema:
            found += objects_in(value)
    return found


@pytest.mark.parametrize("schema", [COUNTING_SCHEMA, SCORING_SCHEMA])
def test_schemas_are_strict_mode_compatible(schema: dict[str, Any]) -> None:
    objects = objects_in(schema)
    assert len(objects) == 2  # the reply and one array item
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    json.dumps(schema)  # plain JSON, sendable as is


def test_scoring_item_puts_reasoning_before_score() -> None:
    item = SCORING_SCHEMA["properties"]["scores"]["items"]
    for keys in (list(item["properties"]), item["required"]):
        assert keys.index("reasoning") < keys.index("score")
        assert keys.index("evidence") < keys.index("score")
    assert item["properties"]["score"]["enum"] == [1, 2, 3]
    assert item["properties"]["criterion"]["enum"] == list(SCORE_NAMES)


def test_counting_schema_enumerates_checks_and_answers() -> None:
    item = COUNTING_SCHEMA["properties"]["verdicts"]["items"]["properties"]
    assert item["check"]["enum"] == ["relevant", "used", "grounded"]
    assert item["answer"]["enum"] == ["yes", "no"]
    assert item["claim"]["type"] == ["string", "null"]
    assert item["source"]["type"] == ["string", "null"]
