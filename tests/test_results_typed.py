"""Results are typed objects all the way: verdicts, error kinds, ratios; JSON stays the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_judge.clients.scripted import ScriptedClient
from research_judge.errors import ErrorKind, ExitCode, InputFileError
from research_judge.judge.grader import Judge
from research_judge.results.model import Ratios, Result, VerdictRecord, read_results
from research_judge.sessions.model import Session

from support import good_responder, session


async def test_a_graded_result_holds_typed_verdicts_written_as_the_contract_shows() -> None:
    result = await Judge(ScriptedClient(good_responder)).grade(Session.model_validate(session()))
    assert isinstance(result.ratios, Ratios)
    assert all(isinstance(v, VerdictRecord) for v in result.verdicts)
    line = json.loads(result.to_json_line())
    assert line == result.to_dict()
    by_check = {(v["id"], v["check"]): v for v in line["verdicts"]}
    # Reference verdicts carry no claim fields; claims carry all three, null or not.
    assert set(by_check["r1", "relevant"]) == {
        "id", "check", "answer", "evidence", "evidence_verified"
    }  # fmt: skip
    assert set(by_check["c2", "grounded"]) >= {"claim", "source", "claim_verified"}
    assert by_check["c2", "grounded"]["source"] is None


def test_error_kinds_are_an_enum_written_as_their_strings(tmp_path: Path) -> None:
    line = {"session_id": "s-1", "error": "boom", "error_kind": "replay_miss"}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    [result] = read_results(path)
    assert result.error_kind is ErrorKind.REPLAY_MISS
    assert json.loads(result.to_json_line())["error_kind"] == "replay_miss"


def test_an_unknown_error_kind_is_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"session_id": "s-1", "error_kind": "gremlins"}) + "\n")
    with pytest.raises(InputFileError, match=r"r\.jsonl:1: error_kind"):
        read_results(path)


def test_verdict_records_round_trip_with_extra_keys_kept() -> None:
    raw = {"id": "c1", "check": "grounded", "answer": "yes", "evidence": "q", "claim": "x",
           "source": "r1", "claim_verified": True, "evidence_verified": True,
           "note": "new"}  # fmt: skip
    result = Result.model_validate({"session_id": "s", "verdicts": [raw]})
    assert result.verdicts[0].to_dict() == raw


def test_exit_codes_are_the_documented_numbers() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 5, 6, 70, 130, 141, 143]


def test_grade_exit_code_tells_bad_input_from_a_judge_failure() -> None:
    from research_judge.cli._grading import grade_exit_code

    assert grade_exit_code(0, {}) == ExitCode.OK
    assert grade_exit_code(1, {}) == ExitCode.FAILED  # a bad input line
    assert grade_exit_code(0, {"judge_output": 2, "api": 1}) == ExitCode.JUDGE_FAILED
    # An unreadable offloaded result is the user's input, and input wins over the judge.
    assert grade_exit_code(0, {"content_ref": 1, "api": 3}) == ExitCode.FAILED
    assert grade_exit_code(2, {"api": 3}) == ExitCode.FAILED
