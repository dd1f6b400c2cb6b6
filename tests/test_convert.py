"""``research-judge convert``: agent logs in three formats -> sessions the judge can grade."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import convert as convert_cli
from research_judge.cli import main
from research_judge.errors import ConfigError, InputFileError
from research_judge.sessions import iter_sessions
from research_judge.sessions.convert import (
    FORMATS,
    ConvertOptions,
    compile_stub_pattern,
    convert_files,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOGS = LOGS_DIR = FIXTURES / "agent_logs"
STUB = r"\[stored: r2://agent-results/(?P<ref>\S+), \d+ chars\]"


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def convert(
    fmt: str, tmp_path: Path, *inputs: Path, stub: str | None = None
) -> tuple[list[dict[str, Any]], list[InputFileError]]:
    out = tmp_path / "sessions.jsonl"
    options = ConvertOptions(stub_pattern=compile_stub_pattern(stub))
    stats = convert_files(fmt, list(inputs), out, options)
    sessions = read(out)
    assert stats.sessions == len(sessions)
    return sessions, stats.errors


def write_jsonl(path: Path, *lines: Any) -> Path:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


def test_cli_formats_are_the_library_formats() -> None:
    assert convert_cli.FORMATS == FORMATS


# --- OpenTelemetry --------------------------------------------------------------------------


def test_otel_trace_with_two_sub_agents_keeps_every_reference_with_its_provenance(
    tmp_path: Path,
) -> None:
    (session,), errors = convert("otel", tmp_path, LOGS / "otel_traces.jsonl")
    assert errors == []
    assert session["id"] == "conv-heatpump-01"  # gen_ai.conversation.id, not the trace id
    assert session["question"].startswith("How much does a cold-climate heat pump")
    assert session["answer"].startswith("At -15 °C a cold-climate heat pump still works")
    refs = session["trajectory"]
    # Time order across the parallel sub-agents; call_m1 exists only as a tool_call_response part.
    assert [r["id"] for r in refs] == ["call_s1", "call_f2", "call_f1", "call_m1"]
    assert [(r["agent"], r["tool"]) for r in refs] == [
        ("task-agent-1", "web_search"),
        ("task-agent-2", "web_fetch"),
        ("task-agent-1", "web_fetch"),
        ("task-agent-2", "read_notes"),
    ]
    assert refs[2]["url"] == "https://example.org/ccashp-field-study"
    assert refs[2]["args"] == {"url": "https://example.org/ccashp-field-study"}
    assert refs[3]["title"] == "read_notes(topic=defrost)"
    assert "Reverse-cycle defrost" in refs[3]["content"]
    assert session["metadata"]["sub_agents"] == ["task-agent-1", "task-agent-2"]
    assert session["metadata"]["trace_id"] == "5b8efff798038103d269b633813fc60c"


def _span(
    sid: str, parent: str | None, op: str, start: int, trace: str = "t1", **attrs: Any
) -> dict[str, Any]:
    attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
    for key, value in attrs.items():
        text = value if isinstance(value, str) else json.dumps(value)
        attributes.append({"key": key.replace("__", "."), "value": {"stringValue": text}})
    return {
        "traceId": trace,
        "spanId": sid,
        "parentSpanId": parent or "",
        "name": op,
        "startTimeUnixNano": str(start),
        "attributes": attributes,
    }


def _export(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]}


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "parts": [{"type": "text", "content": text}]}]


def _out(text: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]


def _simple_trace(trace: str, *, result: bool = True) -> dict[str, Any]:
    tool: dict[str, Any] = {"gen_ai__tool__call__id": "c1", "gen_ai__tool__name": "search"}
    if result:
        tool["gen_ai__tool__call__result"] = "page text"
    return _export(
        _span("root", None, "invoke_agent", 1, trace),
        _span("ch1", "root", "chat", 2, trace, gen_ai__input__messages=_user("Q?")),
        _span("tool", "root", "execute_tool", 3, trace, **tool),
        _span("ch2", "root", "chat", 4, trace, gen_ai__output__messages=_out("A.")),
    )


def test_otel_without_conversation_id_uses_the_trace_id_and_bad_lines_are_named(
    tmp_path: Path,
) -> None:
    log = write_jsonl(
        tmp_path / "traces.jsonl",
        _simple_trace("trace-a"),
        "{not json",
        {"no": "spans"},
        _simple_trace("trace-b", result=False),
        _simple_trace("trace-c"),
    )
    sessions, errors = convert("otel", tmp_path, log)
    assert [s["id"] for s in sessions] == ["trace-a", "trace-c"]
    assert sessions[0]["question"] == "Q?" and sessions[0]["answer"] == "A."
    assert [s["trajectory"][0]["content"] for s in sessions] == ["page text", "page text"]
    messages = [str(e) for e in errors]
    assert messages[0].startswith(f"{log}:2: not valid JSON")
    assert messages[1] == f"{log}:3: not an OTLP export (no 'resourceSpans' list)"
    assert (
        "trace trace-b: tool call 'c1' (search, agent invoke_agent) has no recorded result"
        in messages[2]
    )


def test_otel_trace_spread_over_files_is_one_session(tmp_path: Path) -> None:
    spans = _simple_trace("t9")["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first = write_jsonl(tmp_path / "a.jsonl", _export(*spans[:2]))
    # A pretty-printed export (one JSON document over many lines) is read whole.
    second = tmp_path / "b.json"
    second.write_text(json.dumps(_export(*spans[2:]), indent=2), encoding="utf-8")
    (session,), errors = convert("otel", tmp_path, first, second)
    assert errors == [] and session["id"] == "t9" and len(session["trajectory"]) == 1


def test_otel_messages_as_structured_attribute_values(tmp_path: Path) -> None:
    # Some exporters write gen_ai.input.messages as an OTLP array of kvlists, not a JSON string.
    def kv(**values: Any) -> dict[str, Any]:
        return {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in values.items()]}}

    def message(role: str, kind: str, **part: Any) -> dict[str, Any]:
        fields = {k: {"stringValue": v} for k, v in part.items()}
        parts = {"arrayValue": {"values": [kv(type={"stringValue": kind}, **fields)]}}
        return kv(role={"stringValue": role}, parts=parts)

    chat = _span("ch", None, "chat", 1, "ts")
    chat["attributes"] += [
        {"key": "gen_ai.input.messages", "value": {"arrayValue": {"values": [
            message("user", "text", content="Q?"),
            message("tool", "tool_call_response", id="k1", response="result text"),
        ]}}},
        {"key": "gen_ai.output.messages", "value": {"arrayValue": {"values": [
            message("assistant", "text", content="A."),
        ]}}},
        {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-7"}},
    ]  # fmt: skip
    (session,), errors = convert("otel", tmp_path, write_jsonl(tmp_path / "t.jsonl", _export(chat)))
    assert errors == []
    assert (session["id"], session["question"], session["answer"]) == ("conv-7", "Q?", "A.")
    assert [(r["id"], r["content"]) for r in session["trajectory"]] == [("k1", "result text")]


def test_otel_trace_without_a_root_chat_span_is_named_by_trace_id(tmp_path: Path) -> None:
    log = write_jsonl(tmp_path / "t.jsonl", _export(_span("root", None, "invoke_agent", 1, "tx")))
    sessions, (error,) = convert("otel", tmp_path, log)
    assert sessions == []
    assert (
        str(error)
        == f"{log}: trace tx: no chat span of the root agent (gen_ai.operation.name 'chat')"
    )


# --- OpenAI Chat Completions ------------------------------------------------------------------


def test_openai_chat_tool_messages_become_references_and_stubs_content_ref(tmp_path: Path) -> None:
    (session,), errors = convert("openai-chat", tmp_path, LOGS / "openai_chat.jsonl", stub=STUB)
    assert errors == []
    assert session["question"].startswith("How large were US honey bee colony losses")
    assert session["answer"].startswith("Beekeepers in the US lost 48.2%")
    offloaded, inline = session["trajectory"]
    assert offloaded == {
        "id": "call_a1",
        "content_ref": "oai-bees-01/call_a1.txt",
        "title": "web_fetch(url=https://example.org/colony-survey)",
        "url": "https://example.org/colony-survey",
        "tool": "web_fetch",
        "args": {"url": "https://example.org/colony-survey"},
    }
    assert inline["id"] == "call_a2" and inline["content"].startswith("Varroa management guide")
    assert session["metadata"] == {
        "agent_version": "v12",
        "domain": "biology",
        "provider": "openai",
    }


def test_openai_chat_without_stub_pattern_keeps_the_stub_as_text(tmp_path: Path) -> None:
    (session,), _ = convert("openai-chat", tmp_path, LOGS / "openai_chat.jsonl")
    assert session["trajectory"][0]["content"].startswith("[stored: r2://")


def test_openai_chat_url_citations_are_linked_to_references(tmp_path: Path) -> None:
    answer = "Cold cuts range by 30%."
    record = {
        "id": "o1",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Why?"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "k1", "type": "function",
                     "function": {"name": "fetch", "arguments": '{"url": "https://x.org/a/"}'}},
                ],
            },
            {"role": "tool", "tool_call_id": "k1", "content": "Range falls 30% in cold."},
            {
                "role": "assistant",
                "content": answer,
                "annotations": [
                    {"type": "url_citation",
                     "url_citation": {"start_index": 0, "end_index": 22, "url": "http://x.org/a",
                                      "title": "A"}},
                    {"type": "url_citation",
                     "url_citation": {"start_index": 0, "end_index": 22, "url": "https://y.org/"}},
                ],
            },
        ],
    }  # fmt: skip
    (session,), _ = convert("openai-chat", tmp_path, write_jsonl(tmp_path / "o.jsonl", record))
    assert session["trajectory"][0]["url"] == "https://x.org/a/"
    assert [(c["start"], c["end"], c["reference"]) for c in session["citations"]] == [
        (0, 22, "k1"),  # http/https and the trailing slash do not matter
        (0, 22, None),  # a page the agent never pulled
    ]


def test_openai_chat_bad_records_are_named_and_the_rest_converted(tmp_path: Path) -> None:
    good = read(LOGS / "openai_chat.jsonl")[0]
    log = write_jsonl(
        tmp_path / "chat.jsonl",
        good,
        "[1, 2]",
        {"id": "x1"},
        {
            "id": "x2",
            "messages": [{"role": "user", "content": "Q"}, {"role": "tool", "content": "t"}],
        },
        {"id": "x3", "messages": [{"role": "user", "content": "Q"}]},
        {"id": "x4", "messages": [{"role": "assistant", "content": "A"}]},
        good,
    )
    out = tmp_path / "sessions.jsonl"
    code = main(["convert", "openai-chat", str(log), "--out", str(out), "--quiet"])
    assert code == 2
    assert [s["id"] for s in read(out)] == ["oai-bees-01"]
    stats = convert_files("openai-chat", [log], tmp_path / "again.jsonl")
    assert [str(e) for e in stats.errors] == [
        f"{log}:2: expected a JSON object, got list",
        f"{log}:3: record 'x1': missing 'messages'",
        f"{log}:4: record 'x2': messages[1]: tool message without a tool_call_id",
        f"{log}:5: record 'x3': no assistant message with text (the answer)",
        f"{log}:6: record 'x4': no user message with text (the question)",
        f"{log}:7: record 'oai-bees-01': duplicate session id 'oai-bees-01'",
    ]


# --- Anthropic Messages -------------------------------------------------------------------------


def test_anthropic_tool_and_server_tool_results_become_references(tmp_path: Path) -> None:
    (session,), errors = convert("anthropic", tmp_path, LOGS / "anthropic.jsonl")
    assert errors == []
    search, fetch, client_tool = session["trajectory"]
    assert search["id"] == "srvtoolu_01" and search["tool"] == "web_search"
    # Encrypted page content is named as unreadable, never passed on as text.
    assert search["unreadable"] == "encrypted page content of 2 search result(s)"
    assert "EqQB" not in search["content"]
    assert search["urls"] == [
        "https://example.org/no-registrations-2023",
        "https://example.com/ev-news/norway-petrol",
    ]
    assert fetch["id"] == "srvtoolu_02" and fetch["title"] == "Norway car registrations 2023"
    assert fetch["url"] == "https://example.org/no-registrations-2023"
    assert "82.4% were battery-electric" in fetch["content"]
    assert (
        client_tool["id"] == "toolu_03"
        and client_tool["title"] == "fleet_stats(country=NO, year=2023)"
    )
    assert client_tool["content"].endswith("of which 24% battery-electric.")
    answer = session["answer"]
    first, second = session["citations"]
    # Each citation covers its text block of the answer and points at a trajectory reference.
    assert answer[first["start"] : first["end"]] == (
        "82.4% of new passenger cars registered in Norway were battery-electric"
    )
    assert first["reference"] == "srvtoolu_02"  # by the fetched document's title
    assert second["reference"] == "srvtoolu_01"  # by a url in the search results


def test_anthropic_error_blocks_and_bad_records(tmp_path: Path) -> None:
    record = {
        "id": "a2",
        "messages": [
            {"role": "user", "content": "Q?"},
            {"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "s1", "name": "web_fetch",
                 "input": {"url": "https://x.org"}},
                {"type": "web_fetch_tool_result", "tool_use_id": "s1",
                 "content": {"type": "web_fetch_tool_error", "error_code": "url_not_accessible"}},
                {"type": "text", "text": "A."},
            ]},
        ],
    }  # fmt: skip
    bad = {"id": "a3", "messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}
    log = write_jsonl(tmp_path / "a.jsonl", record, bad, {"id": "a4", "messages": "hi"})
    (session,), errors = convert("anthropic", tmp_path, log)
    (ref,) = session["trajectory"]
    assert ref["content"] == "web fetch failed: url_not_accessible" and ref["is_error"] is True
    assert [str(e) for e in errors] == [
        f"{log}:2: record 'a3': messages[0]: tool_result block without a tool_use_id",
        f"{log}:3: record 'a4': 'messages' must be a list, got str",
    ]


# --- output safety and options ------------------------------------------------------------------


def test_converted_sessions_are_valid_grade_input(tmp_path: Path) -> None:
    for fmt, log in (
        ("otel", "otel_traces.jsonl"),
        ("anthropic", "anthropic.jsonl"),
        ("openai-chat", "openai_chat.jsonl"),
    ):
        out = tmp_path / f"{fmt}.jsonl"
        assert (
            main(["convert", fmt, str(LOGS / log), "--out", str(out), "--stub-pattern", STUB]) == 0
        )
        assert all(not isinstance(s, InputFileError) for _, s in iter_sessions(out))


def test_output_that_is_an_input_is_refused_and_left_alone(tmp_path: Path) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_bytes((LOGS / "openai_chat.jsonl").read_bytes())
    before = log.read_bytes()
    with pytest.raises(ConfigError, match="is one of the inputs"):
        convert_files("openai-chat", [log], tmp_path / "." / "chat.jsonl")
    assert log.read_bytes() == before


def test_an_interrupted_conversion_leaves_the_previous_output_untouched(tmp_path: Path) -> None:
    out = tmp_path / "sessions.jsonl"
    earlier = '{"id": "earlier", "question": "q", "answer": "a", "trajectory": []}\n'
    out.write_text(earlier, encoding="utf-8")  # an earlier conversion: replaceable
    log = write_jsonl(tmp_path / "bad.jsonl", "not json")

    def stop(error: InputFileError) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        convert_files("openai-chat", [log], out, on_error=stop)
    assert out.read_text(encoding="utf-8") == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "sessions.jsonl"]


def test_stub_pattern_must_name_a_ref_group(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["convert", "otel", "x.jsonl", "--out", "y.jsonl", "--stub-pattern", r"\[(\S+)\]"])
    assert code == 2
    assert "needs a named group 'ref'" in capsys.readouterr().err


def test_missing_input_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["convert", "anthropic", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")]
    )
    assert code == 2
    assert "nope.jsonl: no such file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# --- the demo's agent logs, converted and graded by replay ------------------------------------


def test_agent_log_fixtures_grade_by_replay_with_the_expected_citation_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES.parent))  # the fixtures package, as the demo sees it
    from fixtures.agent_logs import LOGS, STUB_PATTERN
    from research_judge.results.model import read_results

    sessions = tmp_path / "sessions.jsonl"
    with sessions.open("w", encoding="utf-8") as joined:
        for fmt, name in LOGS:
            part = tmp_path / f"{fmt}.jsonl"
            args = ["convert", fmt, str(LOGS_DIR / name), "--out", str(part)]
            assert main([*args, "--stub-pattern", STUB_PATTERN, "--quiet"]) == 0
            joined.write(part.read_text(encoding="utf-8"))
    out = tmp_path / "results.jsonl"
    code = main(["grade", str(sessions), "--out", str(out), "--provider", "scripted",
                 "--model", "authored-lenient-judge", "--replay", str(FIXTURES / "recordings"),
                 "--store", str(LOGS_DIR / "store"), "--quiet"])  # fmt: skip
    assert code == 0
    audits = {
        r.session_id: [c.status for c in r.citations.claims]
        for r in read_results(out)
        if r.citations is not None
    }
    assert audits == {
        "conv-heatpump-01": ["correct", "uncited", "correct", "uncited", "fabricated"],
        "anth-ev-01": ["correct", "uncited", "misattributed"],
        "oai-bees-01": ["correct", "misattributed", "correct", "fabricated"],
        # A url only in a tool's result list (news, search) resolves to that result.
        "resp-lfp-01": ["correct", "uncited", "correct", "fabricated"],
        "3f1b2c9e-7a44-4d1e-9a0b-5c2e8d6f1a10": ["uncited", "correct", "uncited"],
        "4bf92f3577b34da6a3ce929d0e0e4736": ["correct", "uncited", "uncited"],
        # A conversation, turn by turn: the 17 °C reading came from the weather tool while the
        # sentence cites the news article; the last turn pulled nothing, so its claim has no source.
        "oai-weather-01#1": ["misattributed", "correct", "correct", "correct"],
        "oai-weather-01#2": ["correct", "correct"],
        "oai-weather-01#3": ["ungrounded"],
    }
    # Without the store the offloaded result cannot be read: that session errors, naming it.
    out2 = tmp_path / "no-store.jsonl"
    code = main(["grade", str(sessions), "--out", str(out2), "--provider", "scripted",
                 "--model", "authored-lenient-judge", "--replay", str(FIXTURES / "recordings"),
                 "--quiet"])  # fmt: skip
    assert code == 2
    errored = {r.session_id: r.error for r in read_results(out2) if not r.ok}
    assert list(errored) == ["oai-bees-01"]
    assert "content_ref 'oai-bees-01/call_a1.txt'" in str(errored["oai-bees-01"])


def test_python_api_grades_converted_logs_with_a_store(tmp_path: Path) -> None:
    import research_judge as rj

    out = tmp_path / "chat.jsonl"
    stub = ConvertOptions(stub_pattern=compile_stub_pattern(STUB))
    convert_files("openai-chat", [LOGS / "openai_chat.jsonl"], out, stub)
    replay = {"provider": "scripted", "model": "authored-lenient-judge",
              "replay": FIXTURES / "recordings"}  # fmt: skip
    (graded,) = rj.grade(out, store=str(LOGS / "store"), **replay)
    assert graded.ok and graded.citations is not None
    assert graded.citations.counts["fabricated"] == 1
    (unread,) = rj.grade(out, **replay)
    assert unread.error_kind == "content_ref"


def test_anthropic_tool_result_search_results_and_images(tmp_path: Path) -> None:
    result = [
        {"type": "search_result", "source": "https://x.org/a", "title": "A page",
         "content": [{"type": "text", "text": "Range falls 30% in the cold."}],
         "citations": {"enabled": True}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
    ]  # fmt: skip
    record = {
        "id": "a5",
        "messages": [
            {"role": "user", "content": "Q?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "kb_search", "input": {"q": "range"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": result}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Range falls 30%.", "citations": [
                    {"type": "search_result_location", "source": "https://x.org/a",
                     "title": "A page", "cited_text": "Range falls 30% in the cold."}]}]},
        ],
    }  # fmt: skip
    (session,), errors = convert("anthropic", tmp_path, write_jsonl(tmp_path / "a.jsonl", record))
    assert errors == []
    (ref,) = session["trajectory"]
    assert ref["content"] == "A page <https://x.org/a>\nRange falls 30% in the cold."
    assert ref["urls"] == ["https://x.org/a"] and ref["unreadable"] == "1 block(s) of type image"
    assert [c["reference"] for c in session["citations"]] == ["t1"]


# --- OpenInference (Phoenix) -------------------------------------------------------------------


def _oi_span(sid: str, parent: str | None, kind: str, start: int, **attrs: Any) -> dict[str, Any]:
    attributes = [{"key": "openinference.span.kind", "value": {"stringValue": kind}}]
    attributes += [
        {"key": key.replace("__", "."), "value": {"stringValue": value}}
        for key, value in attrs.items()
    ]
    return {"traceId": "oi-trace", "spanId": sid, "parentSpanId": parent or "",
            "name": f"{kind.lower()}-{sid}", "startTimeUnixNano": str(start),
            "attributes": attributes}  # fmt: skip


def test_openinference_trace_with_a_sub_agent_tools_and_retrieval(tmp_path: Path) -> None:
    m = "llm__input_messages__"
    spans = [
        _oi_span("lead", None, "AGENT", 1, session__id="sess-9", agent__name="lead"),
        _oi_span("l1", "lead", "LLM", 2, **{f"{m}0__message__role": "system",
                 f"{m}0__message__content": "Be brief.", f"{m}1__message__role": "user",
                 f"{m}1__message__content": "Why do EV ranges drop in winter?"}),
        _oi_span("sub", "lead", "AGENT", 3, agent__name="researcher"),
        _oi_span("t1", "sub", "TOOL", 4, tool__name="web_fetch", tool_call__id="call_1",
                 tool__parameters='{"url": "https://x.org/cold"}', output__value="Cold cuts 20%."),
        _oi_span("r1", "sub", "RETRIEVER", 5, input__value="heat pump range",
                 retrieval__documents__0__document__id="doc-a",
                 retrieval__documents__0__document__content="Heat pumps save 10%.",
                 retrieval__documents__0__document__metadata='{"url": "https://y.org/hp"}',
                 retrieval__documents__1__document__content="Unrelated text."),
        _oi_span("s2", "sub", "LLM", 6, **{f"{m}0__message__role": "tool",
                 f"{m}0__message__tool_call_id": "call_2", f"{m}0__message__name": "notes",
                 f"{m}0__message__contents__0__message_content__type": "text",
                 f"{m}0__message__contents__0__message_content__text": "Preheat while plugged."}),
        _oi_span("l2", "lead", "LLM", 7, **{
                 "llm__output_messages__0__message__role": "assistant",
                 "llm__output_messages__0__message__content": "Cold cuts range by 20% [call_1]."}),
    ]  # fmt: skip
    log = write_jsonl(tmp_path / "oi.jsonl", _export(*spans))
    (session,), errors = convert("openinference", tmp_path, log)
    assert errors == []
    assert session["id"] == "sess-9"
    assert session["question"] == "Why do EV ranges drop in winter?"
    assert session["answer"] == "Cold cuts range by 20% [call_1]."
    refs = session["trajectory"]
    assert [(r["id"], r["agent"], r["tool"]) for r in refs] == [
        ("call_1", "researcher", "web_fetch"),
        ("doc-a", "researcher", "retriever-r1"),
        ("r1#1", "researcher", "retriever-r1"),
        ("call_2", "researcher", "notes"),
    ]
    assert refs[0]["url"] == "https://x.org/cold" and refs[0]["content"] == "Cold cuts 20%."
    assert refs[1]["url"] == "https://y.org/hp" and refs[1]["args"] == {"query": "heat pump range"}
    assert refs[3]["content"] == "Preheat while plugged."
    assert session["metadata"]["sub_agents"] == ["researcher"]


def test_openinference_tool_span_without_output_names_the_trace(tmp_path: Path) -> None:
    spans = [
        _oi_span("a", None, "CHAIN", 1, input__value="Q?", output__value="A."),
        _oi_span("t", "a", "TOOL", 2, tool__name="search"),
    ]
    log = write_jsonl(tmp_path / "oi.jsonl", _export(*spans))
    sessions, (error,) = convert("openinference", tmp_path, log)
    assert sessions == []
    assert str(error) == f"{log}: trace oi-trace: tool span 't' (search) has no output.value"


def test_otel_broken_pretty_printed_export_names_the_line(tmp_path: Path) -> None:
    log = tmp_path / "export.json"
    log.write_text('{\n  "resourceSpans": [\n    {"scopeSpans": [}\n  ]\n}\n', encoding="utf-8")
    sessions, (error,) = convert("otel", tmp_path, log)
    assert sessions == [] and str(error).startswith(f"{log}:3: not valid JSON")


def test_an_output_that_cannot_be_written_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = str(LOGS / "anthropic.jsonl")
    assert main(["convert", "anthropic", log, "--out", str(tmp_path)]) == 5
    assert "exists and is not a regular file" in capsys.readouterr().err
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert main(["convert", "anthropic", log, "--out", str(tmp_path / "file" / "s.jsonl")]) == 5
    assert "cannot write" in capsys.readouterr().err


def test_out_folder_is_created_and_dash_is_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = str(LOGS / "anthropic.jsonl")
    nested = tmp_path / "new" / "dir" / "s.jsonl"
    assert main(["convert", "anthropic", log, "--out", str(nested)]) == 0
    assert json.loads(nested.read_text(encoding="utf-8"))["id"] == "anth-ev-01"
    capsys.readouterr()
    assert main(["convert", "anthropic", log, "--out", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["id"] == "anth-ev-01"  # stdout holds the sessions only
    assert captured.err.startswith("converted 1 session(s) to -")


def test_dash_input_is_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import io
    import sys

    data = (LOGS / "anthropic.jsonl").read_bytes() + b"not json\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = tmp_path / "s.jsonl"
    assert main(["convert", "anthropic", "-", "--out", str(out), "--quiet"]) == 2
    assert [s["id"] for s in read(out)] == ["anth-ev-01"]
    assert "research-judge convert: -:2: not valid JSON" in capsys.readouterr().err
    assert main(["convert", "anthropic", "-", "-", "--out", str(out)]) == 2


# --- hostile logs ---------------------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000  # deeper than the JSON decoder's recursion limit


def test_deeply_nested_json_lines_are_named_not_a_crash(tmp_path: Path) -> None:
    goods = {
        "openai-chat": read(LOGS / "openai_chat.jsonl")[0],
        "anthropic": read(LOGS / "anthropic.jsonl")[0],
        "otel": _simple_trace("t-ok"),
    }
    for fmt, good in goods.items():
        log = write_jsonl(tmp_path / f"{fmt}.jsonl", DEEP, '{"id": "d", "messages": ' + DEEP + "}")
        with log.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(good) + "\n")
        stats = convert_files(fmt, [log], tmp_path / f"{fmt}.out.jsonl")
        assert stats.sessions == 1, fmt
        assert [str(e) for e in stats.errors] == [
            f"{log}:1: not valid JSON: nested too deeply",
            f"{log}:2: not valid JSON: nested too deeply",
        ], fmt


def _with_chat_span_field(trace: str, key: str, value: Any) -> dict[str, Any]:
    export = _simple_trace(trace)
    export["resourceSpans"][0]["scopeSpans"][0]["spans"][1][key] = value
    return export


def test_otel_span_with_bad_numbers_is_named_and_the_rest_converted(tmp_path: Path) -> None:
    bad_int = [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "x"}}]
    log = write_jsonl(
        tmp_path / "t.jsonl",
        _with_chat_span_field("t-time", "startTimeUnixNano", "soon"),
        _with_chat_span_field("t-int", "attributes", bad_int),
        _with_chat_span_field("t-attr", "attributes", ["not an attribute"]),
        _with_chat_span_field("t-dbl", "attributes", [{"key": "d", "value": {"doubleValue": "x"}}]),
        _simple_trace("t-ok"),
    )
    sessions, errors = convert("otel", tmp_path, log)
    assert [s["id"] for s in sessions] == ["t-ok"]
    assert [str(e) for e in errors] == [
        f"{log}:1: span 'chat': startTimeUnixNano is not an integer ('soon')",
        f"{log}:2: span 'chat': attribute 'gen_ai.usage.input_tokens': "
        "intValue is not an integer ('x')",
        f"{log}:3: span 'chat': an attribute is not a key/value object",
        f"{log}:4: span 'chat': attribute 'd': doubleValue is not a number",
    ]


def test_otel_deeply_nested_messages_attribute_is_named(tmp_path: Path) -> None:
    export = _simple_trace("t-deep")
    chat = export["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    chat["attributes"][1]["value"]["stringValue"] = DEEP
    log = write_jsonl(tmp_path / "t.jsonl", export, _simple_trace("t-ok"))
    sessions, errors = convert("otel", tmp_path, log)
    assert [s["id"] for s in sessions] == ["t-ok"]
    assert [str(e) for e in errors] == [
        f"{log}: trace t-deep: span 'chat': gen_ai.input.messages is nested too deeply"
    ]


def test_anthropic_result_blocks_of_the_wrong_shape_are_named_not_a_crash(tmp_path: Path) -> None:
    def fetched(session_id: str, content: Any) -> dict[str, Any]:
        use = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_fetch", "input": {}}
        result = {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": content}
        return {
            "id": session_id,
            "messages": [
                {"role": "user", "content": "Q?"},
                {"role": "assistant", "content": [use, result, {"type": "text", "text": "A."}]},
            ],
        }

    odd_document = {"type": "tool_result", "tool_use_id": "t1"}
    odd_document["content"] = [{"type": "document", "source": "not an object"}]
    log = write_jsonl(
        tmp_path / "a.jsonl",
        fetched("f1", "a string"),
        fetched("f2", {"type": "web_fetch_result", "url": "https://x.test", "content": "text"}),
        {
            "id": "doc",
            "messages": [
                {"role": "user", "content": "Q?"},
                {"role": "user", "content": [odd_document]},
                {"role": "assistant", "content": "A."},
            ],
        },
    )
    sessions, errors = convert("anthropic", tmp_path, log)
    assert [str(e) for e in errors] == [
        f"{log}:1: record 'f1': tool call 'srvtoolu_1': web_fetch_tool_result content "
        "must be an object, got str",
        f"{log}:2: record 'f2': tool call 'srvtoolu_1': web_fetch_result content "
        "must be an object, got str",
    ]
    (session,) = sessions
    assert session["trajectory"][0]["unreadable"] == "1 block(s) of type document"


def test_openai_chat_tool_call_and_annotation_of_the_wrong_shape_are_named(tmp_path: Path) -> None:
    def record(session_id: str, call: Any, annotation: Any) -> dict[str, Any]:
        answer = {"role": "assistant", "content": "A.", "annotations": [annotation]}
        return {
            "id": session_id,
            "messages": [
                {"role": "user", "content": "Q?"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1", "content": "page"},
                answer,
            ],
        }

    good_call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    log = write_jsonl(
        tmp_path / "c.jsonl",
        record("bad-call", {"id": "call_1", "function": "f"}, {}),
        record("bad-note", good_call, {"type": "url_citation", "url_citation": "https://x"}),
        record("ok", good_call, {}),
    )
    sessions, errors = convert("openai-chat", tmp_path, log)
    assert [s["id"] for s in sessions] == ["ok"]
    assert [str(e) for e in errors] == [
        f"{log}:1: record 'bad-call': messages[1]: tool call 'call_1': "
        "'function' must be an object, got str",
        f"{log}:2: record 'bad-note': messages[3]: url_citation annotation "
        "must be an object, got str",
    ]


def test_otel_call_arguments_from_the_tool_call_part_when_the_span_has_none(
    tmp_path: Path,
) -> None:
    # gen_ai.tool.call.arguments is opt-in: many execute_tool spans lack it, while the chat span's
    # output messages still carry the tool_call part with its arguments.
    call = {"type": "tool_call", "id": "c1", "name": "web_fetch"}
    call["arguments"] = {"url": "https://a.test/page"}
    asked = [{"role": "assistant", "parts": [call]}]
    tool = {"gen_ai__tool__call__id": "c1", "gen_ai__tool__name": "web_fetch"}
    tool["gen_ai__tool__call__result"] = "page text"
    log = write_jsonl(
        tmp_path / "t.jsonl",
        _export(
            _span("root", None, "invoke_agent", 1),
            _span(
                "ch1",
                "root",
                "chat",
                2,
                gen_ai__input__messages=_user("Q?"),
                gen_ai__output__messages=asked,
            ),
            _span("tool", "root", "execute_tool", 3, **tool),
            _span("ch2", "root", "chat", 4, gen_ai__output__messages=_out("A.")),
        ),
    )
    (session,), errors = convert("otel", tmp_path, log)
    (ref,) = session["trajectory"]
    assert errors == [] and ref["url"] == "https://a.test/page"
    assert ref["args"] == {"url": "https://a.test/page"}
    assert ref["title"] == "web_fetch(url=https://a.test/page)"
