"""Hostile records: each bad one is a named error for that record, the rest is written (exit 2),
nothing crashes; the output is strict JSON; deep span trees are read without recursion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.sessions.convert import convert_files

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "agent_logs"


def _chat(record_id: str, answer: Any = "Answer.") -> dict[str, Any]:
    return {
        "id": record_id,
        "messages": [
            {"role": "user", "content": "Question?"},
            {"role": "assistant", "content": answer},
        ],
    }


GOOD = json.dumps(_chat("good"))
BAD_LINES = {
    # A 5,000-digit integer: Python refuses to convert it (ValueError, not a JSON error).
    "huge integer": '{"id": "big", "n": ' + "9" * 5000 + ', "messages": []}',
    # A lone surrogate escape parses but cannot be written as UTF-8.
    "lone surrogate": json.dumps(_chat("lone", "Half of a pair: \ud800.")),
    # A text part whose text is a number.
    "number as text": json.dumps(_chat("numtext", [{"type": "text", "text": 42}])),
    # NaN parses in Python but is not JSON: it must not reach the output.
    "NaN": json.dumps(_chat("nan")).replace('"messages"', '"metadata": {"x": NaN}, "messages"'),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(BAD_LINES))
def test_a_hostile_chat_record_is_named_and_the_others_written(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_text(
        f"{GOOD}\n{BAD_LINES[kind]}\n{GOOD.replace('good', 'good2')}\n", encoding="utf-8"
    )
    out = tmp_path / "out.jsonl"
    assert main(["convert", "openai-chat", str(log), "--out", str(out), "--quiet"]) == 2
    (error,) = capsys.readouterr().err.splitlines()
    assert error.startswith(f"research-judge convert: {log}:2: ")
    expected = {
        "huge integer": "not readable JSON: Exceeds the limit",
        "lone surrogate": "record 'lone': holds a lone surrogate escape ('\\ud800'), which is "
        "not text",
        "number as text": "record 'numtext': messages[1]: a text part's 'text' must be a string, "
        "got int",
        "NaN": "record 'nan': holds a number that is not JSON (NaN or Infinity)",
    }[kind]  # fmt: skip
    assert expected in error
    written = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line, parse_constant=_no_constants)["id"] for line in written] == [
        "good",
        "good2",
    ]


def _no_constants(name: str) -> Any:
    raise AssertionError(f"the output holds {name}, which is not JSON")


def test_a_number_where_anthropic_text_belongs_is_that_records_error(tmp_path: Path) -> None:
    good = json.loads((LOGS / "anthropic.jsonl").read_text(encoding="utf-8").splitlines()[0])
    bad = json.loads(json.dumps(good)) | {"id": "bad"}
    bad["messages"][0]["content"] = [{"type": "text", "text": 7}]
    log = tmp_path / "a.jsonl"
    log.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    stats = convert_files("anthropic", [log], tmp_path / "out.jsonl")
    assert stats.sessions == 1
    assert [str(e) for e in stats.errors] == [
        f"{log}:1: record 'bad': messages[0]: a text part's 'text' must be a string, got int"
    ]


def test_one_line_that_is_not_utf8_in_an_otel_file_drops_only_that_line(tmp_path: Path) -> None:
    lines = (LOGS / "otel_traces.jsonl").read_bytes().splitlines()
    other = (LOGS / "openinference_traces.jsonl").read_bytes().replace(b"openinference", b"x")
    log = tmp_path / "traces.jsonl"
    log.write_bytes(b"\n".join([*lines, b'{"resourceSpans": [\xff\xfe]}', other]))
    stats = convert_files("otel", [log], tmp_path / "out.jsonl")
    assert [str(e) for e in stats.errors] == [
        f"{log}:{len(lines) + 1}: not valid UTF-8 (byte 20)",
        f"{log}: trace 8a3c60f7d188f8fa79d48a391a778fa6: no chat span of the root agent "
        "(gen_ai.operation.name 'chat')",
    ]
    assert stats.sessions == 1  # the heat-pump trace, in the lines around the bad one


def _chain(depth: int) -> dict[str, Any]:
    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    spans = [
        {"traceId": "deep", "spanId": "s0", "name": "agent", "startTimeUnixNano": "0",
         "attributes": [attr("gen_ai.operation.name", "invoke_agent"),
                        attr("gen_ai.agent.name", "lead")]}
    ]  # fmt: skip
    for n in range(1, depth):
        spans.append(
            {"traceId": "deep", "spanId": f"s{n}", "parentSpanId": f"s{n - 1}", "name": "step",
             "startTimeUnixNano": str(n), "attributes": [attr("gen_ai.operation.name", "step")]}
        )  # fmt: skip
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.name": "search", "gen_ai.tool.call.result": "deep result"}  # fmt: skip
    chat_in = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Q?"}]}])
    chat_out = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "A."}]}])
    leaf = f"s{depth - 1}"
    spans += [
        {"traceId": "deep", "spanId": "tool", "parentSpanId": leaf, "name": "tool",
         "startTimeUnixNano": str(depth), "attributes": [attr(k, v) for k, v in tool.items()]},
        {"traceId": "deep", "spanId": "chat", "parentSpanId": leaf, "name": "chat",
         "startTimeUnixNano": str(depth + 1),
         "attributes": [attr("gen_ai.operation.name", "chat"),
                        attr("gen_ai.input.messages", chat_in),
                        attr("gen_ai.output.messages", chat_out)]},
    ]  # fmt: skip
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def test_an_8000_span_parent_child_chain_is_read_without_recursion(tmp_path: Path) -> None:
    log = tmp_path / "deep.jsonl"
    log.write_text(json.dumps(_chain(8000)) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    stats = convert_files("otel", [log], out)
    assert stats.errors == []
    (session,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    (ref,) = session["trajectory"]
    assert ref["agent"] == "lead"  # the agent 8,000 spans up the chain
    assert session["answer"] == "A."


def test_a_huge_number_inside_a_span_attribute_is_that_traces_error(tmp_path: Path) -> None:
    huge = '[{"role": "user", "parts": [{"type": "text", "content": ' + "9" * 5000 + "}]}]"
    chain = _chain(2)
    for span in chain["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        if span["spanId"] == "chat":
            span["attributes"][1]["value"]["stringValue"] = huge
    log = tmp_path / "t.jsonl"
    log.write_text(json.dumps(chain) + "\n" + (LOGS / "otel_traces.jsonl").read_text(), "utf-8")
    stats = convert_files("otel", [log], tmp_path / "out.jsonl")
    assert stats.sessions == 1
    (error,) = [str(e) for e in stats.errors]
    assert error.startswith(
        f"{log}: trace deep: span 'chat': gen_ai.input.messages is not readable JSON (Exceeds"
    )
