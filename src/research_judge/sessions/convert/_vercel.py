"""The Vercel AI SDK's own span attributes (``ai.*``), read by the ``otel`` format.

The AI SDK's telemetry (its ``LegacyOpenTelemetry`` integration, the default before the GenAI
conventions) records ``ai.generateText`` / ``ai.streamText`` spans (the call, with ``ai.prompt``
and ``ai.response.text``), one ``...doGenerate`` / ``...doStream`` span per model call (with
``ai.prompt.messages`` and ``ai.response.toolCalls``) and one ``ai.toolCall`` span per tool
execution (``ai.toolCall.name``, ``.id``, ``.args``, ``.result``). Mapping:

- agents: the ``ai.generateText``-like spans; a call nested inside another one (a tool that runs
  its own ``generateText``) is a sub-agent, named by ``ai.telemetry.functionId``;
- question: the root call's ``ai.prompt`` (its ``prompt``, else its first user message), else the
  first user message of its first model call's ``ai.prompt.messages``;
- answer: the root call's ``ai.response.text`` (else its last model call's);
- references, in time order, one per tool call id: ``ai.toolCall`` spans, and ``tool-result``
  parts of ``ai.prompt.messages`` no span logged; a call (span, ``tool-call`` part or
  ``ai.response.toolCalls`` entry) with no result recorded is an error naming it.
"""

from __future__ import annotations

import json
from typing import Any

from ._agents import AgentTree
from ._common import (
    ConvertOptions,
    RecordError,
    SessionDict,
    parse_arguments,
    tool_reference,
)
from ._otlp import Span, Trace, json_list

CALLS = frozenset({"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"})
STEPS = frozenset({f"{call}.{step}" for call in CALLS for step in ("doGenerate", "doStream")})


def is_vercel(trace: Trace) -> bool:
    return any(_operation(s).startswith("ai.") for s in trace.spans)


def convert_trace(trace: Trace, options: ConvertOptions) -> SessionDict:
    tree = AgentTree(trace, _is_agent, _agent_name)
    if not tree.roots:
        raise RecordError("no ai.generateText or ai.streamText span (the AI SDK's call span)")
    root = tree.roots[0]
    steps = [
        s for s in tree.spans if _operation(s) in STEPS and tree.agent_of[s.span_id] == root.span_id
    ]
    question = _prompt_question(root) or next(
        (q for s in steps[:1] if (q := _first_user(json_list(s, "ai.prompt.messages")))), None
    )
    if not question:
        raise RecordError(
            "no question: the root call's ai.prompt and its first model call's "
            "ai.prompt.messages have no user text (is recordInputs off?)"
        )
    answer = _str(root.attributes.get("ai.response.text")) or next(
        (a for s in reversed(steps) if (a := _str(s.attributes.get("ai.response.text")))), None
    )
    if not answer:
        raise RecordError(
            "no answer: the root call has no ai.response.text (is recordOutputs off?)"
        )
    metadata = {
        key.removeprefix("ai.telemetry.metadata."): value
        for key, value in root.attributes.items()
        if key.startswith("ai.telemetry.metadata.")
    }
    return tree.session(
        None,
        root,
        question,
        answer,
        _references(tree, options),
        agent=_agent_name(root),
        model=_str(root.attributes.get("ai.model.id")),
        service=_str(tree.spans[0].resource.get("service.name")),
        **{k: v for k, v in metadata.items() if k not in ("agent", "model", "service")},
    )


def _references(tree: AgentTree, options: ConvertOptions) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    requested: dict[str, tuple[str | None, Any, str | None]] = {}  # id -> (tool, args, agent)
    for span in tree.spans:
        op, a = _operation(span), span.attributes
        if op == "ai.toolCall":
            call_id = _str(a.get("ai.toolCall.id")) or span.span_id
            tool = _str(a.get("ai.toolCall.name"))
            args = parse_arguments(a.get("ai.toolCall.args", a.get("ai.toolCall.input")))
            requested.setdefault(call_id, (tool, args, tree.owner_name(span)))
            result = a.get("ai.toolCall.result", a.get("ai.toolCall.output"))
            if result is not None:
                entry = found.setdefault(call_id, {"time": span.start})
                entry.update(tool=tool, args=args, agent=tree.owner_name(span))
                entry["result"] = parse_arguments(result)
        elif op in STEPS:
            agent = tree.owner_name(span)
            for message in json_list(span, "ai.prompt.messages"):
                for part in _parts(message):
                    part_id = part.get("toolCallId")
                    if not isinstance(part_id, str):
                        continue
                    if part.get("type") == "tool-call":
                        args = part.get("input", part.get("args"))
                        requested.setdefault(part_id, (part.get("toolName"), args, agent))
                    elif part.get("type") == "tool-result":
                        entry = found.setdefault(part_id, {"time": span.start, "agent": agent})
                        entry.setdefault("result", _tool_output(part))
            for call in json_list(span, "ai.response.toolCalls"):
                if isinstance(call.get("toolCallId"), str):
                    args = parse_arguments(call.get("input", call.get("args")))
                    requested.setdefault(call["toolCallId"], (call.get("toolName"), args, agent))
    missing = [
        f"tool call {call_id!r} ({tool}, agent {agent}) has no recorded result"
        for call_id, (tool, _, agent) in requested.items()
        if call_id not in found
    ]
    if missing:
        raise RecordError(
            "; ".join(missing) + " (no ai.toolCall.result or tool-result part: did the tool "
            "fail, or is recordOutputs off?)"
        )
    out = []
    for call_id, entry in sorted(found.items(), key=lambda item: item[1]["time"]):
        tool, args, _ = requested.get(call_id, (None, None, None))
        tool = entry.get("tool") or tool
        args = entry["args"] if entry.get("args") is not None else args
        out.append(
            tool_reference(call_id, tool, args, entry["result"], entry.get("agent"), options)
        )
    return out


def _tool_output(part: dict[str, Any]) -> Any:
    """A ``tool-result`` part's value: ``output`` (``{"type": "json"|"text", "value"}``, AI SDK
    5 and later) or ``result`` (earlier versions)."""
    output = part.get("output")
    if isinstance(output, dict) and "value" in output:
        return output["value"]
    return output if output is not None else part.get("result")


def _prompt_question(root: Span) -> str | None:
    prompt = root.attributes.get("ai.prompt")
    if isinstance(prompt, str):
        try:
            prompt = json.loads(prompt)
        except (ValueError, RecursionError):  # not JSON, or a number Python will not convert
            return prompt if prompt.strip() else None
    if not isinstance(prompt, dict):
        return None
    if isinstance(prompt.get("prompt"), str) and prompt["prompt"].strip():
        return str(prompt["prompt"])
    messages = prompt.get("messages")
    return (
        _first_user([m for m in messages if isinstance(m, dict)])
        if isinstance(messages, list)
        else None
    )


def _first_user(messages: list[dict[str, Any]]) -> str | None:
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        text = (
            content
            if isinstance(content, str)
            else "".join(str(p.get("text", "")) for p in _parts(message) if p.get("type") == "text")
        )
        if text.strip():
            return text
    return None


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _operation(span: Span) -> str:
    op = span.attributes.get("ai.operationId")
    return op if isinstance(op, str) else ""


def _is_agent(span: Span) -> bool:
    return _operation(span) in CALLS


def _agent_name(agent: Span) -> str | None:
    return (
        _str(agent.attributes.get("ai.telemetry.functionId"))
        or _str(agent.attributes.get("resource.name"))
        or _operation(agent)
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
