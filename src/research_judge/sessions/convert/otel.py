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
A trace of the Vercel AI SDK's own ``ai.*`` spans is read by ``_vercel`` instead.
"""

from __future__ import annotations

from typing import Any

from . import _vercel
from ._agents import AgentTree
from ._common import (
    ConvertOptions,
    RecordError,
    SessionDict,
    parse_arguments,
    tool_reference,
)
from ._otlp import Span, Trace, json_list

NAME = "otel"
CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})


def convert_trace(trace: Trace, options: ConvertOptions) -> SessionDict:
    if _vercel.is_vercel(trace):  # the AI SDK's own ai.* spans, not the GenAI conventions
        return _vercel.convert_trace(trace, options)
    tree = AgentTree(trace, _is_agent, _agent_name)
    spans = tree.spans
    root = tree.roots[0] if tree.roots else None
    root_id = root.span_id if root else None
    chats = [s for s in spans if s.operation in CHAT_OPERATIONS]
    root_chats = [s for s in chats if tree.agent_of[s.span_id] == root_id]
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

    trajectory = _references(tree, options)
    conversation = next(
        (c for s in spans if (c := _str(s.attributes.get("gen_ai.conversation.id")))), None
    )
    return tree.session(
        conversation,
        root,
        question,
        answer,
        trajectory,
        agent=tree.agent_name(root.span_id) if root is not None else None,
        service=_str(spans[0].resource.get("service.name")),
    )


def _is_agent(span: Span) -> bool:
    return span.operation == "invoke_agent"


def _agent_name(agent: Span) -> str | None:
    return (
        _str(agent.attributes.get("gen_ai.agent.name"))
        or _str(agent.attributes.get("gen_ai.agent.id"))
        or agent.name
    )


def _references(tree: AgentTree, options: ConvertOptions) -> list[dict[str, Any]]:
    """One reference per tool call id, ordered by when its result first appears."""
    # (time, call id) -> what is known about the call; execute_tool spans win over message parts.
    found: dict[str, dict[str, Any]] = {}
    requested: dict[str, tuple[str | None, Any]] = {}  # call id -> (tool, arguments) from parts
    asked_by: dict[str, str | None] = {}  # call id -> the agent whose chat asked for it
    for span in tree.spans:
        if span.operation == "execute_tool":
            a = span.attributes
            call_id = _str(a.get("gen_ai.tool.call.id")) or span.span_id
            entry = found.setdefault(call_id, {"time": span.start})
            entry.update(
                tool=_str(a.get("gen_ai.tool.name")),
                args=parse_arguments(a.get("gen_ai.tool.call.arguments")),
                agent=tree.owner_name(span),
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
                            asked_by.setdefault(part["id"], tree.owner_name(span))
                        elif part.get("type") == "tool_call_response":
                            entry = found.setdefault(
                                part["id"], {"time": span.start, "agent": tree.owner_name(span)}
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
            tool_reference(call_id, tool, args, entry["result"], entry.get("agent"), options)
        )
    if missing:  # every one named: the user fixes the log once, not once per call
        raise RecordError(
            f"{'; '.join(missing)} (gen_ai.tool.call.result or a tool_call_response part): "
            "is content capture enabled?"
        )
    return out


def _messages(span: Span, key: str) -> list[dict[str, Any]]:
    return json_list(span, key, "list of messages")


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
