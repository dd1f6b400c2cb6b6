"""``--prompts`` with reworded templates keeps every fake judge working (issue 11).

``tests/reworded_prompts/`` is a copy of the shipped templates with every sentence reworded and
the markers restyled (``[[begin answer NONCE]]`` instead of ``<<answer NONCE>>``), the same
variables in use. A fake that read its answers back from the prompt's wording would break on
it; the fakes read each request back through the templates that rendered it (given the same
folder), so every session is still graded, error-free and, for the truthful judge, to its known
truth.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
import pytest

from research_judge.cli import main
from research_judge.clients import ScriptedClient
from research_judge.cost.windows import ModelLimits
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge, JudgeSettings
from research_judge.judge.prompts import PromptSet, default_prompts_dir
from research_judge.results.model import Result, read_results
from research_judge.sessions.model import Session
from research_judge.testing import FakeJudge, FakeOpenAIServer
from research_judge.testing.fake_openai import Responder
from research_judge.testing.long_sessions import TruthfulJudge, make_session

from support import GoodResponder, session, write_sessions

REWORDED = Path(__file__).resolve().parent / "reworded_prompts"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions.jsonl"
TEMPLATES = sorted(p.name for p in default_prompts_dir().glob("*.j2"))


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def sentences(template: str) -> list[str]:
    """The template's prose: its text outside Jinja tags and JSON examples, in sentence-sized
    pieces of two words or more."""
    prose = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", "\n", template)
    prose = "\n".join(line for line in prose.splitlines() if not line.lstrip().startswith("{"))
    pieces = re.split(r"(?<=[.!?:;])\s+|\n\s*\n|\n(?=\s*-)|\(|\)", prose)
    return [" ".join(p.split()) for p in pieces if len(p.split()) >= 2]


@pytest.mark.parametrize("name", TEMPLATES)
def test_the_reworded_copy_changes_every_sentence_and_keeps_the_variables(name: str) -> None:
    shipped = (default_prompts_dir() / name).read_text(encoding="utf-8")
    reworded = (REWORDED / name).read_text(encoding="utf-8")
    env = jinja2.Environment()
    assert jinja2.meta.find_undeclared_variables(
        env.parse(reworded)
    ) == jinja2.meta.find_undeclared_variables(env.parse(shipped))
    flat = " ".join(reworded.split())
    assert sentences(shipped), name
    assert [s for s in sentences(shipped) if s in flat] == []


def judge(client: ScriptedClient, limits: ModelLimits | None = None) -> Judge:
    # One attempt: a reply the judge had to re-ask for would be an error here.
    return Judge(
        client,
        prompts=PromptSet(REWORDED),
        settings=JudgeSettings(max_attempts=1),
        limits=limits,
    )


def assert_all_graded(results: list[Result], ids: list[str]) -> None:
    assert [r.session_id for r in results] == ids
    assert [(r.session_id, r.error) for r in results if r.error] == []


@pytest.mark.parametrize("kind", ["fake_judge", "good_responder"])
async def test_scripted_judges_answer_reworded_prompts(tmp_path: Path, kind: str) -> None:
    responder: Any = FakeJudge(REWORDED) if kind == "fake_judge" else GoodResponder(REWORDED)
    src = (
        FIXTURES
        if kind == "fake_judge"
        else write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    )
    client = ScriptedClient(responder)
    out = tmp_path / "results.jsonl"
    await grade_file(src, out, judge(client), RunOptions())
    ids = [json.loads(line)["id"] for line in src.read_text().splitlines() if line.strip()]
    assert_all_graded(read_results(out), ids)
    assert "[[begin answer " in client.history[0].messages[0].content  # the reworded prompts


def cli_grade(
    tmp_path: Path, sessions: Path, responder: Responder, *extra: str, window: int | None = None
) -> list[Result]:
    out = tmp_path / "results.jsonl"
    with FakeOpenAIServer(responder, context_window=window) as srv:
        code = main(["grade", str(sessions), "--out", str(out), "--model", "gpt-4o",
                     "--base-url", srv.base_url, "--prompts", str(REWORDED),
                     "--max-attempts", "1", "--no-cache", "--quiet", *extra])  # fmt: skip
    assert code == 0
    assert srv.stats.failed == 0 and srv.stats.refused_context == 0
    user = [m["content"] for m in srv.requests[0].body["messages"] if m["role"] == "user"]
    assert "[[begin answer " in user[0]  # the reworded prompts were sent
    return read_results(out)


def test_serve_fakes_judge_answers_reworded_prompts(tmp_path: Path) -> None:
    results = cli_grade(tmp_path, FIXTURES, FakeJudge(REWORDED))
    ids = [json.loads(line)["id"] for line in FIXTURES.read_text().splitlines() if line.strip()]
    assert_all_graded(results, ids)
    assert {r.verdict for r in results} == {"pass", "fail"}


def test_the_test_suites_header_responder_answers_reworded_prompts(tmp_path: Path) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    assert_all_graded(cli_grade(tmp_path, src, GoodResponder(REWORDED)), ["s-0", "s-1", "s-2"])


def long_sessions() -> list[Any]:
    # Split across calls in a 12,000-token window, one reference cut into parts.
    return [make_session("many", 30, 1500, fact_at=0.8), make_session("huge", 1, 60_000)]


def test_the_truthful_judge_answers_reworded_prompts_over_http(tmp_path: Path) -> None:
    built = long_sessions()
    src = write_sessions(tmp_path / "long.jsonl", [b.session for b in built])
    results = cli_grade(
        tmp_path, src, TruthfulJudge(built, REWORDED), "--context-window", "12000", window=12_000
    )
    assert_all_graded(results, ["many", "huge"])
    for result, known in zip(results, built, strict=True):
        assert result.ratios == known.truth
        assert result.context is not None and result.context.counting_calls > 1
        assert result.context.not_judged == 0


async def test_the_truthful_judge_answers_reworded_prompts_in_process() -> None:
    built = long_sessions()
    sessions = [Session.model_validate(b.session) for b in built]
    j = judge(ScriptedClient(TruthfulJudge(sessions, REWORDED)), ModelLimits(12_000, 4_096))
    for known, one in zip(built, sessions, strict=True):
        result = await j.grade(one)
        assert result.error is None and result.ratios == known.truth
        assert all(v.evidence_verified for v in result.verdicts)
        assert result.context is not None and result.context.counting_calls > 1
