"""The fake judge (what `serve-fake` runs) also answers the bundled agent logs validly once
`convert` has turned them into sessions: sub-agents, server tools, an offloaded tool result read
back from the store, Responses items, a Claude Agent SDK stream, Vercel AI SDK spans. With
test_fake_judge's three session files, every bundled session, a conversation's turns included."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.results.model import read_results
from research_judge.testing import FakeJudge, FakeOpenAIServer

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "agent_logs"


@pytest.mark.parametrize("mode", ["json_schema", "tool"])
def test_the_fake_server_answers_every_converted_agent_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.syspath_prepend(str(LOGS.parents[1]))  # the fixtures package, as the demo sees it
    fixture = importlib.import_module("fixtures.agent_logs")
    sessions = tmp_path / "agent-sessions.jsonl"
    for fmt, name in fixture.LOGS:
        part = tmp_path / f"{fmt}.jsonl"
        argv = ["convert", fmt, str(LOGS / name), "--out", str(part), "--quiet"]
        assert main([*argv, "--stub-pattern", fixture.STUB_PATTERN]) == 0
        with sessions.open("a", encoding="utf-8") as handle:
            handle.write(part.read_text(encoding="utf-8"))
    ids = [json.loads(line)["id"] for line in sessions.read_text().splitlines()]
    # Seven logs; the three-turn conversation gives one session per answered turn.
    assert len(fixture.LOGS) == 7 and len(ids) == 9

    out = tmp_path / "results.jsonl"
    with FakeOpenAIServer(FakeJudge()) as server:
        code = main(["grade", str(sessions), "--out", str(out), "--model", "fake-judge",
                     "--base-url", server.base_url, "--no-cache", "--quiet",
                     "--mode", mode, "--max-attempts", "1",
                     "--store", str(LOGS / "store")])  # fmt: skip
        failed = server.stats.failed
    assert code == 0, capsys.readouterr().err
    results = read_results(out)
    assert [r.session_id for r in results] == ids
    assert [r.error for r in results] == [None] * 9  # one attempt: no re-ask was needed
    assert all(r.verdict in ("pass", "fail") and r.usage.calls == 2 for r in results)
    assert failed == 0


TURN_LOGS = [
    ("openai-chat", "openai_chat_turns.jsonl"),
    ("anthropic", "anthropic_turns.jsonl"),
    ("anthropic", "anthropic.jsonl"),  # web search: citation excerpts ride on the references
    ("openai-responses", "openai_responses_turns.jsonl"),
    ("claude-agent", "claude_agent_turns.jsonl"),
]


@pytest.mark.parametrize(("fmt", "name"), TURN_LOGS)
def test_the_fake_server_reads_earlier_turns_and_excerpts_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    fmt: str, name: str,
) -> None:  # fmt: skip
    # Sessions after the first turn carry the earlier turns as conversation context, and web
    # search references carry provider excerpts: the fake reads both back from the request.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    sessions = tmp_path / "s.jsonl"
    assert main(["convert", fmt, str(LOGS / name), "--out", str(sessions), "--quiet"]) == 0
    rows = [json.loads(line) for line in sessions.read_text(encoding="utf-8").splitlines()]
    shown = [r for r in rows if r.get("conversation")] + [
        r for r in rows if any(ref.get("excerpts") for ref in r["trajectory"])
    ]
    assert shown, "the fixture should hold earlier turns or excerpts"
    out = tmp_path / "r.jsonl"
    with FakeOpenAIServer(FakeJudge()) as server:
        code = main(["grade", str(sessions), "--out", str(out), "--model", "fake-judge",
                     "--base-url", server.base_url, "--no-cache", "--quiet",
                     "--max-attempts", "1"])  # fmt: skip
        failed = server.stats.failed
    assert code == 0, capsys.readouterr().err
    results = read_results(out)
    assert [r.session_id for r in results] == [r["id"] for r in rows]
    assert [r.error for r in results] == [None] * len(rows) and failed == 0
