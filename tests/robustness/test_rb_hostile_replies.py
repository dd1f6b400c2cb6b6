"""A hostile judge reply is re-asked (then a judge_output error), never an internal error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hostile import hostile_replies

from research_judge.clients import OpenAIClient, RecordingClient, ReplayClient, ScriptedClient
from research_judge.clients.base import JudgeRequest
from research_judge.judge.grader import Judge
from research_judge.results.model import Result
from research_judge.sessions.model import Session
from research_judge.testing.fake_openai import FakeOpenAIServer

from support import WithHeaders, body_responder, good_responder, scoring_reply, session

VALID_SCORING = json.dumps(scoring_reply())
HOSTILE = hostile_replies(VALID_SCORING)


def first_scoring_reply_is(bad: str) -> Any:
    sent: list[int] = []

    def responder(request: JudgeRequest) -> Any:
        if request.call == "scoring" and not sent:
            sent.append(1)
            return bad
        return good_responder(request)

    return responder


@pytest.mark.parametrize("what", list(HOSTILE))
async def test_a_hostile_reply_is_reasked_and_the_session_graded(what: str) -> None:
    client = ScriptedClient(first_scoring_reply_is(HOSTILE[what]))
    result = await Judge(client).grade(Session.model_validate(session()))
    assert result.error is None, result.error
    assert [r.call for r in client.history].count("scoring") == 2
    # The re-ask carries the bad reply back, as text that can be sent and hashed.
    reask = client.history[-1]
    assert reask.key("p", "m")
    for message in reask.messages:
        message.content.encode("utf-8")
    Result.model_validate_json(result.to_json_line())


@pytest.mark.parametrize("what", list(HOSTILE))
async def test_a_reply_that_stays_hostile_is_a_judge_output_error(what: str) -> None:
    client = ScriptedClient(lambda r: HOSTILE[what] if r.call == "scoring" else good_responder(r))
    result = await Judge(client).grade(Session.model_validate(session()))
    assert result.error_kind == "judge_output"
    result.to_json_line().encode("utf-8")


async def test_a_surrogate_reply_is_recorded_and_replayed_without_crashing(tmp_path: Path) -> None:
    for (name, bad), suffix in zip(
        [(k, v) for k, v in HOSTILE.items() if "surrogate" in k] * 2,
        ["", "", ".jsonl", ".jsonl"],
        strict=True,
    ):
        target = tmp_path / f"{name.replace(' ', '-')}{suffix}"
        recorder = RecordingClient(ScriptedClient(first_scoring_reply_is(bad)), target)
        first = await Judge(recorder).grade(Session.model_validate(session()))
        assert first.error is None, first.error
        replay = ReplayClient(target, provider="scripted", model="scripted")
        again = await Judge(replay).grade(Session.model_validate(session()))
        assert again.error is None, again.error
        assert again.ratios == first.ratios and again.scores == first.scores


async def test_a_surrogate_in_a_servers_reply_is_reasked_not_an_api_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sent: list[int] = []

    def responder(body: dict[str, Any], headers: dict[str, str]) -> str:
        reply = body_responder.respond(body, headers)
        if body["response_format"]["json_schema"]["name"] == "criterion_scores" and not sent:
            sent.append(1)
            # The server's JSON carries it as the escape \ud800 (json.dumps writes it so).
            return reply.replace('"reasoning": "', '"reasoning": "\ud800', 1)
        return reply

    with FakeOpenAIServer(WithHeaders(responder)) as srv:
        client = OpenAIClient("gpt-4o-mini", base_url=srv.base_url)
        try:
            result = await Judge(client).grade(Session.model_validate(session()))
        finally:
            await client.aclose()
    assert sent and result.error is None, result.error
    assert result.usage.calls == 3
