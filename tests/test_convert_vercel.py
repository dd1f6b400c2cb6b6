"""``convert otel`` on the Vercel AI SDK's own ``ai.*`` spans: as the OpenTelemetry JS SDK's span
array (``fixtures/agent_logs/vercel_spans.json``, the ``ConsoleSpanExporter`` shape) and as the
same spans in OTLP JSON; and the OpenInference fix for tool calls held in an LLM span's input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from research_judge.sessions.convert import ConvertOptions, convert_files

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_logs"
SPANS = FIXTURES / "vercel_spans.json"


def convert(fmt: str, tmp_path: Path, *inputs: Path) -> tuple[list[dict[str, Any]], list[str]]:
    out = tmp_path / "sessions.jsonl"
    stats = convert_files(fmt, list(inputs), out, ConvertOptions())
    sessions = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return sessions, [str(e) for e in stats.errors]


def js_spans() -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = json.loads(SPANS.read_text(encoding="utf-8"))
    return spans


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def as_otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """The same spans as the OTLP exporter sends them (the collector's file exporter)."""

    def otlp(span: dict[str, Any]) -> dict[str, Any]:
        parent = span["parentSpanContext"]
        return {
            "traceId": span["traceId"],
            "spanId": span["id"],
            "parentSpanId": parent["spanId"] if parent else "",
            "name": span["name"],
            "startTimeUnixNano": str(span["timestamp"] * 1000),
            "attributes": [
                {"key": k, "value": _any_value(v)} for k, v in span["attributes"].items()
            ],
        }

    resource = [
        {"key": k, "value": _any_value(v)} for k, v in spans[0]["resource"]["attributes"].items()
    ]
    scope = {"spans": [otlp(s) for s in spans]}
    return {"resourceSpans": [{"resource": {"attributes": resource}, "scopeSpans": [scope]}]}


def test_vercel_span_array_is_one_session_with_the_sub_agents_calls(tmp_path: Path) -> None:
    (session,), errors = convert("otel", tmp_path, SPANS)
    assert errors == []
    assert session["id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert session["question"] == (
        "Does a dishwasher use less water than washing the same dishes by hand?"
    )  # the root call's ai.prompt
    assert session["answer"].startswith("Yes. A full load in a modern dishwasher")
    refs = session["trajectory"]
    assert [(r["id"], r["tool"], r["agent"]) for r in refs] == [
        ("call_search_1", "searchWeb", "research-assistant"),
        ("call_expert_1", "askExpert", "research-assistant"),
        ("call_fetch_1", "fetchPage", "fact-checker"),  # inside askExpert's own generateText
    ]
    assert refs[2]["url"] == "https://labels.example.net/dishwashers"
    assert refs[1]["content"].startswith("Modern machines use 9 to 10 litres")  # a JSON string
    results = json.loads(refs[0]["content"])  # the search tool's result list, links and all
    assert results[0]["url"] == "https://water.example.org/dishwashing-study"
    meta = session["metadata"]
    assert meta["agent"] == "research-assistant" and meta["sub_agents"] == ["fact-checker"]
    assert meta["service"] == "dishwasher-research" and meta["userId"] == "u-1042"


def test_vercel_spans_as_otlp_json_read_the_same(tmp_path: Path) -> None:
    log = tmp_path / "otlp.jsonl"
    log.write_text(json.dumps(as_otlp(js_spans())) + "\n", encoding="utf-8")
    (session,), errors = convert("otel", tmp_path, log)
    (expected,), _ = convert("otel", tmp_path / "..", SPANS)
    assert errors == []
    assert session == expected


def test_vercel_span_array_one_span_per_line_reads_the_same(tmp_path: Path) -> None:
    log = tmp_path / "spans.jsonl"
    log.write_text("".join(json.dumps(s) + "\n" for s in js_spans()), encoding="utf-8")
    (session,), errors = convert("otel", tmp_path, log)
    assert errors == [] and len(session["trajectory"]) == 3


def test_vercel_tool_call_without_a_result_is_named(tmp_path: Path) -> None:
    spans = js_spans()
    for span in spans:
        if span["attributes"].get("ai.toolCall.id") == "call_fetch_1":
            del span["attributes"]["ai.toolCall.result"]  # the tool threw, or recordOutputs off
            span["attributes"]["ai.toolCall.id"] = "call_fetch_9"
    log = tmp_path / "spans.json"
    log.write_text(json.dumps(spans), encoding="utf-8")
    sessions, errors = convert("otel", tmp_path, log)
    assert sessions == []
    assert errors == [
        f"{log}: trace 4bf92f3577b34da6a3ce929d0e0e4736: tool call 'call_fetch_9' (fetchPage, "
        "agent fact-checker) has no recorded result (no ai.toolCall.result or tool-result part: "
        "did the tool fail, or is recordOutputs off?)"
    ]


def test_vercel_tool_results_only_in_the_prompt_messages_are_references(tmp_path: Path) -> None:
    # With no ai.toolCall spans kept, the next model call's ai.prompt.messages still hold the
    # calls and their results (AI SDK 5's output {"type", "value"}).
    spans = [
        s
        for s in js_spans()
        if s["name"] != "ai.toolCall"
        and s["attributes"].get("ai.telemetry.functionId") != "fact-checker"  # askExpert's run
    ]
    log = tmp_path / "spans.json"
    log.write_text(json.dumps(spans), encoding="utf-8")
    (session,), errors = convert("otel", tmp_path, log)
    assert errors == []
    refs = session["trajectory"]
    assert [(r["id"], r["tool"]) for r in refs] == [
        ("call_search_1", "searchWeb"),
        ("call_expert_1", "askExpert"),
    ]
    assert refs[0]["args"] == {"query": "dishwasher vs hand washing water use"}
    assert json.loads(refs[0]["content"])[1]["title"] == "Efficient dishwashing tips"  # fmt: skip


# --- OpenInference: a tool call held in an LLM span's input messages -------------------------


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def test_openinference_tool_call_in_input_messages_keeps_its_name_and_arguments(
    tmp_path: Path,
) -> None:
    # The LLM span that made the call is not in the trace; the next one's input history holds
    # the assistant's tool call and the tool's answer.
    m = "llm.input_messages."
    llm = [
        _attr("openinference.span.kind", "LLM"),
        _attr(f"{m}0.message.role", "user"),
        _attr(f"{m}0.message.content", "What retains stormwater?"),
        _attr(f"{m}1.message.role", "assistant"),
        _attr(f"{m}1.message.tool_calls.0.tool_call.id", "call_9"),
        _attr(f"{m}1.message.tool_calls.0.tool_call.function.name", "fetch_page"),
        _attr(f"{m}1.message.tool_calls.0.tool_call.function.arguments", '{"url": "https://r.org/g"}'),
        _attr(f"{m}2.message.role", "tool"),
        _attr(f"{m}2.message.tool_call_id", "call_9"),
        _attr(f"{m}2.message.content", "Green roofs retain half the rain."),
        _attr("llm.output_messages.0.message.role", "assistant"),
        _attr("llm.output_messages.0.message.content", "Green roofs retain half."),
    ]  # fmt: skip
    span = {"traceId": "t9", "spanId": "s1", "name": "ChatOpenAI", "startTimeUnixNano": "1",
            "attributes": llm}  # fmt: skip
    log = tmp_path / "oi.jsonl"
    log.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    (session,), errors = convert("openinference", tmp_path, log)
    assert errors == []
    (ref,) = session["trajectory"]
    assert (ref["tool"], ref["args"], ref["url"]) == (
        "fetch_page",
        {"url": "https://r.org/g"},
        "https://r.org/g",
    )
    assert ref["title"] == "fetch_page(url=https://r.org/g)"
