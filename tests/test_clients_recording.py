"""Record/replay and the client chain: identical replies offline, misses named, no secrets kept."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from research_judge.clients import (
    RecordingClient,
    ReplayClient,
    ScriptedClient,
    make_client,
)
from research_judge.clients.base import JudgeRequest, JudgeResponse, Message, Usage
from research_judge.clients.chain import ClientSettings, build_client
from research_judge.clients.variant import judge_variant
from research_judge.errors import ConfigError, InputFileError, ReplayMissError, TransientApiError

from http_stub import StubServer, json_answer

SECRET = "sk-live-DO-NOT-LEAK-9f8e7d6c5b4a"


def make_request(session_id: str = "s-1", text: str = "material") -> JudgeRequest:
    return JudgeRequest(
        call="scoring",
        system="instructions",
        messages=(Message("user", text),),
        schema_name="scores",
        schema={"type": "object", "additionalProperties": False},
        session_id=session_id,
    )


def listing(directory: Path) -> list[Path]:
    """The directory's entries (a plain function: async tests must not block on pathlib)."""
    return sorted(directory.iterdir())


def chat_completion(content: str | None, tool_args: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_args is not None:
        function = {"name": "scores", "arguments": tool_args}
        message["tool_calls"] = [{"id": "call_1", "type": "function", "function": function}]
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {"id": "c", "object": "chat.completion", "created": 1, "choices": [choice]}


def scripted(n: int) -> ScriptedClient:
    replies = [JudgeResponse(f'{{"n": {i}}}', Usage(100 + i, 50, 7), "stop") for i in range(n)]
    return ScriptedClient(replies, provider="openai", model="gpt-x")  # type: ignore[arg-type]


async def test_record_then_replay_gives_identical_responses(tmp_path: Path) -> None:
    recorder = RecordingClient(scripted(3), tmp_path)
    requests = [make_request(f"s-{i}", f"text {i}") for i in range(3)]
    live = [await recorder.complete(r) for r in requests]
    assert [p.name for p in listing(tmp_path)] == sorted(
        f"{r.key('openai', 'gpt-x')}.json" for r in requests
    )
    stored = json.loads((tmp_path / f"{requests[1].key('openai', 'gpt-x')}.json").read_text())
    assert stored["key"] == requests[1].key("openai", "gpt-x")
    assert stored["session_id"] == "s-1"
    assert stored["request"] == requests[1].canonical("openai", "gpt-x")
    assert stored["response"]["content"] == '{"n": 1}'

    replay = ReplayClient(tmp_path, provider="openai", model="gpt-x")
    # Replay in another order: answers are looked up by content, not by position.
    for request, original in reversed(list(zip(requests, live, strict=True))):
        again = await replay.complete(request)
        assert (again.content, again.usage, again.stop_reason) == (
            original.content,
            original.usage,
            original.stop_reason,
        )
        assert again.cached is True
    assert replay.hits == 3


async def test_replay_ignores_the_session_id_but_not_the_model(tmp_path: Path) -> None:
    await RecordingClient(scripted(1), tmp_path).complete(make_request("s-1"))
    same_material = make_request("renamed-session")
    replay = ReplayClient(tmp_path, provider="openai", model="gpt-x")
    assert (await replay.complete(same_material)).content == '{"n": 0}'
    other_model = ReplayClient(tmp_path, provider="openai", model="gpt-y")
    with pytest.raises(ReplayMissError):
        await other_model.complete(same_material)


@pytest.mark.parametrize(
    "change",
    [
        {"call": "counting"},
        {"system": "other instructions"},
        {"messages": (Message("user", "material"), Message("user", "more"))},
        {"schema_name": "other"},
        {"schema": {"type": "object"}},
        {"max_output_tokens": 10},
        {"temperature": None},
    ],
)
def test_the_key_moves_with_every_part_of_the_request(change: dict[str, Any]) -> None:
    request = make_request()
    key = request.key("openai", "gpt-x")
    assert request.key("openai", "gpt-x") == key  # asked again: the same
    changed = replace(request, **change)  # as a re-ask is built: must not keep the old key
    assert changed.key("openai", "gpt-x") != key
    assert key == make_request().key("openai", "gpt-x")  # a fresh identical request agrees
    assert request.key("anthropic", "gpt-x") != key
    assert request.key("openai", "gpt-y") != key
    assert replace(request, session_id="s-other").key("openai", "gpt-x") == key


async def test_replay_miss_names_the_session_and_the_key(tmp_path: Path) -> None:
    replay = ReplayClient(tmp_path, provider="openai", model="gpt-x")
    request = make_request("s-missing")
    with pytest.raises(ReplayMissError) as caught:
        await replay.complete(request)
    message = str(caught.value)
    assert "'s-missing'" in message
    assert request.key("openai", "gpt-x") in message
    assert str(tmp_path) in message


async def test_failed_calls_are_not_recorded(tmp_path: Path) -> None:
    recorder = RecordingClient(ScriptedClient([TransientApiError("down")]), tmp_path)
    with pytest.raises(TransientApiError):
        await recorder.complete(make_request())
    assert listing(tmp_path) == []


async def test_jsonl_recording_round_trips_and_last_line_wins(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "exchanges.jsonl"
    recorder = RecordingClient(scripted(3), path)
    await recorder.complete(make_request("s-1", "a"))
    await recorder.complete(make_request("s-2", "b"))
    await recorder.complete(make_request("s-1", "a"))  # same material again: third reply
    assert len(path.read_text().splitlines()) == 3
    replay = ReplayClient(path, provider="openai", model="gpt-x")
    assert (await replay.complete(make_request("x", "a"))).content == '{"n": 2}'
    assert (await replay.complete(make_request("x", "b"))).content == '{"n": 1}'


async def test_no_key_or_auth_header_reaches_any_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    async with StubServer(json_answer(chat_completion('{"ok": true}'))) as server:
        settings = ClientSettings(
            model="gpt-x", base_url=server.base_url, cache=False, record=tmp_path / "rec"
        )
        judge = build_client(settings)
        await judge.complete(make_request())
        await judge.complete(make_request("s-2", "more"))
        await judge.aclose()
    assert server.seen[0].headers["authorization"] == f"Bearer {SECRET}"  # really in play
    files = listing(tmp_path / "rec")
    assert len(files) == 2
    for file in files:
        text = file.read_text().lower()
        assert SECRET.lower() not in text
        assert "bearer" not in text and "authorization" not in text
    assert not [f for f in files if f.name.endswith(".tmp")]


async def test_corrupt_recordings_are_reported_with_file_and_line(tmp_path: Path) -> None:
    request = make_request()
    key = request.key("openai", "gpt-x")
    partial = {"key": key, "provider": "openai", "model": "gpt-x", "request": {}}
    (tmp_path / f"{key}.json").write_text(json.dumps(partial))
    with pytest.raises(InputFileError, match=f"{key}.json") as caught:
        await ReplayClient(tmp_path, provider="openai", model="gpt-x").complete(request)
    assert "response" in str(caught.value)

    good = {
        "key": "k",
        "provider": "openai",
        "model": "gpt-x",
        "request": {},
        "response": {"content": "{}"},
    }
    bundle = tmp_path / "bundle.jsonl"
    bundle.write_text(json.dumps(good) + "\n\nnot json\n")
    with pytest.raises(InputFileError) as caught_line:
        ReplayClient(bundle, provider="openai", model="gpt-x")
    assert caught_line.value.line == 3


async def test_a_recording_under_the_wrong_name_is_refused(tmp_path: Path) -> None:
    await RecordingClient(scripted(1), tmp_path).complete(make_request("s-1", "a"))
    [recorded] = listing(tmp_path)
    other = make_request("s-1", "b")
    recorded.rename(tmp_path / f"{other.key('openai', 'gpt-x')}.json")
    with pytest.raises(InputFileError, match="does not match"):
        await ReplayClient(tmp_path, provider="openai", model="gpt-x").complete(other)


def test_missing_replay_source_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        ReplayClient(tmp_path / "nope", provider="openai", model="m")


# --- make_client and the chain --------------------------------------------------------------------


def test_replay_needs_no_key_and_builds_no_network_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for provider in ("openai", "anthropic"):
        client = build_client(ClientSettings(provider=provider, model="m", replay=tmp_path))
        assert isinstance(client, ReplayClient)
        assert (client.provider, client.model) == (provider, "m")


def test_importing_the_clients_package_loads_no_network_library() -> None:
    code = (
        "import sys, research_judge.clients as c; "
        "heavy = ('aiohttp', 'anthropic', 'openai'); "
        "assert not [m for m in heavy if m in sys.modules]; "
        "c.OpenAIClient; assert 'aiohttp' in sys.modules; "
        "c.AnthropicClient; assert 'anthropic' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"provider": "gemini", "model": "m"}, "unknown provider"),
        ({"provider": "openai", "model": ""}, "--model"),
        ({"provider": "openai", "model": "m", "mode": "native"}, "json_schema"),
        ({"provider": "anthropic", "model": "m", "mode": "json_object"}, "tool"),
    ],
)
def test_bad_choices_are_config_errors(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        make_client(api_key="k", **kwargs)
    with pytest.raises(ConfigError, match=words):
        ClientSettings(**kwargs)


def test_record_and_replay_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="together"):
        ClientSettings(model="m", record=tmp_path / "a", replay=tmp_path)


async def test_the_chain_passes_mode_and_records_outermost(tmp_path: Path) -> None:
    async with StubServer(json_answer(chat_completion(None, tool_args='{"ok": true}'))) as server:
        judge = build_client(
            ClientSettings(
                model="gpt-x",
                api_key="k-123456",
                base_url=server.base_url,
                mode="tool",
                cache=False,
                record=tmp_path,
            )
        )
        assert isinstance(judge, RecordingClient)
        assert (judge.provider, judge.model) == ("openai", "gpt-x")
        response = await judge.complete(make_request())
        await judge.aclose()
        variant = judge_variant("openai", server.base_url, "tool")
    assert json.loads(response.content) == {"ok": True}
    assert server.body(0)["tool_choice"] == {"type": "function", "function": {"name": "scores"}}
    # Keyed on the endpoint and mode too: replay finds it only under the same ones.
    replayed = await ReplayClient(
        tmp_path, provider="openai", model="gpt-x", variant=variant
    ).complete(make_request())
    assert replayed.content == response.content
    with pytest.raises(ReplayMissError, match="same --base-url and --mode"):
        await ReplayClient(tmp_path, provider="openai", model="gpt-x").complete(make_request())


async def test_closing_the_recorder_closes_the_inner_client(tmp_path: Path) -> None:
    inner = scripted(0)
    await RecordingClient(inner, tmp_path).aclose()
    assert inner.closed
