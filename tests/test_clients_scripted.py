"""ScriptedClient: replies from a list or a function, in call order, with clear exhaustion."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from research_judge.clients import JudgeClient, ScriptedClient, ScriptExhausted
from research_judge.clients.base import JudgeRequest, JudgeResponse, Message, Usage
from research_judge.errors import ResearchJudgeError, TransientApiError


def make_request(session_id: str = "s-1", text: str = "material") -> JudgeRequest:
    return JudgeRequest(
        call="counting",
        system="12345678",  # 8 characters: 2 estimated tokens
        messages=(Message("user", text),),
        schema_name="verdicts",
        schema={"type": "object"},
        session_id=session_id,
    )


async def test_list_items_of_every_kind_are_used_in_order() -> None:
    ready = JudgeResponse('{"ready": true}', Usage(1, 0, 1), "end_turn")
    judge = ScriptedClient(
        [
            '{"a": 1}',
            {"b": "ü"},
            ready,
            TransientApiError("flaky", 503),
            lambda request: {"session": request.session_id},
        ]
    )
    assert (await judge.complete(make_request("s-1"))).content == '{"a": 1}'
    assert json.loads((await judge.complete(make_request("s-2"))).content) == {"b": "ü"}
    assert await judge.complete(make_request("s-3")) is ready
    with pytest.raises(TransientApiError, match="flaky"):
        await judge.complete(make_request("s-4"))
    assert json.loads((await judge.complete(make_request("s-5"))).content) == {"session": "s-5"}
    assert [r.session_id for r in judge.history] == ["s-1", "s-2", "s-3", "s-4", "s-5"]
    assert judge.remaining == 0


async def test_exhausted_script_names_the_call_and_session() -> None:
    judge = ScriptedClient(["{}"])
    await judge.complete(make_request("s-1"))
    with pytest.raises(ScriptExhausted, match=r"call 2 \(session 's-9', counting\)") as caught:
        await judge.complete(make_request("s-9"))
    assert isinstance(caught.value, ResearchJudgeError)
    assert "held 1" in str(caught.value)


async def test_a_single_function_answers_every_call_sync_or_async() -> None:
    def sync(request: JudgeRequest) -> str:
        return json.dumps({"echo": request.messages[0].content})

    async def asynchronous(request: JudgeRequest) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"echo": request.messages[0].content.upper()}

    for responder, expected in ((sync, "x"), (asynchronous, "X")):
        judge = ScriptedClient(responder, provider="openai", model="gpt-fake")
        replies = [await judge.complete(make_request(text="x")) for _ in range(3)]
        assert [json.loads(r.content)["echo"] for r in replies] == [expected] * 3
        assert len(judge.history) == 3
        assert (judge.provider, judge.model) == ("openai", "gpt-fake")


async def test_exception_classes_and_returned_exceptions_are_raised() -> None:
    judge = ScriptedClient([ValueError, lambda request: TransientApiError("down")])
    with pytest.raises(ValueError):
        await judge.complete(make_request())
    with pytest.raises(TransientApiError, match="down"):
        await judge.complete(make_request())


async def test_a_function_returning_the_wrong_type_is_reported() -> None:
    judge = ScriptedClient(lambda request: 42)  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="returned int"):
        await judge.complete(make_request())


def test_a_lone_reply_instead_of_a_list_is_refused() -> None:
    with pytest.raises(TypeError, match="list of replies"):
        ScriptedClient('{"a": 1}')  # type: ignore[arg-type]


async def test_usage_is_estimated_at_four_characters_a_token() -> None:
    judge = ScriptedClient(["x" * 9])
    response = await judge.complete(make_request(text="y" * 13))  # 8 + 13 = 21 characters
    assert response.usage == Usage(input_tokens=6, cached_input_tokens=0, output_tokens=3)
    assert response.cached is False


async def test_concurrent_calls_take_replies_in_call_order() -> None:
    judge = ScriptedClient([f'{{"n": {i}}}' for i in range(5)])
    replies = await asyncio.gather(*(judge.complete(make_request(f"s-{i}")) for i in range(5)))
    assert [json.loads(r.content)["n"] for r in replies] == [0, 1, 2, 3, 4]


async def test_it_is_a_judge_client_and_records_closing() -> None:
    judge = ScriptedClient([])
    assert isinstance(judge, JudgeClient)
    await judge.aclose()
    assert judge.closed
