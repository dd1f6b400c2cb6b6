"""What real local servers need (llama.cpp, vLLM, Ollama): the output-cap field they read, length
caps in the schema, truncation seen through a tool call that claims to be finished, and re-asks
that never grow by a whole rambling reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from research_judge.cli import main
from research_judge.clients import make_client
from research_judge.clients.base import JudgeRequest, Message
from research_judge.clients.openai import OpenAIClient
from research_judge.clients.scripted import ScriptedClient
from research_judge.clients.text_limits import TEXT_LIMITS
from research_judge.errors import JudgeRefusal
from research_judge.judge.grader import Judge, JudgeSettings
from research_judge.judge.verdicts import COUNTING_SCHEMA, SCORING_SCHEMA
from research_judge.sessions.model import Session
from research_judge.testing import FakeJudge, FakeOpenAIServer, fake_judge_reply

from http_stub import StubServer, json_answer
from support import session, write_sessions

LOCAL = "http://127.0.0.1:8080/v1"


def request(schema: dict[str, Any] = SCORING_SCHEMA, budget: int = 100) -> JudgeRequest:
    return JudgeRequest(
        "scoring", "sys", (Message("user", "u"),), "criterion_scores", schema,
        max_output_tokens=budget, session_id="s-1",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("base_url", "field"),
    [
        (LOCAL, "max_tokens"),
        ("http://gpu-box.internal:8000/v1", "max_tokens"),
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://team.openai.azure.com/openai/v1", "max_completion_tokens"),
    ],
)
def test_the_output_cap_goes_in_the_field_the_server_reads(base_url: str, field: str) -> None:
    body = OpenAIClient("m", api_key="k", base_url=base_url).request_body(request())
    assert body[field] == 100
    other = {"max_tokens", "max_completion_tokens"} - {field}
    assert not other & set(body)


def test_the_field_can_be_chosen_per_server() -> None:
    client = make_client("openai", "m", base_url=LOCAL, token_limit_field="max_completion_tokens")
    assert isinstance(client, OpenAIClient)
    assert client.request_body(request())["max_completion_tokens"] == 100


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "tool"])
def test_local_servers_get_length_caps_on_every_free_text_field(mode: str) -> None:
    local = OpenAIClient("m", api_key="k", base_url=LOCAL, mode=mode)
    for schema in (COUNTING_SCHEMA, SCORING_SCHEMA):
        body = json.dumps(local.request_body(request(schema)))
        for name in TEXT_LIMITS:
            if f'"{name}"' in json.dumps(schema["properties"]):
                assert f'"{name}": {{"type"' in body
        capped = body.count('"maxLength"')
        texts = sum(f'"{n}": {{"type"' in json.dumps(schema) for n in TEXT_LIMITS)
        assert capped == texts > 0
    # OpenAI's strict mode refuses maxLength; the hashed request schema never carries it.
    openai = OpenAIClient("m", api_key="k", base_url="https://api.openai.com/v1", mode=mode)
    assert "maxLength" not in json.dumps(openai.request_body(request(COUNTING_SCHEMA)))
    assert "maxLength" not in json.dumps(COUNTING_SCHEMA) + json.dumps(SCORING_SCHEMA)


def tool_completion(arguments: str, used: int, name: str = "criterion_scores") -> dict[str, Any]:
    call = {"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}
    return {
        "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]},
                     "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": used},
    }  # fmt: skip


async def test_cut_tool_arguments_at_the_budget_are_truncation_not_a_verdict() -> None:
    cut = '{"scores": [{"criterion": "effectiveness", "reasoning": "The answer '
    async with StubServer(json_answer(tool_completion(cut, used=100))) as server:
        client = OpenAIClient("m", api_key="k", base_url=server.base_url, mode="tool")
        with pytest.raises(JudgeRefusal, match="truncated at max_output_tokens"):
            await client.complete(request(budget=100))
        await client.aclose()


async def test_broken_json_well_inside_the_budget_is_the_models_own_mistake() -> None:
    broken = '{"scores": [oops]}'
    async with StubServer(json_answer(tool_completion(broken, used=12))) as server:
        client = OpenAIClient("m", api_key="k", base_url=server.base_url, mode="tool")
        response = await client.complete(request(budget=100))
        await client.aclose()
    assert response.content == broken  # the grader re-asks with the problems found


async def test_a_re_ask_after_a_cut_reply_does_not_carry_the_cut_reply() -> None:
    cut = '{"scores": [{"criterion": "effectiveness", "reasoning": "' + "blah " * 200

    def answer(seen: Any) -> web.StreamResponse:
        body = seen.json()
        name = body["tools"][0]["function"]["name"]
        if name == "criterion_scores" and len(body["messages"]) == 2:  # the first scoring ask
            return web.json_response(tool_completion(cut, used=body["max_tokens"]))
        reply = FakeJudge().respond(body, {})
        return web.json_response(tool_completion(reply, used=40, name=name))

    async with StubServer(answer) as server:
        client = OpenAIClient("m", api_key="k", base_url=server.base_url, mode="tool")
        judge = Judge(client, settings=JudgeSettings(max_attempts=2))
        result = await judge.grade(Session.model_validate(session("s-1")))
        await client.aclose()
        bodies = [seen.json() for seen in server.seen]
    assert result.error is None
    [retried] = [b for b in bodies if len(b["messages"]) > 2]
    assert all("blah blah" not in m["content"] for m in retried["messages"])
    assert "cut off" in retried["messages"][-1]["content"]
    assert judge.reasks == 1


async def test_a_rambling_reply_is_echoed_only_up_to_a_quarter_of_the_budget() -> None:
    ramble = '{"scores": "' + "x" * 20_000 + '"}'
    seen: list[JudgeRequest] = []

    def respond(req: JudgeRequest) -> Any:
        seen.append(req)
        if req.call == "scoring" and len(req.messages) == 1:
            return ramble
        return fake_judge_reply(req)

    judge = Judge(ScriptedClient(respond))
    result = await judge.grade(Session.model_validate(session("s-1")))
    assert result.error is None
    [reask] = [r for r in seen if len(r.messages) == 3]
    echoed = reask.messages[1].content
    assert reask.messages[1].role == "assistant"
    assert len(echoed) < reask.max_output_tokens + 100 < len(ramble)
    assert "more characters not repeated" in echoed
    assert "scores" in reask.messages[2].content  # the problems are sent in full


def test_the_token_caps_reach_the_server_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = write_sessions(tmp_path / "s.jsonl", [session("s-1")])
    with FakeOpenAIServer(FakeJudge()) as server:
        code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "m",
                     "--base-url", server.base_url, "--no-cache", "--quiet",
                     "--counting-max-tokens", "300", "--scoring-max-tokens", "200"])  # fmt: skip
        caps = [(r.body["response_format"]["json_schema"]["name"], r.body["max_tokens"])
                for r in server.requests]  # fmt: skip
    assert code == 0
    # Each is a cap the request never exceeds: scoring gets its own; the counting verdicts may
    # need more than 300, so the references are split across calls of 300 each.
    assert ("criterion_scores", 200) in caps
    counting = [cap for name, cap in caps if name == "counting_verdicts"]
    assert len(counting) == 2 and set(counting) == {300}
