"""``otel``: OTLP JSON traces (the collector's file exporter) under the GenAI semantic conventions.

One session per trace; its id is ``gen_ai.conversation.id`` when a span has one, else the trace
id. Agents are ``invoke_agent`` spans: the root agent is the one with no agent above it, and
every span belongs to its nearest agent ancestor.
- Question: the first user text of the root agent's first chat span's ``gen_ai.input.messages``.
- Answer: the text of the root agent's last chat span's ``gen_ai.output.messages``.
- References: one per tool call id, in time order, from ``execute_tool`` spans (id
  ``gen_ai.tool.call.id``, ``gen_ai.tool.name``, ``gen_ai.tool.call.arguments``,
  ``gen_ai.tool.call.result``) and ``tool_call_response`` parts of any chat span's input messages,
  from the root agent and every sub-agent; each says which agent and tool produced it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputFileError
from ._common import (
    ConvertOptions,
    RecordError,
    SessionDict,
    as_text,
    call_title,
    parse_arguments,
    reference,
    url_argument,
)

NAME = "otel"
CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    attributes: dict[str, Any]
    resource: dict[str, Any]

    @property
    def operation(self) -> str | None:
        op = self.attributes.get("gen_ai.operation.name")
        return op if isinstance(op, str) else None


@dataclass
class Trace:
    trace_id: str
    path: Path  # the file of its first span, for messages
    spans: list[Span] = field(default_factory=list)


# --- reading OTLP JSON ---------------------------------------------------------------------


def read_traces(paths: list[Path]) -> Iterator[Trace | InputFileError]:
    """Spans of every file grouped by trace (a trace may span export batches and files),
    in order of first appearance; unreadable lines and spans are yielded as errors."""
    traces: dict[str, Trace] = {}
    for path in paths:
        for number, document in _documents(path):
            if isinstance(document, InputFileError):
                yield document
                continue
            try:
                spans = list(_spans(document))
            except RecordError as exc:
                yield InputFileError(path, str(exc), number)
                continue
            for span in spans:
                trace = traces.get(span.trace_id)
                if trace is None:
                    trace = traces[span.trace_id] = Trace(span.trace_id, path)
                trace.spans.append(span)
    yield from traces.values()


def _documents(path: Path) -> Iterator[tuple[int, dict[str, Any] | InputFileError]]:
    """The file exporter writes one JSON object per line, read one at a time; a pretty-printed
    single export (a file whose first line is ``{``) is read whole."""
    try:
        handle = path.open(encoding="utf-8-sig")
        with handle:
            first = handle.readline()
            if first.strip() == "{":
                chunks: Iterator[tuple[int, str]] = iter([(1, first + handle.read())])
                yield from _parsed(path, chunks)
            else:
                lines = enumerate(itertools.chain([first], handle), start=1)
                yield from _parsed(path, ((n, line) for n, line in lines if line.strip()))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(path, f"cannot read trace file: {exc}") from exc


def _parsed(
    path: Path, chunks: Iterator[tuple[int, str]]
) -> Iterator[tuple[int, dict[str, Any] | InputFileError]]:
    for number, chunk in chunks:
        try:
            value = json.loads(chunk)
        except json.JSONDecodeError as exc:
            # In a whole-file document the decoder's own line number is the useful one.
            where = exc.lineno if number == 1 and "\n" in chunk.rstrip("\n") else number
            yield number, InputFileError(path, f"not valid JSON: {exc.msg}", where)
            continue
        except RecursionError:
            yield number, InputFileError(path, "not valid JSON: nested too deeply", number)
            continue
        if not isinstance(value, dict) or not isinstance(value.get("resourceSpans"), list):
            yield (
                number,
                InputFileError(path, "not an OTLP export (no 'resourceSpans' list)", number),
            )
            continue
        yield number, value


def _spans(document: dict[str, Any]) -> Iterator[Span]:
    for resource_spans in document["resourceSpans"]:
        resource = _attributes((resource_spans.get("resource") or {}).get("attributes"))
        for scope_spans in resource_spans.get("scopeSpans") or []:
            for raw in scope_spans.get("spans") or []:
                trace_id, span_id = raw.get("traceId"), raw.get("spanId")
                if not isinstance(trace_id, str) or not trace_id or not isinstance(span_id, str):
                    raise RecordError(f"span {raw.get('name')!r} has no traceId/spanId")
                name = str(raw.get("name", ""))
                try:
                    attributes = _attributes(raw.get("attributes"))
                except RecordError as exc:
                    raise RecordError(f"span {name!r}: {exc}") from exc
                yield Span(
                    trace_id=trace_id,
                    span_id=span_id,
                    parent_id=raw.get("parentSpanId") or None,
                    name=name,
                    start=_integer(
                        raw.get("startTimeUnixNano") or 0, f"span {name!r}: ", "startTimeUnixNano"
                    ),
                    attributes=attributes,
                    resource=resource,
                )


def _integer(value: Any, where: str, field: str) -> int:
    """OTLP JSON writes 64-bit integers as decimal strings (some exporters as numbers)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RecordError(f"{where}{field} is not an integer ({value!r})") from None


def _attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise RecordError("an attribute is not a key/value object")
        try:
            out[item["key"]] = _value(item.get("value") or {}, f"attribute {item['key']!r}: ")
        except RecursionError:
            raise RecordError(f"attribute {item['key']!r} is nested too deeply") from None
    return out


def _value(value: dict[str, Any], where: str = "") -> Any:
    """An OTLP ``AnyValue`` as a Python value (64-bit ints arrive as strings in OTLP JSON)."""
    if not isinstance(value, dict):
        raise RecordError(f"{where}not an OTLP AnyValue object")
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return _integer(value["intValue"], where, "intValue")
    if "doubleValue" in value:
        try:
            return float(value["doubleValue"])
        except (TypeError, ValueError):
            raise RecordError(f"{where}doubleValue is not a number") from None
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_value(v, where) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return _attributes((value["kvlistValue"] or {}).get("values"))
    return None


# --- one trace -> one session ----------------------------------------------------------------


def convert_trace(trace: Trace, options: ConvertOptions) -> SessionDict:
    spans = sorted(trace.spans, key=lambda s: s.start)
    by_id = {s.span_id: s for s in spans}
    agent_of = {s.span_id: _agent_above(s, by_id) for s in spans}
    agents = [s for s in spans if s.operation == "invoke_agent"]
    roots = [a for a in agents if agent_of[a.span_id] is None]
    root = roots[0] if roots else None
    root_id = root.span_id if root else None

    def agent_name(span_id: str | None) -> str | None:
        agent = by_id.get(span_id) if span_id else None
        if agent is None:
            return None
        return (
            _str(agent.attributes.get("gen_ai.agent.name"))
            or _str(agent.attributes.get("gen_ai.agent.id"))
            or agent.name
        )

    def owner(span: Span) -> str | None:
        return span.span_id if span.operation == "invoke_agent" else agent_of[span.span_id]

    chats = [s for s in spans if s.operation in CHAT_OPERATIONS]
    root_chats = [s for s in chats if agent_of[s.span_id] == root_id]
    if not root_chats:
        raise RecordError("no chat span of the root agent (gen_ai.operation.name 'chat')")
    question = _first_user_text(_messages(root_chats[0], "gen_ai.input.messages"))
    if question is None and root is not None:
        question = _first_user_text(_messages(root, "gen_ai.input.messages"))
    if question is None:
        raise RecordError(
            "the root agent's first chat span has no user text in gen_ai.input.messages"
        )
    answer = _output_text(_messages(root_chats[-1], "gen_ai.output.messages"))
    if not answer:
        raise RecordError("the root agent's last chat span has no text in gen_ai.output.messages")

    trajectory = _references(spans, chats, owner, agent_name, options)
    conversation = next(
        (c for s in spans if (c := _str(s.attributes.get("gen_ai.conversation.id")))), None
    )
    metadata: dict[str, Any] = {"trace_id": trace.trace_id}
    if root is not None:
        metadata["agent"] = agent_name(root.span_id)
    service = _str(spans[0].resource.get("service.name"))
    if service:
        metadata["service"] = service
    sub_agents = [agent_name(a.span_id) for a in agents if a is not root]
    if sub_agents:
        metadata["sub_agents"] = sub_agents
    return {
        "id": conversation or trace.trace_id,
        "question": question,
        "answer": answer,
        "trajectory": trajectory,
        "metadata": metadata,
    }


def _references(
    spans: list[Span], chats: list[Span], owner: Any, agent_name: Any, options: ConvertOptions
) -> list[dict[str, Any]]:
    """One reference per tool call id, ordered by when its result first appears."""
    # (time, call id) -> what is known about the call; execute_tool spans win over message parts.
    found: dict[str, dict[str, Any]] = {}
    requested: dict[str, tuple[str | None, Any]] = {}  # call id -> (tool, arguments) from parts
    asked_by: dict[str, str | None] = {}  # call id -> the agent whose chat asked for it
    for span in spans:
        if span.operation == "execute_tool":
            a = span.attributes
            call_id = _str(a.get("gen_ai.tool.call.id")) or span.span_id
            entry = found.setdefault(call_id, {"time": span.start})
            entry.update(
                tool=_str(a.get("gen_ai.tool.name")),
                args=parse_arguments(a.get("gen_ai.tool.call.arguments")),
                agent=agent_name(owner(span)),
                time=min(entry["time"], span.start),
            )
            if a.get("gen_ai.tool.call.result") is not None:
                entry["result"] = a["gen_ai.tool.call.result"]
        if span.operation in CHAT_OPERATIONS:
            for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
                for message in _messages(span, key):
                    for part in message.get("parts") or []:
                        if not isinstance(part, dict) or not isinstance(part.get("id"), str):
                            continue
                        if part.get("type") == "tool_call":
                            requested.setdefault(
                                part["id"],
                                (part.get("name"), parse_arguments(part.get("arguments"))),
                            )
                            asked_by.setdefault(part["id"], agent_name(owner(span)))
                        elif part.get("type") == "tool_call_response":
                            entry = found.setdefault(
                                part["id"], {"time": span.start, "agent": agent_name(owner(span))}
                            )
                            entry.setdefault("result", part.get("response"))
    for call_id, (tool, _) in requested.items():
        # A call the model asked for but no span or message answered: named, like a result-less
        # execute_tool span, never left out of the trajectory unnoticed.
        found.setdefault(call_id, {"time": 0, "tool": tool, "agent": asked_by[call_id]})
    out, missing = [], []
    for call_id, entry in sorted(found.items(), key=lambda item: item[1]["time"]):
        tool, args = requested.get(call_id, (None, None))
        # The span's arguments attribute is opt-in; the chat's tool_call part may still have them.
        tool = entry.get("tool") or tool
        args = entry["args"] if entry.get("args") is not None else args
        if "result" not in entry:
            missing.append(
                f"tool call {call_id!r} ({tool}, agent {entry.get('agent')}) has no recorded result"
            )
            continue
        out.append(
            reference(
                call_id,
                as_text(entry["result"]),
                options,
                title=call_title(tool, args),
                url=url_argument(args),
                agent=entry.get("agent"),
                tool=tool,
                args=args,
            )
        )
    if missing:  # every one named: the user fixes the log once, not once per call
        raise RecordError(
            f"{'; '.join(missing)} (gen_ai.tool.call.result or a tool_call_response part): "
            "is content capture enabled?"
        )
    return out


def _agent_above(span: Span, by_id: dict[str, Span]) -> str | None:
    """The span id of the nearest ``invoke_agent`` ancestor (not the span itself)."""
    seen = {span.span_id}
    parent = by_id.get(span.parent_id or "")
    while parent is not None and parent.span_id not in seen:
        if parent.operation == "invoke_agent":
            return parent.span_id
        seen.add(parent.span_id)
        parent = by_id.get(parent.parent_id or "")
    return None


def _messages(span: Span, key: str) -> list[dict[str, Any]]:
    """Messages of a span attribute: a JSON string (most SDKs) or a structured value."""
    raw = span.attributes.get(key)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RecordError(f"span {span.name!r}: {key} is not valid JSON ({exc.msg})") from exc
        except RecursionError:
            raise RecordError(f"span {span.name!r}: {key} is nested too deeply") from None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RecordError(f"span {span.name!r}: {key} is not a list of messages")
    return [m for m in raw if isinstance(m, dict)]


def _texts(message: dict[str, Any]) -> str:
    return "".join(
        str(p.get("content", ""))
        for p in message.get("parts") or []
        if isinstance(p, dict) and p.get("type") == "text"
    )


def _first_user_text(messages: list[dict[str, Any]]) -> str | None:
    for message in messages:
        if message.get("role") == "user" and (text := _texts(message)).strip():
            return text
    return None


def _output_text(messages: list[dict[str, Any]]) -> str:
    return "".join(_texts(m) for m in messages if m.get("role", "assistant") == "assistant")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
