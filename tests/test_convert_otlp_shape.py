"""``convert otel|openinference``: an OTLP export of the wrong shape is a named error (exit 2),
never an internal one (exit 70), and the good traces around it are still converted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.sessions.convert import convert_files


def _good_export(trace: str) -> dict[str, Any]:
    def span(sid: str, parent: str, op: str, start: int, **attrs: Any) -> dict[str, Any]:
        attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
        for key, value in attrs.items():
            attributes.append({"key": key, "value": {"stringValue": json.dumps(value)}})
        return {
            "traceId": trace,
            "spanId": sid,
            "parentSpanId": parent,
            "name": op,
            "startTimeUnixNano": str(start),
            "attributes": attributes,
        }

    # The root span is an agent in both conventions: GenAI (invoke_agent, chat spans below it)
    # and OpenInference (an AGENT span whose input and output values are question and answer).
    root = span("root", "", "invoke_agent", 1)
    for key, value in (("openinference.span.kind", "AGENT"), ("input.value", "Q?")):
        root["attributes"].append({"key": key, "value": {"stringValue": value}})
    root["attributes"].append({"key": "output.value", "value": {"stringValue": "A."}})
    user = [{"role": "user", "parts": [{"type": "text", "content": "Q?"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "A."}]}]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [
                    {
                        "spans": [
                            root,
                            span("ch", "root", "chat", 2, **{"gen_ai.input.messages": user}),
                            span("ch2", "root", "chat", 3, **{"gen_ai.output.messages": answer}),
                        ]
                    }
                ],
            }
        ]
    }


def _scope(spans: Any) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


ARRAY = (
    "a JSON array, not an OTLP export object or an array of spans "
    '(the file exporter writes one {"resourceSpans": [...]} object per line)'
)

# Each malformed export line, and what the error says about it after "FILE:LINE: ".
MALFORMED: list[tuple[str, Any, str]] = [
    ("array", [_good_export("t-in-array")], ARRAY),
    ("not a list", {"resourceSpans": {"a": 1}}, "'resourceSpans' must be a list, got dict"),
    ("no list", {"spans": []}, "not an OTLP export (no 'resourceSpans' list)"),
    ("item", {"resourceSpans": [1]}, "resourceSpans[0] must be an object, got int"),
    (
        "resource",
        {"resourceSpans": [{"resource": 3, "scopeSpans": []}]},
        "resourceSpans[0].resource must be an object, got int",
    ),
    (
        "scopeSpans",
        {"resourceSpans": [{"scopeSpans": {"x": 1}}]},
        "resourceSpans[0].scopeSpans must be a list, got dict",
    ),
    (
        "scope item",
        {"resourceSpans": [{"scopeSpans": ["s"]}]},
        "resourceSpans[0].scopeSpans[0] must be an object, got str",
    ),
    (
        "spans",
        {"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]},
        "resourceSpans[0].scopeSpans[0].spans must be a list, got str",
    ),
    ("span", _scope([5]), "resourceSpans[0].scopeSpans[0].spans[0] must be an object, got int"),
    (
        "no traceId",
        _scope([{"spanId": "s", "name": "chat"}]),
        "resourceSpans[0].scopeSpans[0].spans[0] (span 'chat') has no traceId",
    ),
    (
        "no spanId",
        _scope([{"traceId": "t", "name": "chat"}]),
        "resourceSpans[0].scopeSpans[0].spans[0] (span 'chat') has no spanId",
    ),
    (
        "parent",
        _scope([{"traceId": "t", "spanId": "s", "name": "chat", "parentSpanId": 5}]),
        "resourceSpans[0].scopeSpans[0].spans[0] (span 'chat'): "
        "parentSpanId must be a string, got int",
    ),
    (
        "attributes",
        _scope([{"traceId": "t", "spanId": "s", "name": "n", "attributes": {"k": 1}}]),
        "span 'n': an attribute is not a key/value object",
    ),
]


@pytest.mark.parametrize("fmt", ["otel", "openinference"])
def test_each_malformed_export_line_is_named_and_the_good_traces_converted(
    fmt: str, tmp_path: Path
) -> None:
    log = tmp_path / "traces.jsonl"
    lines = [_good_export("t-first"), *(bad for _, bad, _ in MALFORMED), _good_export("t-last")]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "sessions.jsonl"
    stats = convert_files(fmt, [log], out)
    assert [str(e) for e in stats.errors] == [
        f"{log}:{number}: {message}" for number, (_, _, message) in enumerate(MALFORMED, start=2)
    ]
    ids = [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert ids == ["t-first", "t-last"]
    assert main(["convert", fmt, str(log), "--out", str(tmp_path / "cli.jsonl"), "--quiet"]) == 2


def test_a_pretty_printed_top_level_array_is_named_once(tmp_path: Path) -> None:
    log = tmp_path / "export.json"
    log.write_text(json.dumps([_good_export("t1")], indent=2), encoding="utf-8")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_good_export("t2"), indent=2), encoding="utf-8")
    out = tmp_path / "sessions.jsonl"
    stats = convert_files("otel", [log, good], out)
    assert [str(e) for e in stats.errors] == [f"{log}:1: {ARRAY}"]
    assert stats.sessions == 1


def test_a_trace_with_spans_in_a_malformed_export_is_named_not_converted_from_a_part(
    tmp_path: Path,
) -> None:
    # The trace's spans are split over two export lines; the second line is malformed, so the
    # spans read from the first are not the whole trace and must not become a session.
    spans = _good_export("t-split")["resourceSpans"][0]["scopeSpans"][0]["spans"]
    broken = _scope([spans[2], {"spanId": "x", "name": "lost"}])
    log = tmp_path / "traces.jsonl"
    lines = [_scope(spans[:2]), broken, _good_export("t-ok")]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    stats = convert_files("otel", [log], tmp_path / "sessions.jsonl")
    assert [str(e) for e in stats.errors] == [
        f"{log}:2: resourceSpans[0].scopeSpans[0].spans[1] (span 'lost') has no traceId",
        f"{log}: trace t-split: some of its spans are in a malformed export ({log}:2)",
    ]
    assert stats.sessions == 1
