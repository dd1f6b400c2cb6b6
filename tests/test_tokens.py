from __future__ import annotations

import json
import subprocess
import sys

import pytest

from research_judge.clients.base import JudgeRequest, Message
from research_judge.cost.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    estimate_output_tokens,
    estimate_request,
    estimate_tokens,
    guess_claim_count,
)
from research_judge.judge.verdicts import SCORE_NAMES


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 400, 100), ("x" * 401, 101)],
)
def test_estimate_is_characters_over_four_rounded_up(text: str, expected: int) -> None:
    assert estimate_tokens(text) == expected


def test_estimate_counts_characters_not_bytes() -> None:
    assert estimate_tokens("é" * 8) == 2


def test_estimate_never_decreases_as_text_grows() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 20
    counts = [estimate_tokens(text[:i]) for i in range(len(text) + 1)]
    assert counts == sorted(counts)


def test_importing_tokens_does_not_load_the_clients_package() -> None:
    # clients/scripted.py may import estimate_tokens from here; if this module imported the
    # clients package at load time, whichever of the two loaded first would break the other.
    code = "import sys, research_judge.cost.tokens; print('research_judge.clients' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def make_request(
    system: str, *contents: str, schema: dict[str, object] | None = None
) -> JudgeRequest:
    return JudgeRequest(
        call="counting",
        system=system,
        messages=tuple(Message("user", c) for c in contents),
        schema_name="verdicts",
        schema=schema if schema is not None else {},
    )


def test_request_estimate_sums_system_messages_and_schema() -> None:
    schema = {"type": "object", "properties": {"verdicts": {"type": "array"}}}
    request = make_request("s" * 40, "m" * 80, "n" * 12, schema=schema)
    schema_text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    expected = (
        10 + 20 + 3 + 3 * MESSAGE_OVERHEAD_TOKENS + -(-len(schema_text) // 4)  # ceil division
    )
    assert estimate_request(request) == expected


def test_request_estimate_grows_with_every_part() -> None:
    base = estimate_request(make_request("sys", "msg"))
    assert estimate_request(make_request("sys" * 50, "msg")) > base
    assert estimate_request(make_request("sys", "msg" * 50)) > base
    assert estimate_request(make_request("sys", "msg", "more")) > base
    assert estimate_request(make_request("sys", "msg", schema={"type": "object"})) > base


def test_counting_output_grows_with_references_and_claims() -> None:
    # 10 envelope + 2 verdicts * 60 tokens * 5 references + 90 * 4 claims
    assert estimate_output_tokens("counting", 5, 4) == 10 + 600 + 360
    assert estimate_output_tokens("counting", 0, 0) == 10
    sizes = [estimate_output_tokens("counting", n, 3) for n in range(20)]
    assert sizes == sorted(sizes) and len(set(sizes)) == 20
    assert estimate_output_tokens("counting", 5, 5) > estimate_output_tokens("counting", 5, 4)


def test_scoring_output_is_three_criteria_whatever_the_session() -> None:
    assert len(SCORE_NAMES) == 3
    scoring = estimate_output_tokens("scoring", 0, 0, len(SCORE_NAMES))
    assert scoring == 10 + 3 * 150
    assert estimate_output_tokens("scoring", 40, 30, len(SCORE_NAMES)) == scoring


def test_output_estimate_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="unknown call kind"):
        estimate_output_tokens("summarising", 1, 1)
    with pytest.raises(ValueError, match=">= 0"):
        estimate_output_tokens("counting", -1, 0)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("", 0),
        ("   \n\n ", 0),
        ("Cold reduces capacity.", 1),
        ("Cold reduces capacity. Heating draws power! Does it matter? Yes.", 4),
        ("No final stop", 1),
        ("Version 2.5 is out. It is faster", 2),  # a decimal point ends no sentence
        ("Findings:\n- batteries lose 20% in the cold\n- cabin heating costs range.", 3),
    ],
)
def test_claim_guess_counts_sentences_and_list_items(answer: str, expected: int) -> None:
    assert guess_claim_count(answer) == expected
