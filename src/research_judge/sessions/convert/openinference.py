"""``openinference``: OTLP JSON traces under the OpenInference conventions (Arize Phoenix).

Where they differ from the GenAI conventions (``otel``): the span kind is
``openinference.span.kind`` (``AGENT``, ``LLM``, ``TOOL``, ``RETRIEVER``, ...), messages are
flattened into indexed attributes (``llm.input_messages.0.message.role``), a tool span's call is
``tool.name`` / ``tool.parameters`` (or ``input.value``) and its result ``output.value``, and
retrieved documents are ``retrieval.documents.N.document.*`` on ``RETRIEVER`` spans.

One session per trace, id ``session.id`` when a span has one, else the trace id. Agents are
``AGENT`` spans (the root agent has none above it; without any, the trace's root span stands
for it). Question: the first user message of the root agent's first ``LLM`` span (else the root
span's ``input.value``); answer: the last root ``LLM`` span's output message (else the root
span's ``output.value``). References, in time order, one per id: ``TOOL`` spans (id
``tool_call.id`` or the span id), each ``RETRIEVER`` document (its ``document.id``), and ``tool``
messages of ``LLM`` inputs (``message.tool_call_id``) not logged as a span. A tool call of an
``LLM`` output message (``message.tool_calls.N.tool_call.id``) that nothing answered is an error
naming it, as in every format.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from ._agents import AgentTree
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
from ._otlp import Span, Trace

NAME = "openinference"
KIND = "openinference.span.kind"


def convert_trace(trace: Trace, options: ConvertOptions) -> SessionDict:
    tree = AgentTree(trace, _is_agent, _agent_name)
    spans, roots = tree.spans, tree.roots
    top = [s for s in spans if s.parent_id not in tree.by_id]
    root = roots[0] if roots else (top[0] if top else None)
    if root is None:
        raise RecordError("no root span")
    root_id = root.span_id if roots else None
    llms = [s for s in spans if _kind(s) == "LLM" and tree.agent_of[s.span_id] == root_id]
    question = _first_user(_messages(llms[0], "llm.input_messages")) if llms else None
    question = question or _str(root.attributes.get("input.value"))
    if not question:
        raise RecordError("no question: no user message in the root agent's first LLM span")
    answer = _last_text(_messages(llms[-1], "llm.output_messages")) if llms else None
    answer = answer or _str(root.attributes.get("output.value"))
    if not answer:
        raise RecordError("no answer: no output message in the root agent's last LLM span")

    found: dict[str, dict[str, Any]] = {}
    requested: dict[str, tuple[str | None, Any, str | None]] = {}  # id -> (tool, args, agent)

    def add(ref_id: str, span: Span, tool: str | None, args: Any, text: str, **extra: Any) -> None:
        item = {"tool": tool, "args": args, "agent": tree.owner_name(span), "text": text, **extra}
        earlier = found.setdefault(ref_id, item)  # one reference per id, where it first appeared
        for key in ("tool", "args"):  # a tool message names less of the call than its span
            if earlier[key] is None:
                earlier[key] = item[key]

    for span in spans:
        kind, a = _kind(span), span.attributes
        if kind == "TOOL":
            call_id = _str(a.get("tool_call.id")) or span.span_id
            tool = _str(a.get("tool.name")) or span.name
            if a.get("output.value") is None:
                raise RecordError(f"tool span {call_id!r} ({tool}) has no output.value")
            args = parse_arguments(a.get("tool.parameters") or a.get("input.value"))
            add(call_id, span, tool, args, as_text(a["output.value"]))
        elif kind == "RETRIEVER":
            query = {"query": _str(a.get("input.value"))}
            for i, doc in enumerate(_indexed(a, "retrieval.documents")):
                doc_id = _str(doc.get("document.id")) or f"{span.span_id}#{i}"
                url = url_argument(parse_arguments(doc.get("document.metadata")))
                text = as_text(doc.get("document.content", ""))
                add(doc_id, span, span.name, query, text, url=url)
        elif kind == "LLM":
            for message in _messages(span, "llm.input_messages"):
                tool_call_id = _str(message.get("message.tool_call_id"))
                if message.get("message.role") == "tool" and tool_call_id:
                    tool_name = _str(message.get("message.name"))
                    add(tool_call_id, span, tool_name, None, _content(message))
            # The calls: in the output messages, and in the assistant messages of the input
            # history (the call of a tool message there, when the LLM span that made it is
            # not in the trace or did not record its output).
            for key in ("llm.output_messages", "llm.input_messages"):
                for message in _messages(span, key):
                    for call in _indexed(message, "message.tool_calls"):
                        if asked := _str(call.get("tool_call.id")):
                            name = _str(call.get("tool_call.function.name"))
                            args = parse_arguments(call.get("tool_call.function.arguments"))
                            requested.setdefault(asked, (name, args, tree.owner_name(span)))
    # A call the model asked for: its name and arguments complete a result that lacks them, and
    # one that no span or message answered is named, never left out unnoticed.
    missing = []
    for call_id, (name, args, agent) in requested.items():
        if call_id not in found:
            missing.append(f"tool call {call_id!r} ({name}, agent {agent}) has no recorded result")
            continue
        item = found[call_id]
        item["tool"], item["args"] = item["tool"] or name, item["args"] or args
    if missing:
        raise RecordError("; ".join(missing) + " (no TOOL span or tool message with its id)")
    trajectory = [
        reference(
            ref_id,
            item["text"],
            options,
            title=call_title(item["tool"], item["args"]),
            url=item.get("url") or url_argument(item["args"]),
            agent=item["agent"],
            tool=item["tool"],
            args=item["args"],
        )
        for ref_id, item in found.items()
    ]
    session_id = next((v for s in spans if (v := _str(s.attributes.get("session.id")))), None)
    agent = tree.agent_name(root.span_id)
    return tree.session(session_id, root, question, answer, trajectory, agent=agent)


def _kind(span: Span) -> str:
    return str(span.attributes.get(KIND, "")).upper()


def _is_agent(span: Span) -> bool:
    return _kind(span) == "AGENT"


def _agent_name(agent: Span) -> str | None:
    return _str(agent.attributes.get("agent.name")) or agent.name


def _indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened list attributes (``prefix.0.key``) back into a list of dicts, by index."""
    items: dict[int, dict[str, Any]] = defaultdict(dict)
    head = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(head):
            continue
        index, _, rest = key[len(head) :].partition(".")
        if index.isdigit() and rest:
            items[int(index)][rest] = value
    return [items[i] for i in sorted(items)]


def _messages(span: Span, prefix: str) -> list[dict[str, Any]]:
    return _indexed(span.attributes, prefix)


def _content(message: dict[str, Any]) -> str:
    """A message's text: ``message.content``, or its ``message.contents`` text parts."""
    text = message.get("message.content")
    if isinstance(text, str):
        return text
    parts = _indexed(message, "message.contents")
    return "".join(
        str(p.get("message_content.text", ""))
        for p in parts
        if p.get("message_content.type", "text") == "text"
    )


def _first_user(messages: list[dict[str, Any]]) -> str | None:
    for message in messages:
        if message.get("message.role") == "user" and (text := _content(message)).strip():
            return text
    return None


def _last_text(messages: list[dict[str, Any]]) -> str | None:
    texts = [t for m in messages if (t := _content(m)).strip()]
    return texts[-1] if texts else None


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return None
