"""``convert auto`` (or ``convert`` with no FORMAT): each file read in the format it looks like; a
file no format reads, or that plainly is not the format asked for, is one line saying what it
looks like; repeated bad lines are capped. And: every format ``convert --help`` lists has a
fixture that converts cleanly."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.sessions.convert import (
    ERRORS_SHOWN_PER_FILE,
    FORMATS,
    ConvertOptions,
    compile_stub_pattern,
    convert_files,
)
from research_judge.sessions.convert._sniff import sniff

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "agent_logs"
STUB = r"\[stored: r2://agent-results/(?P<ref>\S+), \d+ chars\]"
# Each format's fixture (what the demo converts, or the format's own sample).
FIXTURE_OF = {
    "openai-chat": "openai_chat.jsonl",
    "openai-responses": "openai_responses.jsonl",
    "anthropic": "anthropic.jsonl",
    "claude-agent": "claude_agent.jsonl",
    "otel": "otel_traces.jsonl",
    "openinference": "openinference_traces.jsonl",
}


def _help_formats(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The formats ``research-judge convert --help`` lists, as the user reads them."""
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    text = capsys.readouterr().out
    block = text.split("formats:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]+)\b", block, re.MULTILINE)]


def test_every_format_convert_help_lists_has_a_fixture_that_converts_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = _help_formats(capsys)
    assert [f for f in listed if f != "auto"] == list(FORMATS)
    for fmt in FORMATS:
        log = LOGS / FIXTURE_OF[fmt]
        looks = sniff(log)
        assert looks is not None and looks.formats[0] == fmt, (fmt, looks)
        out = tmp_path / f"{fmt}.jsonl"
        stats = convert_files(fmt, [log], out, ConvertOptions(compile_stub_pattern(STUB)))
        assert stats.errors == [] and stats.sessions >= 1, fmt


def test_auto_reads_each_file_in_its_own_format(tmp_path: Path) -> None:
    inputs = [LOGS / name for name in FIXTURE_OF.values()] + [LOGS / "vercel_spans.json"]
    out = tmp_path / "all.jsonl"
    stats = convert_files("auto", inputs, out, ConvertOptions(compile_stub_pattern(STUB)))
    assert stats.errors == []
    assert stats.formats == {str(p): f for p, f in zip(inputs, [*FIXTURE_OF, "otel"], strict=True)}
    ids = [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(ids) == 7 and "4bf92f3577b34da6a3ce929d0e0e4736" in ids


def test_convert_without_a_format_is_auto(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.jsonl"
    assert main(["convert", str(LOGS / "claude_agent.jsonl"), "--out", str(out), "--quiet"]) == 0
    (session,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert session["metadata"]["sub_agents"] == ["fact-checker"]


CASSETTE = """\
interactions:
- request:
    body: '{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}'
    headers:
      Content-Type:
      - application/json
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    status:
      code: 200
      message: OK
version: 1
"""


def _unsupported(tmp_path: Path) -> dict[str, tuple[Any, str]]:
    sessions = {"id": "s1", "question": "q", "answer": "a", "trajectory": []}
    return {
        "cassette.yaml": (CASSETTE * 20, "looks like YAML; no convert format reads it (a YAML "
                          "cassette of recorded HTTP calls holds requests, not an agent's log)"),
        "sessions.jsonl": (json.dumps(sessions) + "\n", "looks like a sessions file; no convert "
                           "format reads it (it is already a sessions file: give it to grade)"),
        "notes.txt": ("just some notes\nabout the run\n", "looks like text that is not JSON; no "
                      "convert format reads it"),
    }  # fmt: skip


def test_an_unsupported_file_is_one_line_saying_what_it_looks_like(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = LOGS / "anthropic.jsonl"
    for name, (text, message) in _unsupported(tmp_path).items():
        log = tmp_path / name
        log.write_text(text, encoding="utf-8")
        out = tmp_path / f"{name}.out.jsonl"
        assert main(["convert", "auto", str(log), str(good), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.splitlines() == [f"research-judge convert: {log}: {message}"]
        assert len(out.read_text(encoding="utf-8").splitlines()) == 1  # the good file still read


def test_a_file_in_another_format_than_asked_is_one_line_naming_the_right_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = LOGS / "claude_agent.jsonl"  # 12 lines, none of them an openai-chat record
    out = tmp_path / "s.jsonl"
    assert main(["convert", "openai-chat", str(claude), "--out", str(out), "--quiet"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"research-judge convert: {claude}: looks like a Claude Agent SDK / Claude Code message "
        "stream (read by 'claude-agent'), not 'openai-chat'"
    ]


def test_repeated_bad_lines_are_capped_with_a_count_of_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = (LOGS / "openai_chat.jsonl").read_text(encoding="utf-8")
    log = tmp_path / "chat.jsonl"
    log.write_text(good + '{"id": "x", "messages": 5}\n' * 350, encoding="utf-8")
    out = tmp_path / "s.jsonl"
    assert main(["convert", "openai-chat", str(log), "--out", str(out), "--quiet"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == ERRORS_SHOWN_PER_FILE + 1
    assert (
        lines[0]
        == f"research-judge convert: {log}:2: record 'x': 'messages' must be a list, got int"
    )
    assert lines[-1] == (
        f"research-judge convert: {log}: ... and {350 - ERRORS_SHOWN_PER_FILE} more bad "
        "record(s) like these"
    )
    stats = convert_files("openai-chat", [log], tmp_path / "t.jsonl")
    assert len(stats.errors) == 350 and stats.sessions == 1  # every one still counted


def test_a_bare_list_of_responses_items_says_how_to_wrap_it(tmp_path: Path) -> None:
    items = json.loads((LOGS / "openai_responses.jsonl").read_text(encoding="utf-8"))["items"]
    log = tmp_path / "to_input_list.jsonl"
    log.write_text(json.dumps(items) + "\n", encoding="utf-8")
    stats = convert_files("auto", [log], tmp_path / "out.jsonl")
    assert [str(e) for e in stats.errors] == [
        f"{log}: looks like bare lists of Responses API items, without a record id; no convert "
        'format reads it (write each list as {"id": ..., "items": [...]} for \'openai-responses\')'
    ]


def test_standard_input_is_named_dash_in_what_convert_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(CASSETTE.encode())))
    assert main(["convert", "-", "--out", str(tmp_path / "s.jsonl"), "--quiet"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "research-judge convert: -: looks like YAML; no convert format reads it (a YAML cassette "
        "of recorded HTTP calls holds requests, not an agent's log)"
    ]
