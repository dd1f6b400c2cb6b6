"""``openai-chat``: JSONL of ``{"id", "messages", "metadata"?}`` with Chat Completions messages.

Each answered user turn is a session (``_turns``): question, the turn's user text; answer, its
last assistant message that has text; references, the ``tool`` messages of the turn, in order,
id = their ``tool_call_id``; the calling tool's name
and arguments (from the assistant's ``tool_calls``) give the title and provenance, and a ``url``
argument the reference's url. Legacy function calling (an assistant ``function_call``, answered
by the next ``role: "function"`` message) is read the same way; having no call id, such a result
is ``function-N``, N its message's index. A call with no result is an error naming it: a
reference the judge never sees must not pass unnoticed. ``url_citation`` annotations on the
answer become its citations.
"""

from __future__ import annotations

from typing import Any

from ._common import (
    Converted,
    ConvertOptions,
    RecordError,
    ToolCalls,
    call_title,
    parse_arguments,
    part_text,
    reference,
    require,
    url_argument,
)
from ._turns import Answered, Asked, Event, Pulled, turn_sessions

NAME = "openai-chat"


def convert_record(record: dict[str, Any], options: ConvertOptions) -> Converted:
    session_id = require(record, "id", str)
    messages = require(record, "messages", list)
    calls = ToolCalls("tool call", "tool message with tool_call_id")
    legacy: tuple[int, str | None, Any] | None = None  # a function_call awaiting its result
    events: list[Event] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RecordError(f"messages[{index}] is not an object")
        role = message.get("role")
        if role == "user":
            events.append(Asked(_text(message.get("content"), index), f"messages[{index}]"))
        elif role == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    function = call.get("function") or {}
                    if not isinstance(function, dict):
                        raise RecordError(
                            f"messages[{index}]: tool call {call['id']!r}: 'function' must be "
                            f"an object, got {type(function).__name__}"
                        )
                    arguments = parse_arguments(function.get("arguments"))
                    calls.asked(call["id"], index, function.get("name"), arguments)
            if message.get("function_call") is not None:
                _check_answered(legacy)
                legacy = (index, *_function_call(message["function_call"], index))
            text = _text(message.get("content"), index)
            if text:
                notes = message.get("annotations") or []
                raw = tuple(_url_citation(a, text, index) for a in notes if _is_url_citation(a))
                events.append(Answered(text, raw))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise RecordError(f"messages[{index}]: tool message without a tool_call_id")
            tool, args = calls.answered(call_id)
            events.append(Pulled(_result(call_id, tool, args, message, index, options)))
        elif role == "function":
            name = message.get("name")
            tool, args = (legacy[1], legacy[2]) if legacy else (_str(name), None)
            legacy = None
            ref = _result(f"function-{index}", tool, args, message, index, options)
            events.append(Pulled(ref))
    calls.check_all_answered()
    _check_answered(legacy)
    return turn_sessions(record, session_id, events, last_turn=options.last_turn)


def _result(
    ref_id: str,
    tool: str | None,
    args: Any,
    message: dict[str, Any],
    index: int,
    options: ConvertOptions,
) -> dict[str, Any]:
    return reference(
        ref_id,
        _text(message.get("content"), index),
        options,
        title=call_title(tool, args),
        url=url_argument(args),
        tool=tool,
        args=args,
    )


def _function_call(call: Any, index: int) -> tuple[str | None, Any]:
    """A legacy ``function_call``: its function's name and parsed arguments."""
    if not isinstance(call, dict):
        raise RecordError(
            f"messages[{index}]: 'function_call' must be an object, got {type(call).__name__}"
        )
    return _str(call.get("name")), parse_arguments(call.get("arguments"))


def _check_answered(legacy: tuple[int, str | None, Any] | None) -> None:
    if legacy is not None:
        index, name, _ = legacy
        raise RecordError(
            f"messages[{index}]: function call ({name}) has no result "
            "(no 'function' message after it)"
        )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _text(content: Any, index: int) -> str:
    """A message's text: a string, or the text parts of a content list joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part_text(part, f"messages[{index}]")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    raise RecordError(f"messages[{index}].content must be a string or a list of parts")


def _is_url_citation(annotation: Any) -> bool:
    return isinstance(annotation, dict) and annotation.get("type") == "url_citation"


def _url_citation(annotation: dict[str, Any], answer: str, index: int) -> dict[str, Any]:
    body = annotation.get("url_citation") or {}
    if not isinstance(body, dict):
        raise RecordError(
            f"messages[{index}]: url_citation annotation must be an object, "
            f"got {type(body).__name__}"
        )
    start, end = body.get("start_index"), body.get("end_index")
    span = isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(answer)
    return {
        "start": start if span else None,
        "end": end if span else None,
        "url": body.get("url"),
        "title": body.get("title"),
        "kind": "url_citation",
    }
