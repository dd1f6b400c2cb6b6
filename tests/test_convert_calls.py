"""``convert``: every tool call the agent made is accounted for, in every format.

A call whose result the log does not hold is an error naming the record (``file:line`` or the
trace) and the call id, never a reference silently left out; legacy OpenAI function calling
(``function_call`` + ``role: "function"``) is read like tool calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from research_judge.cli import main
from research_judge.errors import InputFileError
from research_judge.sessions.convert import convert_files


def write_jsonl(path: Path, *lines: Any) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def convert(
    fmt: str, tmp_path: Path, log: Path
) -> tuple[list[dict[str, Any]], list[InputFileError]]:
    out = tmp_path / "sessions.jsonl"
    stats = convert_files(fmt, [log], out)
    lines = out.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines], stats.errors


# --- OpenAI Chat Completions ------------------------------------------------------------------


def _chat_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


def _chat_record(session_id: str, answered: list[str]) -> dict[str, Any]:
    calls = [
        _chat_call("call_a", "web_fetch", {"url": "https://a.test"}),
        _chat_call("call_b", "web_search", {"q": "heat pumps"}),
    ]
    results = [{"role": "tool", "tool_call_id": c, "content": f"result of {c}"} for c in answered]
    return {
        "id": session_id,
        "messages": [
            {"role": "user", "content": "Q?"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            *results,
            {"role": "assistant", "content": "A."},
        ],
    }


def test_openai_chat_tool_call_without_a_tool_message_is_named_with_its_call_id(
    tmp_path: Path,
) -> None:
    log = write_jsonl(
        tmp_path / "chat.jsonl",
        _chat_record("half", ["call_a"]),
        _chat_record("none", []),
        _chat_record("whole", ["call_b", "call_a"]),
    )
    sessions, errors = convert("openai-chat", tmp_path, log)
    assert [s["id"] for s in sessions] == ["whole"]
    assert [r["id"] for r in sessions[0]["trajectory"]] == ["call_b", "call_a"]
    assert [str(e) for e in errors] == [
        f"{log}:1: record 'half': messages[1]: tool call 'call_b' (web_search) has no result "
        "(no tool message with tool_call_id 'call_b')",
        f"{log}:2: record 'none': messages[1]: tool call 'call_a' (web_fetch) has no result "
        "(no tool message with tool_call_id 'call_a'); messages[1]: tool call 'call_b' "
        "(web_search) has no result (no tool message with tool_call_id 'call_b')",
    ]
    assert main(["convert", "openai-chat", str(log), "--out", str(tmp_path / "o.jsonl")]) == 2


def test_openai_chat_legacy_function_messages_are_references_paired_with_their_call(
    tmp_path: Path,
) -> None:
    def asked(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        call = {"name": name, "arguments": json.dumps(arguments)}
        return {"role": "assistant", "content": None, "function_call": call}

    record = {
        "id": "legacy",
        "messages": [
            {"role": "system", "content": "You research."},
            {"role": "user", "content": "Q?"},
            asked("fetch_page", {"url": "https://b.test/report"}),
            {"role": "function", "name": "fetch_page", "content": "report text"},
            asked("search", {"q": "x"}),
            {"role": "function", "name": "search", "content": "hits"},
            {"role": "assistant", "content": "A."},
        ],
    }
    unanswered = {"id": "unanswered", "messages": record["messages"][:3] + record["messages"][-1:]}
    log = write_jsonl(tmp_path / "legacy.jsonl", record, unanswered)
    sessions, errors = convert("openai-chat", tmp_path, log)
    (session,) = sessions
    fetched, searched = session["trajectory"]
    assert fetched["id"] == "function-3" and searched["id"] == "function-5"
    assert fetched["content"] == "report text" and searched["content"] == "hits"
    assert fetched["tool"] == "fetch_page" and fetched["args"] == {"url": "https://b.test/report"}
    assert fetched["url"] == "https://b.test/report"
    assert fetched["title"] == "fetch_page(url=https://b.test/report)"
    assert searched["title"] == "search(q=x)"
    assert [str(e) for e in errors] == [
        f"{log}:2: record 'unanswered': messages[2]: function call (fetch_page) has no result "
        "(no 'function' message after it)"
    ]


def test_openai_chat_function_message_without_a_call_is_still_a_reference(tmp_path: Path) -> None:
    record = {
        "id": "bare",
        "messages": [
            {"role": "user", "content": "Q?"},
            {"role": "function", "name": "lookup", "content": "looked up"},
            {"role": "assistant", "content": "A."},
        ],
    }
    (session,), errors = convert("openai-chat", tmp_path, write_jsonl(tmp_path / "b.jsonl", record))
    assert errors == []
    (ref,) = session["trajectory"]
    assert (ref["id"], ref["tool"], ref["content"]) == ("function-1", "lookup", "looked up")


# --- Anthropic Messages -------------------------------------------------------------------------


def _anthropic_record(session_id: str, answered: list[str]) -> dict[str, Any]:
    uses = [
        {"type": "tool_use", "id": "toolu_a", "name": "fetch", "input": {"url": "https://a.test"}},
        {"type": "tool_use", "id": "toolu_b", "name": "search", "input": {"q": "x"}},
    ]
    results = [
        {"type": "tool_result", "tool_use_id": c, "content": f"result {c}"} for c in answered
    ]
    return {
        "id": session_id,
        "messages": [
            {"role": "user", "content": "Q?"},
            {"role": "assistant", "content": uses},
            {"role": "user", "content": results or "go on"},
            {"role": "assistant", "content": "A."},
        ],
    }


def test_anthropic_tool_use_without_a_tool_result_is_named_with_its_call_id(
    tmp_path: Path,
) -> None:
    log = write_jsonl(
        tmp_path / "a.jsonl",
        _anthropic_record("half", ["toolu_b"]),
        _anthropic_record("whole", ["toolu_a", "toolu_b"]),
    )
    sessions, errors = convert("anthropic", tmp_path, log)
    assert [s["id"] for s in sessions] == ["whole"]
    assert [str(e) for e in errors] == [
        f"{log}:1: record 'half': messages[1]: tool_use 'toolu_a' (fetch) has no result "
        "(no result block with tool_use_id 'toolu_a')"
    ]


def test_anthropic_other_server_and_mcp_tool_results_answer_their_calls(tmp_path: Path) -> None:
    code = {"type": "server_tool_use", "id": "srvtoolu_c", "name": "code_execution"}
    code["input"] = {"code": "print(6*7)"}
    code_result = {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_c"}
    code_result["content"] = {"type": "code_execution_result", "stdout": "42\n", "return_code": 0}
    mcp = {"type": "mcp_tool_use", "id": "mcptoolu_d", "name": "wiki", "server_name": "w"}
    mcp["input"] = {"page": "Heat pump"}
    mcp_result = {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_d"}
    mcp_result["content"] = [{"type": "text", "text": "A heat pump moves heat."}]
    record = {
        "id": "servers",
        "messages": [
            {"role": "user", "content": "Q?"},
            {"role": "assistant", "content": [code, code_result, mcp, mcp_result]},
            {"role": "assistant", "content": "A."},
        ],
    }
    (session,), errors = convert("anthropic", tmp_path, write_jsonl(tmp_path / "s.jsonl", record))
    assert errors == []
    ran, looked_up = session["trajectory"]
    assert ran["id"] == "srvtoolu_c" and ran["tool"] == "code_execution"
    assert json.loads(ran["content"])["stdout"] == "42\n"
    assert looked_up["id"] == "mcptoolu_d" and looked_up["title"] == "wiki(page=Heat pump)"
    assert looked_up["content"] == "A heat pump moves heat."


# --- OpenTelemetry GenAI ------------------------------------------------------------------------


def _span(sid: str, parent: str | None, op: str, start: int, **attrs: Any) -> dict[str, Any]:
    attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
    for key, value in attrs.items():
        text = json.dumps(value)
        attributes.append({"key": key.replace("__", "."), "value": {"stringValue": text}})
    return {
        "traceId": "t1",
        "spanId": sid,
        "parentSpanId": parent or "",
        "name": op,
        "startTimeUnixNano": str(start),
        "attributes": attributes,
    }


def test_otel_tool_call_part_with_no_result_anywhere_is_named_like_a_result_less_span(
    tmp_path: Path,
) -> None:
    call = {"type": "tool_call", "id": "c7", "name": "web_fetch", "arguments": {"url": "u"}}
    spans = [
        _span("root", None, "invoke_agent", 1),
        _span(
            "ch1",
            "root",
            "chat",
            2,
            gen_ai__input__messages=[{"role": "user", "parts": [{"type": "text", "content": "Q"}]}],
            gen_ai__output__messages=[{"role": "assistant", "parts": [call]}],
        ),
        _span(
            "ch2",
            "root",
            "chat",
            3,
            gen_ai__output__messages=[
                {"role": "assistant", "parts": [{"type": "text", "content": "A."}]}
            ],
        ),
    ]
    log = write_jsonl(tmp_path / "t.jsonl", {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    sessions, (error,) = convert("otel", tmp_path, log)
    assert sessions == []
    assert str(error).startswith(
        f"{log}: trace t1: tool call 'c7' (web_fetch, agent invoke_agent) has no recorded result"
    )


# --- OpenInference ------------------------------------------------------------------------------


def _oi_span(sid: str, parent: str | None, kind: str, start: int, **attrs: str) -> dict[str, Any]:
    attributes = [{"key": "openinference.span.kind", "value": {"stringValue": kind}}]
    attributes += [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]
    return {
        "traceId": f"oi-{kind.lower()}-{sid}" if parent is None else "",
        "spanId": sid,
        "parentSpanId": parent or "",
        "name": f"{kind.lower()}-{sid}",
        "startTimeUnixNano": str(start),
        "attributes": attributes,
    }


def _oi_trace(trace: str, *, tool_span: bool) -> list[dict[str, Any]]:
    out = "llm.output_messages.0.message."
    call = out + "tool_calls.0.tool_call."
    spans = [
        _oi_span("lead", None, "AGENT", 1, **{"agent.name": "lead", "input.value": "Q?"}),
        _oi_span(
            "l1",
            "lead",
            "LLM",
            2,
            **{
                out + "role": "assistant",
                call + "id": "call_9",
                call + "function.name": "web_fetch",
                call + "function.arguments": '{"url": "https://c.test"}',
            },
        ),
        _oi_span("l2", "lead", "LLM", 4, **{out + "role": "assistant", out + "content": "A."}),
    ]
    if tool_span:
        tool = {"tool.name": "web_fetch", "tool_call.id": "call_9", "output.value": "page"}
        spans.append(_oi_span("t", "lead", "TOOL", 3, **tool))
    for span in spans:
        span["traceId"] = trace
    return spans


def test_openinference_tool_call_with_no_tool_span_or_message_is_named(tmp_path: Path) -> None:
    def export(spans: list[dict[str, Any]]) -> dict[str, Any]:
        return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}

    log = write_jsonl(
        tmp_path / "oi.jsonl",
        export(_oi_trace("t-lost", tool_span=False)),
        export(_oi_trace("t-whole", tool_span=True)),
    )
    sessions, errors = convert("openinference", tmp_path, log)
    (session,) = sessions
    assert session["id"] == "t-whole"
    (ref,) = session["trajectory"]
    assert (ref["id"], ref["content"], ref["url"]) == ("call_9", "page", "https://c.test")
    assert [str(e) for e in errors] == [
        f"{log}: trace t-lost: tool call 'call_9' (web_fetch, agent lead) has no recorded result "
        "(no TOOL span or tool message with its id)"
    ]


def test_openai_chat_a_function_call_followed_by_another_call_is_named(tmp_path: Path) -> None:
    def asked(name: str) -> dict[str, Any]:
        call = {"name": name, "arguments": "{}"}
        return {"role": "assistant", "content": None, "function_call": call}

    record = {
        "id": "skipped",
        "messages": [
            {"role": "user", "content": "Q?"},
            asked("first"),
            asked("second"),
            {"role": "function", "name": "second", "content": "r"},
            {"role": "assistant", "content": "A."},
        ],
    }
    log = write_jsonl(tmp_path / "l.jsonl", record)
    sessions, errors = convert("openai-chat", tmp_path, log)
    assert sessions == []
    assert [str(e) for e in errors] == [
        f"{log}:1: record 'skipped': messages[1]: function call (first) has no result "
        "(no 'function' message after it)"
    ]
