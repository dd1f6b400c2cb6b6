"""``openai-responses``: JSONL of Responses API items, each read through the ``openai`` package's
own types (``ResponseOutputMessage``, ``ResponseFunctionToolCall``, ``ResponseFunctionWebSearch``,
...), so a record the API would not accept is an error naming the item and the field.

A record is ``{"id", "items": [...], "metadata"?}`` with the items as the OpenAI Agents SDK's
``result.to_input_list()`` returns them, or ``{"id", "input", "output", "metadata"?}``: a
request's ``input`` (a string or items) and the stored response (a ``Response`` object, or its
``output`` list).

- Question: a ``user`` message's text (string content or ``input_text`` parts).
- Answer: the last assistant ``message``'s ``output_text`` parts, joined; their ``url_citation``
  annotations become the session's citations, each on its span of the answer.
- References, in order, one per call: ``function_call_output`` (id = ``call_id``, tool and
  arguments from the ``function_call``), ``custom_tool_call_output``, ``mcp_call``,
  ``web_search_call`` (id = the item's id; its query, and the ``sources`` urls when the log
  includes them: the page text itself is not in the log, which ``unreadable`` says),
  ``file_search_call`` results and ``code_interpreter_call`` logs.
- A handoff (the Agents SDK's ``transfer_to_<agent>`` call, answered ``{"assistant": name}``) is
  not a reference: it names the agent that makes the calls after it (``agent`` on each).
- ``reasoning`` items and ``item_reference``\\s are the model's own state, not what it pulled.
A call without its output is an error naming it, as in every format; so is an item type this
converter does not read, rather than a trajectory silently missing it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..._validation import describe_validation_error
from ._chat import ChatLog, log_sessions
from ._common import (
    Converted,
    ConvertOptions,
    RecordError,
    ToolCalls,
    as_text,
    call_title,
    parse_arguments,
    reference,
    require,
    url_argument,
)

NAME = "openai-responses"
# Items that are the model's own state or output, never something it pulled.
_OUTPUT_PARTS = ("output_text", "refusal")
_NOT_PULLED = frozenset({"reasoning", "item_reference", "compaction", "image_generation_call"})


def convert_record(record: dict[str, Any], options: ConvertOptions) -> Converted:
    session_id = require(record, "id", str)
    reader = _Reader(options)
    for where, item in _items(record):
        reader.read(where, item)
    reader.calls.check_all_answered()
    return log_sessions(record, session_id, reader.log, last_turn=options.last_turn)


def _items(record: dict[str, Any]) -> list[tuple[str, BaseModel]]:
    """Every item of the record as ``(where, typed item)``, in conversation order."""
    if "items" in record:
        raw = require(record, "items", list)
        return [(f"items[{i}]", _typed(item, f"items[{i}]")) for i, item in enumerate(raw)]
    if "input" not in record or "output" not in record:
        raise RecordError(
            "expected 'items' (the Agents SDK's to_input_list()) or 'input' and 'output' "
            "(a request and its stored response)"
        )
    request = record["input"]
    out: list[tuple[str, BaseModel]] = []
    if isinstance(request, str):
        out.append(("input", _typed({"role": "user", "content": request}, "input")))
    elif isinstance(request, list):
        out.extend((f"input[{i}]", _typed(item, f"input[{i}]")) for i, item in enumerate(request))
    else:
        raise RecordError(f"'input' must be a string or a list, got {type(request).__name__}")
    output = record["output"]
    if isinstance(output, dict):
        response = _validated(_response_model(), output, "output")
        out.extend((f"output.output[{i}]", item) for i, item in enumerate(response.output))
    elif isinstance(output, list):
        out.extend((f"output[{i}]", _typed(item, f"output[{i}]")) for i, item in enumerate(output))
    else:
        raise RecordError(
            f"'output' must be a Response object or a list, got {type(output).__name__}"
        )
    return out


class _Reader:
    """Walks the typed items once, filling the chat log and the calls awaiting their output."""

    def __init__(self, options: ConvertOptions) -> None:
        self.options = options
        self.log = ChatLog()
        self.calls = ToolCalls("function_call", "function_call_output with call_id", "{}")
        self.agent: str | None = None  # set by a handoff: who makes the calls after it

    def read(self, where: str, item: BaseModel) -> None:
        kind = _kind(item)
        if kind == "message":
            self._message(where, item)
        elif kind in ("function_call", "custom_tool_call"):
            args: Any = getattr(item, "arguments", None)
            args = parse_arguments(args) if args is not None else getattr(item, "input", None)
            self.calls.asked(item.call_id, where, item.name, args)  # type: ignore[attr-defined]
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item)
        elif kind == "web_search_call":
            self._web_search(item)
        elif kind == "file_search_call":
            self._file_search(item)
        elif kind == "mcp_call":
            self._mcp(item)
        elif kind == "code_interpreter_call":
            self._code(item)
        elif kind not in _NOT_PULLED:
            raise RecordError(f"{where}: item type {kind!r} is not read by {NAME}")

    def _ref(self, ref_id: str, text: str, tool: str | None, args: Any, **extra: Any) -> None:
        self.log.pulled(
            reference(
                ref_id,
                text,
                self.options,
                title=extra.pop("title", None) or call_title(tool, args),
                url=extra.pop("url", None) or url_argument(args),
                tool=tool,
                args=args,
                agent=self.agent,
                **extra,
            )
        )

    def _message(self, where: str, item: BaseModel) -> None:
        role = getattr(item, "role", None)
        if role == "user":
            text = _input_text(getattr(item, "content", None))
            if text.strip():
                self.log.ask(text, where)
        elif role == "assistant":
            text, citations = _output_text(item)
            if text.strip():
                self.log.answered(text, citations)

    def _output(self, item: Any) -> None:
        call_id = item.call_id
        tool, args = self.calls.answered(call_id)
        text = _output_value(item.output)
        handoff = _handoff_to(tool, text)
        if handoff is not None:
            self.agent = handoff
            return
        self._ref(call_id, text, tool, args)

    def _web_search(self, item: Any) -> None:
        action = item.action
        kind = getattr(action, "type", None)
        sources = [s.url for s in getattr(action, "sources", None) or [] if getattr(s, "url", None)]
        if kind == "search":
            queries = [q for q in [getattr(action, "query", None), *(action.queries or [])] if q]
            args: dict[str, Any] = {"query": queries[0] if queries else None}
            lines = [f"web search: {', '.join(dict.fromkeys(queries))}"]
        elif kind in ("open_page", "find", "find_in_page"):
            args = {"url": action.url}
            if getattr(action, "pattern", None):
                args["pattern"] = action.pattern
            lines = [f"web search {kind.replace('_', ' ')}: {action.url}"]
        else:
            args, lines = {}, [f"web search ({kind})"]
        lines += [f"source: {url}" for url in sources]
        failed = item.status == "failed"
        self._ref(
            item.id,
            "\n".join(lines),
            "web_search",
            args,
            urls=sources or None,
            unreadable=None
            if failed
            else "the text of the pages the search read (the Responses API does not return it)",
            is_error=True if failed else None,
        )

    def _file_search(self, item: Any) -> None:
        args = {"queries": list(item.queries)}
        if item.results is None:
            text, unreadable = "", "the results (not included in the log: file_search_call.results)"
        else:
            text = "\n\n".join(f"{r.filename or r.file_id}:\n{r.text or ''}" for r in item.results)
            unreadable = None
        self._ref(item.id, text, "file_search", args, unreadable=unreadable)

    def _mcp(self, item: Any) -> None:
        args = parse_arguments(item.arguments)
        if item.output is None and item.error is None:
            raise RecordError(f"mcp_call {item.id!r} ({item.name}) has no output")
        failed = item.output is None
        text = _mcp_error(item.error) if failed else item.output
        self._ref(item.id, text, item.name, args, server=item.server_label, is_error=failed or None)

    def _code(self, item: Any) -> None:
        logs = [o.logs for o in item.outputs or [] if getattr(o, "type", None) == "logs"]
        self._ref(item.id, "\n".join(logs), "code_interpreter", {"code": item.code})


def _mcp_error(error: Any) -> str:
    """An MCP call's error (protocol, tool execution or HTTP error; a string in older SDKs)."""
    if isinstance(error, str):
        return f"MCP tool error: {error}"
    detail = getattr(error, "message", None)
    if detail is None:
        detail = as_text(getattr(error, "content", None))
    return f"MCP tool error ({getattr(error, 'type', 'error')}): {detail}"


def _handoff_to(tool: str | None, output: str) -> str | None:
    """The agent a handoff hands over to: the Agents SDK answers ``transfer_to_<agent>`` with
    ``{"assistant": "<agent name>"}``."""
    if not tool or not tool.startswith("transfer_to_"):
        return None
    try:
        value = json.loads(output)
    except (ValueError, RecursionError):  # not JSON, or a number Python will not convert
        return None
    if (
        isinstance(value, dict)
        and set(value) == {"assistant"}
        and isinstance(value["assistant"], str)
    ):
        return value["assistant"]
    return None


def _kind(item: BaseModel) -> str:
    kind = getattr(item, "type", None)
    return kind if isinstance(kind, str) else "message"  # an easy input message has no type


def _input_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        getattr(part, "text", "") or ""
        for part in content or []
        if getattr(part, "type", None) in ("input_text", "output_text")
    )


def _output_text(item: Any) -> tuple[str, list[dict[str, Any]]]:
    """An assistant message's text, and its url citations on their spans of that text."""
    content = item.content
    if isinstance(content, str):
        return content, []
    text, citations = "", []
    for part in content:
        if getattr(part, "type", None) not in ("output_text", "input_text"):
            continue  # a refusal is not an answer
        piece = part.text
        for note in getattr(part, "annotations", None) or []:
            if getattr(note, "type", None) != "url_citation":
                continue
            ok = 0 <= note.start_index <= note.end_index <= len(piece)
            citations.append(
                {
                    "start": len(text) + note.start_index if ok else None,
                    "end": len(text) + note.end_index if ok else None,
                    "url": note.url,
                    "title": note.title,
                    # Its span becomes an "attributed" excerpt of the reference it resolves to.
                    "kind": "url_citation",
                }
            )
        text += piece
    return text, citations


def _output_value(output: Any) -> str:
    """A tool's output: a string, or a list of ``input_text`` (and image/file) parts."""
    if isinstance(output, str):
        return output
    return "\n".join(
        getattr(part, "text", "") or ""
        for part in output or []
        if getattr(part, "type", None) == "input_text"
    )


# --- the openai package's types, by item type ---------------------------------------------


def _typed(item: Any, where: str) -> BaseModel:
    """One item as the ``openai`` type its ``type`` names (a message without one: by role)."""
    if not isinstance(item, dict):
        raise RecordError(f"{where} is not an object")
    kind = item.get("type", "message")
    model: type[BaseModel] | TypeAdapter[Any] | None
    if kind == "message":
        model = _assistant_model() if _is_output_message(item) else _input_message_model()
    elif kind in _NOT_PULLED:
        model = _passthrough()
    else:
        model = _item_models().get(kind) if isinstance(kind, str) else None
    if model is None:
        raise RecordError(f"{where}: item type {kind!r} is not read by {NAME}")
    typed: BaseModel = _validated(model, item, f"{where} ({kind})")
    return typed


def _is_output_message(item: dict[str, Any]) -> bool:
    content = item.get("content")
    return (
        item.get("role") == "assistant"
        and isinstance(content, list)
        and any(
            isinstance(p, dict) and p.get("type") in ("output_text", "refusal") for p in content
        )
    )


def _validated(model: Any, item: Any, where: str) -> Any:
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(item)
        return model.model_validate(item)
    except ValidationError as exc:
        raise RecordError(f"{where}: {describe_validation_error(exc)}") from None


@cache
def _item_models() -> dict[str, type[BaseModel]]:
    # Imported on first use: the openai package's types take a moment to load.
    from openai.types.responses import (
        ResponseCodeInterpreterToolCall,
        ResponseCustomToolCall,
        ResponseCustomToolCallOutput,
        ResponseFileSearchToolCall,
        ResponseFunctionToolCall,
        ResponseFunctionWebSearch,
        ResponseReasoningItem,
    )
    from openai.types.responses.response_input_item import FunctionCallOutput, McpCall

    return {
        "function_call": ResponseFunctionToolCall,
        "function_call_output": FunctionCallOutput,
        "custom_tool_call": ResponseCustomToolCall,
        "custom_tool_call_output": ResponseCustomToolCallOutput,
        "web_search_call": ResponseFunctionWebSearch,
        "file_search_call": ResponseFileSearchToolCall,
        "mcp_call": McpCall,
        "code_interpreter_call": ResponseCodeInterpreterToolCall,
        "reasoning": ResponseReasoningItem,
    }


@cache
def _assistant_model() -> type[BaseModel]:
    from openai.types.responses import ResponseOutputMessage

    return ResponseOutputMessage


@cache
def _input_message_model() -> TypeAdapter[Any]:
    from openai.types.responses import EasyInputMessage
    from openai.types.responses.response_input_item import Message

    return TypeAdapter(EasyInputMessage | Message)


@cache
def _response_model() -> type[BaseModel]:
    from openai.types.responses import Response

    return Response


@cache
def _passthrough() -> type[BaseModel]:
    class Item(BaseModel, extra="allow"):
        type: str

    return Item


__all__: Sequence[str] = ("NAME", "convert_record")
