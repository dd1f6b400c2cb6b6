"""The fake judge answers every session validly from the request the judge sends.

It reads what a request shows back through the prompt templates that rendered it, never from
their wording; nothing rides beside the request for it, so the bundled recordings replay
unchanged (``test_fixtures_baseline`` and the replay tests check that).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import httpx2
import pytest

from research_judge.clients.base import JudgeRequest
from research_judge.clients.openai import OpenAIClient
from research_judge.clients.scripted import ScriptedClient
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge, JudgeSettings
from research_judge.judge.prompts import PromptSet
from research_judge.judge.verdicts import parse_counting, parse_scoring
from research_judge.results.model import read_results
from research_judge.sessions.model import Session, iter_sessions
from research_judge.testing import FakeJudge, FakeOpenAIServer, fake_judge_reply, fake_reply
from research_judge.testing.shown import ShownReference, ShownSession, UnknownRequest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REWORDED = Path(__file__).resolve().parent / "reworded_prompts"
BUNDLED = (
    FIXTURES / "sessions.jsonl",
    FIXTURES / "baseline" / "sessions.jsonl",
    FIXTURES / "bad_sessions.jsonl",  # its good lines; the bad ones never reach a judge
)


def good_sessions(path: Path) -> list[Session]:
    return [s for _, s in iter_sessions(path) if isinstance(s, Session)]


def one_attempt(client: OpenAIClient | ScriptedClient) -> Judge:
    # One attempt: a reply that needed a re-ask would show up as an error.
    return Judge(client, settings=JudgeSettings(max_attempts=1))


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "tool"])
async def test_the_fake_server_answers_every_bundled_session_validly(
    tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer(FakeJudge()) as server:
        client = OpenAIClient("fake-judge", api_key="unused", base_url=server.base_url, mode=mode)
        for path in BUNDLED:
            out = tmp_path / f"{path.parent.name}-{path.stem}.jsonl"
            await grade_file(path, out, one_attempt(client), RunOptions(concurrency=4))
            results = read_results(out)
            expected = [s.id for s in good_sessions(path)]
            assert [r.session_id for r in results] == expected
            assert [r.error for r in results if r.error] == []
            assert all(r.usage.calls == 2 for r in results)
        await client.aclose()
    assert server.stats.failed == 0
    # Both verdicts appear: the fake is arbitrary, not constant.
    verdicts = {r.verdict for r in read_results(tmp_path / "fixtures-sessions.jsonl")}
    assert verdicts == {"pass", "fail"}


async def test_the_scripted_client_answers_every_bundled_session_from_the_request(
    tmp_path: Path,
) -> None:
    client = ScriptedClient(fake_judge_reply)
    for path in BUNDLED:
        out = tmp_path / f"{path.parent.name}-{path.stem}.jsonl"
        await grade_file(path, out, one_attempt(client), RunOptions())
        assert all(r.error is None for r in read_results(out))


def test_a_request_carries_nothing_beside_what_is_sent() -> None:
    # No field rides on the request for fakes alone: every field is sent or labels errors.
    fields = {f.name for f in dataclasses.fields(JudgeRequest) if not f.name.startswith("_")}
    assert fields == {
        "call", "system", "messages", "schema_name", "schema", "max_output_tokens",
        "temperature", "session_id", "sample",
    }  # fmt: skip


def test_the_fake_reads_the_references_each_request_shows() -> None:
    [session] = good_sessions(FIXTURES / "sessions.jsonl")[:1]
    counting, scoring = Judge(ScriptedClient([])).first_requests(session)
    judge = FakeJudge()
    shown = judge.shown.read(counting)
    assert [r.id for r in shown.references] == session.reference_ids
    assert [r.content for r in shown.references] == [r.content for r in session.trajectory]
    assert (shown.question, shown.answer) == (session.question, session.answer)
    assert judge.shown.read(scoring).references == ()
    verdicts = parse_counting(json.dumps(judge(counting)), session.reference_ids)
    assert {v.id for v in verdicts} == set(session.reference_ids)


def test_hostile_reference_ids_are_read_back_exactly() -> None:
    ids = ['r"1', "réf-ü", "c1", "r 4>>"]
    raw = {
        "id": "s-1",
        "question": "Q?",
        "answer": "A [r1].",
        "trajectory": [{"id": i, "content": f"text of {i}"} for i in ids],
    }
    session = Session.model_validate(raw)
    counting, _ = Judge(ScriptedClient([])).first_requests(session)
    assert [r.id for r in FakeJudge().shown.read(counting).references] == ids


def test_fixed_claims_keep_their_ids_and_scores_are_valid_wire_replies() -> None:
    claims = (("c1", "One."), ("c7", "Two."), ("c9", "Three."))
    refs = (ShownReference("r1", "a"), ShownReference("r2", "b"))
    reply = fake_reply(ShownSession("counting", "Q", "A", refs, claims))
    verdicts = parse_counting(json.dumps(reply), ["r1", "r2"])
    assert [(v.id, v.claim) for v in verdicts if v.check == "grounded"] == list(claims)
    scoring = ShownSession("scoring", "Q", "A", (), None)
    scores = parse_scoring(json.dumps(fake_reply(scoring)))
    assert set(scores) == {"effectiveness", "fluff", "structure"}
    assert fake_reply(scoring) == fake_reply(ShownSession("scoring", "Q", "A", (), None))


def test_reworded_prompts_are_read_once_the_fake_has_the_folder() -> None:
    [session] = good_sessions(FIXTURES / "sessions.jsonl")[:1]
    counting, _ = Judge(ScriptedClient([]), prompts=PromptSet(REWORDED)).first_requests(session)
    shown = FakeJudge(REWORDED).shown.read(counting)
    assert [r.id for r in shown.references] == session.reference_ids
    with pytest.raises(UnknownRequest, match="not those of the prompts folder"):
        fake_judge_reply(counting)


def test_a_request_it_cannot_read_is_refused_with_400_naming_why() -> None:
    with FakeOpenAIServer(FakeJudge()) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        bare = httpx2.post(f"{server.base_url}/chat/completions", json=body)
        body["messages"].insert(0, {"role": "system", "content": "Grade this."})
        other = httpx2.post(f"{server.base_url}/chat/completions", json=body)
    assert bare.status_code == 400
    assert "first message is not the instructions" in bare.json()["error"]["message"]
    assert other.status_code == 400
    assert "not those of the prompts folder" in other.json()["error"]["message"]


def test_request_headers_over_the_servers_limit_get_431_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import research_judge.testing.fake_openai as fake_openai

    monkeypatch.setattr(fake_openai, "HEAD_LIMIT", 4096)
    with FakeOpenAIServer(FakeJudge()) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        reply = httpx2.post(
            f"{server.base_url}/chat/completions", json=body, headers={"X-Big": "x" * 8192}
        )
    assert reply.status_code == 431
    assert "request headers over 4,096 bytes" in reply.json()["error"]["message"]
