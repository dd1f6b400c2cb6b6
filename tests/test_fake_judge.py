"""The fake judge answers every session validly from the request's material, never the prompt.

Material rides beside the request: not in the body, not in the record/cache key, so the bundled
recordings replay unchanged (``test_fixtures_baseline`` and the replay tests check that too).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import httpx2
import pytest

from research_judge.clients.base import JudgeRequest, Material, Message
from research_judge.clients.material import (
    MATERIAL_HEADER,
    MaterialMissing,
    decode_material,
    encode_material,
)
from research_judge.clients.openai import OpenAIClient
from research_judge.clients.scripted import ScriptedClient
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge, JudgeSettings
from research_judge.judge.verdicts import parse_counting, parse_scoring
from research_judge.results.model import read_results
from research_judge.sessions.model import Session, iter_sessions
from research_judge.testing import FakeJudge, FakeOpenAIServer, fake_judge_reply, fake_reply

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
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
        client = OpenAIClient(
            "fake-judge", api_key="unused", base_url=server.base_url, mode=mode, send_material=True
        )
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


async def test_the_scripted_client_answers_every_bundled_session_from_material(
    tmp_path: Path,
) -> None:
    client = ScriptedClient(fake_judge_reply)
    for path in BUNDLED:
        out = tmp_path / f"{path.parent.name}-{path.stem}.jsonl"
        await grade_file(path, out, one_attempt(client), RunOptions())
        assert all(r.error is None for r in read_results(out))
    assert all(r.material is not None for r in client.history)


def test_material_never_enters_the_body_or_the_key() -> None:
    [session] = good_sessions(FIXTURES / "sessions.jsonl")[:1]
    counting, scoring = Judge(ScriptedClient([])).first_requests(session)
    assert counting.material == Material(tuple(session.reference_ids))
    assert scoring.material == Material(())
    bare = replace(counting, material=None)
    assert bare.key("openai", "m") == counting.key("openai", "m")
    wire = OpenAIClient("m", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert wire.request_body(bare) == wire.request_body(counting)
    assert "material" not in counting.canonical("openai", "m")


def test_hostile_reference_ids_survive_the_header_and_stay_one_line() -> None:
    ids = ('r"1', "r\r\nX-Evil: 1", "réf-ü", "c1")
    request = JudgeRequest(
        "counting", "s", (Message("user", "u"),), "n", {}, session_id="s\n1", material=Material(ids)
    )
    value = encode_material(request)
    assert value.isascii() and "\n" not in value and "\r" not in value
    call, session_id, material = decode_material(value)
    assert (call, session_id, material.reference_ids) == ("counting", "s\n1", ids)
    assert fake_reply("counting", "s", material)["verdicts"]


def test_the_parts_of_cut_references_ride_in_the_header() -> None:
    material = Material(("r1", "r2"), (("c1", "Fact é."),), (("r2", 1200, 2400),))
    request = JudgeRequest("counting", "s", (), "n", {}, session_id="s", material=material)
    value = encode_material(request)
    assert value.isascii()
    assert decode_material(value) == ("counting", "s", material)
    assert material.shown("r2", "x" * 3000) == "x" * 1200 and material.shown("r1", "ab") == "ab"
    for parts in ('[["r2", -1, 5]]', '[["r2", 1.5, 5]]', '[["r2", 1]]', '"r2"'):
        broken = value.replace('[["r2",1200,2400]]', parts)
        with pytest.raises(MaterialMissing, match="unreadable"):
            decode_material(broken)


def test_fixed_claims_keep_their_ids_and_scores_are_valid_wire_replies() -> None:
    claims = (("c1", "One."), ("c7", "Two."), ("c9", "Three."))
    reply = fake_reply("counting", "s-9", Material(("r1", "r2"), claims=claims))
    verdicts = parse_counting(json.dumps(reply), ["r1", "r2"])
    assert [(v.id, v.claim) for v in verdicts if v.check == "grounded"] == list(claims)
    scores = parse_scoring(json.dumps(fake_reply("scoring", "s-9", Material())))
    assert set(scores) == {"effectiveness", "fluff", "structure"}
    assert fake_reply("scoring", "s-9", Material()) == fake_reply("scoring", "s-9", Material())


def test_a_request_without_material_is_refused_with_the_flag_to_use() -> None:
    with FakeOpenAIServer(FakeJudge()) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        bare = httpx2.post(f"{server.base_url}/chat/completions", json=body)
        garbled = httpx2.post(
            f"{server.base_url}/chat/completions", json=body, headers={MATERIAL_HEADER: "{"}
        )
    assert bare.status_code == 400
    assert "--send-material" in bare.json()["error"]["message"]
    assert garbled.status_code == 400
    with pytest.raises(ValueError, match="no material"):
        fake_judge_reply(JudgeRequest("scoring", "s", (), "n", {}))


async def test_a_long_claim_list_reaches_the_fake_server_in_its_header() -> None:
    # Later counting calls carry the whole claim list in the header: 2,000 claims of a sentence
    # each are about 200 KB, past asyncio's 64 KiB default read limit.
    claims = tuple(
        (f"c{i}", f"Claim number {i} states a fact of some length. " * 2) for i in range(2000)
    )
    material = Material(("r1", "r2"), claims)
    request = JudgeRequest(
        "counting",
        "system",
        (Message("user", "u"),),
        "counting_verdicts",
        {"type": "object"},
        session_id="s-long",
        material=material,
    )
    assert len(encode_material(request)) > 2**16
    with FakeOpenAIServer(FakeJudge()) as server:
        client = OpenAIClient(
            "fake-judge", api_key="unused", base_url=server.base_url, send_material=True
        )
        try:
            response = await client.complete(request)
        finally:
            await client.aclose()
    verdicts = parse_counting(response.content, ["r1", "r2"])
    assert [v.id for v in verdicts if v.check == "grounded"] == [c[0] for c in claims]


def test_request_headers_over_the_servers_limit_get_431_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import research_judge.testing.fake_openai as fake_openai

    monkeypatch.setattr(fake_openai, "HEAD_LIMIT", 4096)
    with FakeOpenAIServer(FakeJudge()) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        reply = httpx2.post(
            f"{server.base_url}/chat/completions", json=body, headers={MATERIAL_HEADER: "x" * 8192}
        )
    assert reply.status_code == 431
    assert "request headers over 4,096 bytes" in reply.json()["error"]["message"]
