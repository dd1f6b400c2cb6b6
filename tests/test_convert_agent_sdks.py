"""``convert openai-responses`` and ``convert claude-agent``: the logs the OpenAI Agents SDK and
the Claude Agent SDK write, read through the official SDK types.

The fixtures in ``fixtures/agent_logs/`` are built from the published item and message shapes
and are checked here against the SDKs' own types (the ``openai`` package's Responses params and
models, the ``anthropic`` Messages types, and, when installed, ``claude-agent-sdk``'s parser)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from research_judge.sessions.convert import ConvertOptions, convert_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_logs"
RESPONSES = FIXTURES / "openai_responses.jsonl"
CLAUDE = FIXTURES / "claude_agent.jsonl"


def convert(
    fmt: str, tmp_path: Path, *inputs: Path, last_turn: bool = False
) -> tuple[list[dict[str, Any]], list[str]]:
    out = tmp_path / "sessions.jsonl"
    stats = convert_files(fmt, list(inputs), out, ConvertOptions(last_turn=last_turn))
    sessions = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return sessions, [str(e) for e in stats.errors]


def write_jsonl(path: Path, *records: Any) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def fixture_record(path: Path = RESPONSES) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    return record


# --- openai-responses ------------------------------------------------------------------------


def test_responses_fixture_items_are_valid_responses_api_input_items() -> None:
    from openai.types.responses import ResponseInputItem, ResponseInputItemParam

    params, models = TypeAdapter(ResponseInputItemParam), TypeAdapter(ResponseInputItem)
    kinds = []
    for item in fixture_record()["items"]:
        params.validate_python(item)  # what the Agents SDK sends back as input
        kinds.append(type(models.validate_python(item)).__name__)
    assert kinds == [
        "EasyInputMessage",
        "ResponseReasoningItem",
        "ResponseFunctionWebSearch",
        "ResponseFunctionToolCall",
        "FunctionCallOutput",
        "ResponseFunctionToolCall",
        "FunctionCallOutput",
        "ResponseOutputMessage",
    ]


def test_responses_items_become_references_with_their_calls_and_url_citations(
    tmp_path: Path,
) -> None:
    (session,), errors = convert("openai-responses", tmp_path, RESPONSES)
    assert errors == []
    assert session["id"] == "resp-lfp-01"
    assert session["question"].startswith("How long does a lithium iron phosphate")
    assert session["answer"].startswith("An LFP home battery lasts about three times")
    refs = session["trajectory"]
    # The reasoning item is the model's own: not a reference.
    assert [r["id"] for r in refs] == ["ws_01", "call_fetch_1", "call_news_1"]
    search, fetch, news = refs
    assert search["tool"] == "web_search"
    assert search["args"] == {"query": "LFP vs NMC home battery cycle life"}
    assert search["urls"] == [
        "https://www.example.org/stationary-battery-cycle-life/",
        "https://energy.example.com/nmc-degradation",
    ]
    assert "does not return it" in search["unreadable"]  # the pages' text is not in the log
    assert fetch["tool"] == "fetch_page" and fetch["url"] == (
        "https://example.org/stationary-battery-cycle-life"
    )
    assert "4,000 to 6,000 full cycles" in fetch["content"]
    # A search tool's JSON result list is kept whole, links and all.
    assert json.loads(news["content"])[0]["url"] == "https://news.example.com/lfp-6000-cycles"
    cites = session["citations"]
    assert [session["answer"][c["start"] : c["end"]] for c in cites] == [
        "4,000 to 6,000 full cycles",
        "keep 80 % of their capacity after 6,000 cycles",
        "Warranties of 10 years",
    ]
    assert cites[0]["reference"] == "call_fetch_1"  # www. and the trailing slash ignored
    assert cites[2]["reference"] is None  # a page the agent never opened
    assert session["metadata"] == {"agent": "battery-researcher", "sdk": "openai-agents"}


def test_responses_request_with_its_stored_response_reads_like_the_item_list(
    tmp_path: Path,
) -> None:
    from openai.types.responses import Response

    # The last request of the run sends the history as input (function outputs are inputs,
    # never outputs); its stored response holds the final message.
    items = fixture_record()["items"]
    response = {
        "id": "resp_0a1b2c",
        "object": "response",
        "created_at": 1733300000,
        "model": "gpt-4.1-2025-04-14",
        "output": items[-1:],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "status": "completed",
    }
    Response.model_validate(response)  # a stored response, as GET /v1/responses/{id} returns it
    stored = {"id": "resp-lfp-01", "input": items[:-1], "output": response}
    log = write_jsonl(tmp_path / "stored.jsonl", stored)
    (session,), errors = convert("openai-responses", tmp_path, log)
    (expected,), _ = convert("openai-responses", tmp_path / "..", RESPONSES)
    assert errors == []
    for key in ("question", "answer", "trajectory", "citations"):
        assert session[key] == expected[key]


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(args),
    }


def _output(call_id: str, output: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _said(text: str, msg_id: str = "msg_1") -> dict[str, Any]:
    return {
        "type": "message",
        "id": msg_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def test_responses_handoff_names_the_agent_of_the_calls_after_it(tmp_path: Path) -> None:
    # The Agents SDK's handoff: a transfer_to_<agent> call answered {"assistant": name}.
    items = [
        {"role": "user", "content": "Compare heat pump prices in Oslo and Bergen."},
        _call("call_h", "transfer_to_price_researcher", {}),
        _output("call_h", json.dumps({"assistant": "price_researcher"})),
        _call("call_p", "price_lookup", {"city": "Oslo"}),
        _output("call_p", "Oslo: 95,000 NOK installed."),
        _said("Oslo installs cost about 95,000 NOK."),
    ]
    log = write_jsonl(tmp_path / "handoff.jsonl", {"id": "h1", "items": items})
    (session,), errors = convert("openai-responses", tmp_path, log)
    assert errors == []
    (ref,) = session["trajectory"]  # the handoff itself pulled nothing
    assert (ref["id"], ref["agent"], ref["args"]) == (
        "call_p",
        "price_researcher",
        {"city": "Oslo"},
    )


def test_responses_bad_items_are_named_with_the_sdk_type_and_the_rest_converted(
    tmp_path: Path,
) -> None:
    good = fixture_record()
    no_call_id = copy.deepcopy(good) | {"id": "bad-1"}
    del no_call_id["items"][3]["call_id"]
    no_output = {"id": "bad-2", "items": [*good["items"][:4], good["items"][-1]]}
    unknown = {"id": "bad-3", "items": [*good["items"][:1], {"type": "computer_call", "id": "c"}]}
    log = write_jsonl(tmp_path / "mixed.jsonl", no_call_id, good, no_output, unknown)
    sessions, errors = convert("openai-responses", tmp_path, log)
    assert [s["id"] for s in sessions] == ["resp-lfp-01"]
    assert errors == [
        f"{log}:1: record 'bad-1': items[3] (function_call): call_id: missing",
        f"{log}:3: record 'bad-2': items[3]: function_call 'call_fetch_1' (fetch_page) has no "
        "result (no function_call_output with call_id 'call_fetch_1')",
        f"{log}:4: record 'bad-3': items[1]: item type 'computer_call' is not read by "
        "openai-responses",
    ]


# --- claude-agent ----------------------------------------------------------------------------


def _lines(path: Path = CLAUDE) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_claude_agent_fixture_messages_are_valid_anthropic_messages() -> None:
    from anthropic.types import Message, MessageParam

    assistant, user = TypeAdapter(Message), TypeAdapter(MessageParam)
    kinds = [line["type"] for line in _lines()]
    assert kinds.count("assistant") == 6 and kinds.count("user") == 4
    for line in [*_lines(), *_lines(FIXTURES / "claude_agent_turns.jsonl")]:
        if line["type"] == "assistant":
            assistant.validate_python(line["message"])
        elif line["type"] == "user":
            user.validate_python(line["message"])


def test_claude_agent_fixture_is_what_the_agent_sdk_parses() -> None:
    parser = pytest.importorskip("claude_agent_sdk._internal.message_parser")
    turns = [parser.parse_message(line) for line in _lines(FIXTURES / "claude_agent_turns.jsonl")]
    assert [type(m).__name__ for m in turns].count("ResultMessage") == 2
    parsed = [parser.parse_message(line) for line in _lines()]
    assert [type(m).__name__ for m in parsed] == [
        "SystemMessage",
        "UserMessage",
        *["AssistantMessage"] * 2,
        "UserMessage",
        *["AssistantMessage"] * 2,
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    sub_agent = [getattr(m, "parent_tool_use_id", None) for m in parsed]
    assert sub_agent.count("toolu_02Task") == 3


def test_claude_agent_stream_is_one_session_with_sub_agent_results_named_by_agent(
    tmp_path: Path,
) -> None:
    (session,), errors = convert("claude-agent", tmp_path, CLAUDE)
    assert errors == []
    assert session["id"] == "3f1b2c9e-7a44-4d1e-9a0b-5c2e8d6f1a10"  # the session_id
    assert session["question"].startswith("Does charging an electric car to 100 %")
    assert session["answer"].startswith("Yes, for most cars, but only a little.")
    refs = session["trajectory"]
    assert [(r["id"], r["tool"], r.get("agent")) for r in refs] == [
        ("toolu_01Search", "WebSearch", None),
        ("toolu_03Fetch", "WebFetch", "fact-checker"),  # made inside the Task sub-agent
        ("toolu_02Task", "Task", None),  # the sub-agent's report, as the main agent got it
    ]
    assert refs[1]["url"] == "https://ev.example.org/charging-habits-study"
    assert "https://maker.example.com/manual/charge-limit" in refs[0]["content"]
    meta = session["metadata"]
    assert meta["sub_agents"] == ["fact-checker"]
    assert meta["model"] == "claude-sonnet-4-5-20250929" and meta["cost_usd"] == 0.0841


def test_claude_code_transcript_with_a_sidechain_reads_like_the_stream(tmp_path: Path) -> None:
    # A Claude Code transcript: sessionId, isSidechain for the sub-agent's messages, no system
    # init or result line, and bookkeeping lines the converter passes over.
    transcript = [{"type": "summary", "summary": "EV charging", "leafUuid": "x"}]
    for line in _lines():
        if line["type"] not in ("user", "assistant"):
            continue
        entry = {k: v for k, v in line.items() if k not in ("session_id", "parent_tool_use_id")}
        entry |= {"sessionId": "t-1", "isSidechain": line["parent_tool_use_id"] is not None}
        transcript.append(entry)
    # A sidechain opens with the Task prompt as its user message.
    task = next(
        b for line in _lines() if line["type"] == "assistant"
        for b in line["message"]["content"] if b.get("name") == "Task"
    )  # fmt: skip
    first_side = next(i for i, e in enumerate(transcript) if e.get("isSidechain"))
    prompt = {"role": "user", "content": task["input"]["prompt"]}
    transcript.insert(first_side, {"type": "user", "message": prompt, "sessionId": "t-1",
                                   "isSidechain": True})  # fmt: skip
    log = write_jsonl(tmp_path / "transcript.jsonl", *transcript)
    (session,), errors = convert("claude-agent", tmp_path, log)
    (stream,), _ = convert("claude-agent", tmp_path / "..", CLAUDE)
    assert errors == []
    assert session["id"] == "t-1"
    assert session["question"] == stream["question"] and session["answer"] == stream["answer"]
    assert session["trajectory"] == stream["trajectory"]


def test_claude_agent_bad_lines_and_failed_runs_are_named_per_session(tmp_path: Path) -> None:
    good = _lines()
    failed = [
        {**line, "session_id": "s-failed"}
        for line in good
        if line["type"] in ("system", "user") and line.get("parent_tool_use_id") is None
    ][:2]
    failed.append(
        {"type": "result", "subtype": "error_max_turns", "is_error": True, "session_id": "s-failed",
         "duration_ms": 1, "duration_api_ms": 1, "num_turns": 30}
    )  # fmt: skip
    broken = copy.deepcopy(good[2]) | {"session_id": "s-broken"}
    del broken["message"]["model"]  # not a Messages API Message
    log = write_jsonl(tmp_path / "runs.jsonl", *good, *failed, broken)
    sessions, errors = convert("claude-agent", tmp_path, log)
    assert [s["id"] for s in sessions] == [good[0]["session_id"]]
    assert errors == [
        f"{log}:16: assistant message: model: missing",
        f"{log}: session 's-failed': the run ended in error (error_max_turns)",
        f"{log}: session 's-broken': some of its messages are in a line that could not be read "
        f"({log}:16)",
    ]


def test_claude_agent_tool_use_without_its_result_is_named_with_the_line(tmp_path: Path) -> None:
    lines = [line for line in _lines() if line.get("uuid") != _lines()[4]["uuid"]]
    log = write_jsonl(tmp_path / "cut.jsonl", *lines)
    sessions, errors = convert("claude-agent", tmp_path, log)
    assert sessions == []
    assert errors == [
        f"{log}: session '3f1b2c9e-7a44-4d1e-9a0b-5c2e8d6f1a10': line 4: tool_use "
        "'toolu_01Search' (WebSearch) has no result (no tool_result with tool_use_id "
        "'toolu_01Search')"
    ]


def test_claude_agent_stream_without_the_prompt_says_how_to_record_it(tmp_path: Path) -> None:
    lines = [line for line in _lines() if line.get("uuid") != _lines()[1]["uuid"]]
    log = write_jsonl(tmp_path / "no-prompt.jsonl", *lines)
    sessions, errors = convert("claude-agent", tmp_path, log)
    assert sessions == []
    assert errors == [
        f"{log}: session '3f1b2c9e-7a44-4d1e-9a0b-5c2e8d6f1a10': no user message with text (the "
        "question): `claude -p` does not echo the prompt; record with --input-format stream-json "
        "--replay-user-messages, or add the prompt as a user line"
    ]


def test_responses_hosted_tool_items_are_references(tmp_path: Path) -> None:
    from openai.types.responses import ResponseInputItemParam

    items: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "input_text", "text": "What do our notes say?"}]},
        {"type": "file_search_call", "id": "fs_1", "status": "completed",
         "queries": ["defrost cycle"],
         "results": [{"file_id": "file-1", "filename": "notes.md", "score": 0.9,
                      "text": "Defrost runs 5 to 10 minutes.", "attributes": {}}]},
        {"type": "file_search_call", "id": "fs_2", "status": "completed", "queries": ["cop"],
         "results": None},
        {"type": "mcp_call", "id": "mcp_1", "server_label": "wiki", "name": "lookup",
         "arguments": '{"page": "Heat pump"}', "output": "A heat pump moves heat."},
        {"type": "mcp_call", "id": "mcp_2", "server_label": "wiki", "name": "lookup",
         "arguments": "{}",
         "error": {"type": "mcp_protocol_error", "code": -32602, "message": "page not found"}},
        {"type": "web_search_call", "id": "ws_9", "status": "failed",
         "action": {"type": "open_page", "url": "https://example.org/x"}},
        _said("Defrost runs 5 to 10 minutes."),
    ]  # fmt: skip
    adapter: TypeAdapter[Any] = TypeAdapter(ResponseInputItemParam)
    for item in items:
        adapter.validate_python(item)
    log = write_jsonl(tmp_path / "hosted.jsonl", {"id": "hosted", "items": items})
    (session,), errors = convert("openai-responses", tmp_path, log)
    assert errors == []
    fs1, fs2, mcp1, mcp2, ws = session["trajectory"]
    assert (fs1["tool"], fs1["content"]) == (
        "file_search",
        "notes.md:\nDefrost runs 5 to 10 minutes.",
    )
    assert fs2["content"] == "" and "file_search_call.results" in fs2["unreadable"]
    assert (mcp1["content"], mcp1["server"], mcp1["args"]) == (
        "A heat pump moves heat.",
        "wiki",
        {"page": "Heat pump"},
    )
    assert mcp2["is_error"] is True
    assert mcp2["content"] == "MCP tool error (mcp_protocol_error): page not found"
    assert ws["is_error"] is True and ws["url"] == "https://example.org/x"
    assert "unreadable" not in ws


# --- several user turns: one session per answered turn (the turn rule every chat format shares)


def test_responses_two_turns_are_two_sessions_with_the_first_as_context(tmp_path: Path) -> None:
    log = FIXTURES / "openai_responses_turns.jsonl"
    from openai.types.responses import ResponseInputItemParam

    adapter: TypeAdapter[Any] = TypeAdapter(ResponseInputItemParam)
    for item in fixture_record(log)["items"]:
        adapter.validate_python(item)
    (first, second), errors = convert("openai-responses", tmp_path, log)
    assert errors == []
    assert (first["id"], second["id"]) == ("resp-heatpump-02#1", "resp-heatpump-02#2")
    assert first["question"].startswith("How much does it cost to install")
    assert second["question"] == "And in Bergen?"
    assert second["answer"].startswith("In Bergen the median installed price")
    assert [r["id"] for r in first["trajectory"]] == ["call_oslo"]
    assert [r["id"] for r in second["trajectory"]] == ["call_bergen"]  # only its own turn's
    assert second["conversation"] == [{"question": first["question"], "answer": first["answer"]}]
    (cite,) = second["citations"]
    assert second["answer"][cite["start"] : cite["end"]] == "about 152,000 NOK"
    assert cite["reference"] == "call_bergen"  # the url is in the price tool's JSON result
    last, _ = convert("openai-responses", tmp_path / "..", log, last_turn=True)
    assert [s["id"] for s in last] == ["resp-heatpump-02#2"]


def test_claude_agent_streaming_input_turns_are_sessions_of_one_session_id(
    tmp_path: Path,
) -> None:
    # Streaming input (--input-format stream-json --replay-user-messages): each user message is
    # echoed and each turn ends with its own result line.
    log = FIXTURES / "claude_agent_turns.jsonl"
    assert [line["type"] for line in _lines(log)].count("result") == 2
    (first, second), errors = convert("claude-agent", tmp_path, log)
    assert errors == []
    sid = "9d2e7c41-0b6a-4f0e-8e53-1f7a2b9c4d11"
    assert (first["id"], second["id"]) == (f"{sid}#1", f"{sid}#2")
    assert second["question"] == "And in Bergen?"
    assert [r["id"] for r in second["trajectory"]] == ["toolu_bergen"]
    assert second["conversation"][0]["answer"].startswith("A typical air-to-water heat pump")
