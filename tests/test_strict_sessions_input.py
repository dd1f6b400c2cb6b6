"""What ``grade`` refuses: a session without ``trajectory`` (naming the key it has instead), an
empty input (exit 2), and an agent log given in place of sessions (naming the ``convert`` format
that reads it). An explicit empty trajectory stays valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.errors import InputFileError
from research_judge.sessions.model import Session, iter_sessions

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "agent_logs"


def _write(path: Path, *records: Any) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def _errors(path: Path) -> list[str]:
    return [str(i) for _, i in iter_sessions(path) if isinstance(i, InputFileError)]


def test_references_under_another_key_are_a_bad_line_naming_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", {"id": "s1", "question": "q", "answer": "a",
                                         "references": [{"id": "r1", "content": "c"}]})  # fmt: skip
    assert _errors(path) == [
        f"{path}:1: session 's1': no 'trajectory'; it has 'references': rename it to "
        "'trajectory' (a list of references, each with 'id' and 'content')"
    ]


def test_no_trajectory_and_no_other_list_names_the_keys_it_has(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", {"id": "s1", "question": "q", "answer": "a"})
    (error,) = _errors(path)
    assert "no 'trajectory'" in error and "it has 'id', 'question', 'answer'" in error


def test_other_missing_fields_are_named_with_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", {"id": "c", "question": "q"})
    (error,) = _errors(path)
    assert "answer: missing" in error and "no 'trajectory'" in error


def test_an_explicit_empty_trajectory_is_valid(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", {"id": "s1", "question": "q", "answer": "a",
                                         "trajectory": []})  # fmt: skip
    ((_, item),) = list(iter_sessions(path))
    assert isinstance(item, Session) and item.trajectory == []


def test_the_python_model_requires_it_too() -> None:
    with pytest.raises(ValueError, match="no 'trajectory'; it has 'sources'"):
        Session.model_validate({"id": "s", "question": "q", "answer": "a", "sources": []})


@pytest.mark.parametrize(
    ("log", "fmt"),
    [
        ("openai_chat.jsonl", "openai-chat"),
        ("anthropic.jsonl", "anthropic"),
        ("otel_traces.jsonl", "otel"),
        ("openai_responses.jsonl", "openai-responses"),
        ("claude_agent.jsonl", "claude-agent"),
    ],
)
def test_an_agent_log_given_to_grade_names_the_convert_format(log: str, fmt: str) -> None:
    errors = _errors(LOGS / log)
    assert errors
    assert all("not a session: it looks like" in e for e in errors), errors
    assert f"research-judge convert {fmt} FILE" in errors[0]


def test_grade_of_an_empty_file_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = _write(tmp_path / "empty.jsonl", "", "  ")
    out = tmp_path / "r.jsonl"
    code = main(["grade", str(empty), "--out", str(out), "--provider", "baseline", "--quiet"])
    assert code == 2
    assert f"{empty}: no sessions in this file (it is empty)" in capsys.readouterr().err


def test_grade_of_a_chat_log_exits_2_and_says_to_convert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    code = main(["grade", str(LOGS / "openai_chat.jsonl"), "--out", str(out),
                 "--provider", "baseline", "--quiet"])  # fmt: skip
    assert code == 2
    assert "research-judge convert openai-chat FILE" in capsys.readouterr().err


def _with_rubric(tmp_path: Path) -> Path:
    session = {"id": "s1", "question": "q?", "answer": "An answer.", "rubric": "Cite sources.",
               "trajectory": [{"id": "r1", "content": "c"}]}  # fmt: skip
    return _write(tmp_path / "s.jsonl", session)


def test_with_the_shipped_prompts_the_run_names_the_keys_no_prompt_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    code = main(["grade", str(_with_rubric(tmp_path)), "--out", str(out), "--provider", "baseline"])
    assert code in (0, 1)
    printed = capsys.readouterr().out
    assert printed.count("top-level key(s) no prompt reads") == 1
    assert "rubric (1)" in printed


def test_an_extra_top_level_key_reaches_a_custom_prompt_by_name(tmp_path: Path) -> None:
    import shutil

    from research_judge.clients import ScriptedClient
    from research_judge.judge.grader import Judge
    from research_judge.judge.prompts import PromptSet, default_prompts_dir

    folder = tmp_path / "prompts"
    shutil.copytree(default_prompts_dir(), folder)
    scoring = folder / "scoring.user.j2"
    scoring.write_text(scoring.read_text(encoding="utf-8") + "Rubric: {{ rubric }}\n", "utf-8")
    prompts = PromptSet(folder)
    assert "rubric" in prompts.reads
    ((_, session),) = list(iter_sessions(_with_rubric(tmp_path)))
    assert isinstance(session, Session)
    _, scoring_request = Judge(ScriptedClient([]), prompts=prompts).first_requests(session)
    assert scoring_request.messages[0].content.endswith("Rubric: Cite sources.\n")
