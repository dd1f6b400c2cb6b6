"""One hostile line is that line's error (file:line); every other session is still graded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import hostile_session_lines

from research_judge.clients import ScriptedClient
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge
from research_judge.results.model import read_results
from research_judge.sessions import iter_sessions
from research_judge.sessions.model import parse_session_line

from support import good_responder, session

HOSTILE = hostile_session_lines(session("evil"))


@pytest.mark.parametrize("what", list(HOSTILE))
async def test_a_hostile_line_is_a_file_line_error_and_the_rest_are_graded(
    tmp_path: Path, what: str
) -> None:
    lines = [json.dumps(session("good-1")), HOSTILE[what], json.dumps(session("good-2"))]
    src = tmp_path / "s.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "o.jsonl"
    errors: list[str] = []
    stats = await grade_file(
        src, out, Judge(ScriptedClient(good_responder)), RunOptions(),
        on_input_error=lambda e: errors.append(str(e)),
    )  # fmt: skip
    assert [r.session_id for r in read_results(out)] == ["good-1", "good-2"]
    assert stats.errors == 0
    [error] = errors
    assert error.startswith(f"{src}:2: ")


@pytest.mark.parametrize(
    ("what", "field"), [("the question", "question"), ("a reference", "content")]
)
def test_the_surrogate_error_says_where_and_what(what: str, field: str) -> None:
    error = parse_session_line(Path("x.jsonl"), 7, HOSTILE[f"lone surrogate in {what}"])
    assert str(error).startswith("x.jsonl:7: ")
    assert "lone surrogate" in str(error) and field in str(error)


@pytest.mark.parametrize("depth", [150, 500, 900, 2000])
async def test_nesting_just_under_or_over_the_parser_limit_never_stops_the_batch(
    tmp_path: Path, depth: int
) -> None:
    evil = session("evil")
    evil["metadata"] = {"deep": json.loads("[" * depth + "]" * depth) if depth < 900 else None}
    line = json.dumps(evil)
    if depth >= 900:
        line = line.replace('"deep": null', '"deep": ' + "[" * depth + "]" * depth)
    src = tmp_path / "s.jsonl"
    src.write_text(line + "\n" + json.dumps(session("good")) + "\n", encoding="utf-8")
    await grade_file(src, tmp_path / "o.jsonl", Judge(ScriptedClient(good_responder)), RunOptions())
    ids = [r.session_id for r in read_results(tmp_path / "o.jsonl")]
    assert "good" in ids


def test_nesting_and_huge_numbers_are_named(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(
        HOSTILE["nested 10^5 deep"] + "\n" + HOSTILE["a 5,000-digit integer"] + "\n",
        encoding="utf-8",
    )
    errors = [str(item) for _, item in iter_sessions(src)]
    assert "nested too deeply" in errors[0]
    assert "number too large" in errors[1]
