"""Benchmark: ``convert`` throughput against the floor of any converter.

The floor reads the same log line by line, parses each record and writes it back as JSON: what
every converter must do at least. ``convert`` also walks the messages (or spans), builds the
references, applies ``--stub-pattern``, validates each session against the input model and writes
through a temporary file. The figure is convert time / floor time on the same file in this run
(median of several rounds), for an OpenAI chat log and an OpenTelemetry trace file of the same
sessions: 4 tool results of ~2 KB each, one of them an offloaded stub.

A third figure checks that a trace's span tree is read in linear time: a chain of ``depth``
nested spans against one of ``depth / 8``, the time per span compared (1.0 is linear; a walk up
the chain from every span would make it about 8).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline import Figure
from research_judge.sessions.convert import ConvertOptions, compile_stub_pattern, convert_files

# How many times the bare parse-and-write floor convert may cost. OTel's is higher: its message
# and argument attributes are JSON inside JSON, parsed again, and spans are grouped by trace.
TARGETS = {"openai-chat": 3.0, "otel": 4.0}
STUB = r"\[stored: (?P<ref>\S+)\]"
PAGE = "Cold weather cuts usable battery capacity and adds cabin heating load. " * 28


def run(workdir: Path, *, sessions: int = 5000, rounds: int = 3, depth: int = 8000) -> list[Figure]:
    chat = _write(workdir / "convert.chat.jsonl", (_chat(i) for i in range(sessions)))
    otel = _write(workdir / "convert.otel.jsonl", (_trace(i) for i in range(sessions)))
    options = ConvertOptions(stub_pattern=compile_stub_pattern(STUB))
    figures = []
    for fmt, log in (("openai-chat", chat), ("otel", otel)):
        out = workdir / f"convert.{fmt}.out.jsonl"

        def converted(fmt: str = fmt, log: Path = log, out: Path = out) -> None:
            stats = convert_files(fmt, [log], out, options)
            assert stats.sessions == sessions and not stats.errors, stats.errors[:3]

        def floor(log: Path = log, out: Path = workdir / f"convert.{fmt}.floor.jsonl") -> None:
            _floor(log, out)

        tool, base = _median(converted, rounds), _median(floor, rounds)
        ratio = tool / base
        figures += [
            Figure("convert", f"{fmt} sessions/s", f"{sessions / tool:.0f}", "", None),
            Figure(
                "convert",
                f"{fmt} time / parse-and-write floor",
                f"{ratio:.2f}",
                f"<= {TARGETS[fmt]}",
                ratio <= TARGETS[fmt],
                f"{tool:.2f} s vs {base:.2f} s for {sessions} sessions",
            ),
        ]
    return figures + _chain_figures(workdir, depth, rounds)


def _chain_figures(workdir: Path, depth: int, rounds: int) -> list[Figure]:
    seconds = {}
    for size in (depth // 8, depth):
        log = _write(workdir / f"convert.chain{size}.jsonl", [_chain(size)])
        out = workdir / f"convert.chain{size}.out.jsonl"

        def converted(log: Path = log, out: Path = out) -> None:
            stats = convert_files("otel", [log], out)
            assert stats.sessions == 1 and not stats.errors, stats.errors[:3]

        seconds[size] = _median(converted, rounds)
    ratio = (seconds[depth] / depth) / (seconds[depth // 8] / (depth // 8))
    return [
        Figure(
            "convert",
            f"{depth}-span chain: time per span / {depth // 8}-span chain's",
            f"{ratio:.2f}",
            "<= 2.0",
            ratio <= 2.0,
            f"{seconds[depth]:.2f} s vs {seconds[depth // 8]:.3f} s",
        )
    ]


def _chain(depth: int) -> dict[str, Any]:
    """One trace: an agent, ``depth`` spans each the child of the one before, then a tool and a
    chat span at the bottom (the agent of both is ``depth`` spans up)."""

    def span(sid: str, parent: str | None, start: int, **attrs: str) -> dict[str, Any]:
        return {
            "traceId": "c" * 32, "spanId": sid, "parentSpanId": parent or "", "name": sid,
            "startTimeUnixNano": str(start),
            "attributes": [{"key": k.replace("__", "."), "value": {"stringValue": v}}
                           for k, v in attrs.items()],
        }  # fmt: skip

    spans = [span("s0", None, 0, gen_ai__operation__name="invoke_agent")]
    spans += [span(f"s{n}", f"s{n - 1}", n) for n in range(1, depth)]
    user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Q?"}]}])
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "A."}]}])
    leaf = f"s{depth - 1}"
    spans += [
        span("tool", leaf, depth, gen_ai__operation__name="execute_tool",
             gen_ai__tool__call__id="c1", gen_ai__tool__call__result="text"),
        span("chat", leaf, depth + 1, gen_ai__operation__name="chat",
             gen_ai__input__messages=user, gen_ai__output__messages=answer),
    ]  # fmt: skip
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def _median(fn: Callable[[], None], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _floor(log: Path, out: Path) -> None:
    with log.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for line in src:
            dst.write(json.dumps(json.loads(line), ensure_ascii=False) + "\n")


def _write(path: Path, records: Any) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    return path


def _results(i: int) -> list[tuple[str, str, str]]:
    """(call id, url, text) of one session's four tool results; the last is offloaded."""
    return [
        (f"call_{i}_{n}", f"https://example.org/{i}/{n}", f"[stored: s{i}/{n}.txt]" if n == 3
         else f"Page {n} of session {i}. {PAGE}")
        for n in range(4)
    ]  # fmt: skip


def _chat(i: int) -> dict[str, Any]:
    results = _results(i)
    calls = [
        {"id": cid, "type": "function",
         "function": {"name": "web_fetch", "arguments": json.dumps({"url": url})}}
        for cid, url, _ in results
    ]  # fmt: skip
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Question {i}: why does winter cut EV range?"},
        {"role": "assistant", "content": None, "tool_calls": calls},
    ]
    messages += [{"role": "tool", "tool_call_id": cid, "content": text} for cid, _, text in results]
    messages.append({"role": "assistant", "content": f"Answer {i}: cold and heating [1]."})
    return {"id": f"s-{i}", "messages": messages, "metadata": {"n": i}}


def _trace(i: int) -> dict[str, Any]:
    trace = f"{i:032x}"

    def span(sid: str, parent: str | None, start: int, **attrs: Any) -> dict[str, Any]:
        return {
            "traceId": trace, "spanId": sid, "parentSpanId": parent or "", "name": sid,
            "startTimeUnixNano": str(start),
            "attributes": [
                {"key": k.replace("__", "."),
                 "value": {"stringValue": v if isinstance(v, str) else json.dumps(v)}}
                for k, v in attrs.items()
            ],
        }  # fmt: skip

    def text(role: str, content: str) -> list[dict[str, Any]]:
        return [{"role": role, "parts": [{"type": "text", "content": content}]}]

    spans = [
        span("lead", None, 1, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="lead"),
        span("c1", "lead", 2, gen_ai__operation__name="chat",
             gen_ai__input__messages=text("user", f"Question {i}: why does winter cut EV range?")),
        span("sub", "lead", 3, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="t1"),
    ]  # fmt: skip
    for n, (cid, url, result) in enumerate(_results(i)):
        spans.append(
            span(f"t{n}", "sub", 10 + n, gen_ai__operation__name="execute_tool",
                 gen_ai__tool__name="web_fetch", gen_ai__tool__call__id=cid,
                 gen_ai__tool__call__arguments={"url": url}, gen_ai__tool__call__result=result)
        )  # fmt: skip
    spans.append(
        span("c2", "lead", 20, gen_ai__operation__name="chat",
             gen_ai__output__messages=text("assistant", f"Answer {i}: cold and heating [1]."))
    )  # fmt: skip
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}
