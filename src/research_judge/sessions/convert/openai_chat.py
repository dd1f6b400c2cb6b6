"""``openai-chat``: JSONL of ``{"id", "messages", "metadata"?}`` with Chat Completions messages.

Question: the first user message's text. Answer: the last assistant message that has text.
References: every ``tool`` message, in order, id = its ``tool_call_id``; the calling tool's name
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
    ConvertOptions,
    RecordError,
    SessionDict,
    ToolCalls,
    call_title,
    parse_arguments,
    part_text,
    reference,
    require,
    url_argument,
)
from .citations import record_session

NAME = "openai-chat"


def convert_record(record: dict[str, Any], options: ConvertOptions) -> SessionDict:
    session_id = require(record, "id", str)
    messages = require(record, "messages", list)
    calls = ToolCalls("tool call", "tool message with tool_call_id")
    legacy: tuple[int, str | None, Any] | None = None  # a function_call awaiting its result
    question: str | None = None
    answer: str | None = None
    annotations: list[Any] = []
    answer_index = 0
    trajectory: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RecordError(f"messages[{index}] is not an object")
        role = message.get("role")
        if role == "user" and question is None:
            question = _text(message.get("content"), index) or None
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
                answer, annotations = text, list(message.get("annotations") or [])
                answer_index = index
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise RecordError(f"messages[{index}]: tool message without a tool_call_id")
            tool, args = calls.answered(call_id)
            trajectory.append(_result(call_id, tool, args, message, index, options))
        elif role == "function":
            name = message.get("name")
            tool, args = (legacy[1], legacy[2]) if legacy else (_str(name), None)
            legacy = None
            trajectory.append(_result(f"function-{index}", tool, args, message, index, options))
    calls.check_all_answered()
    _check_answered(legacy)
    if question is None:
        raise RecordError("no user message with text (the question)")
    if answer is None:
        raise RecordError("no assistant message with text (the answer)")
    raw = [_url_citation(a, answer, answer_index) for a in annotations if _is_url_citation(a)]
    return record_session(record, session_id, question, answer, trajectory, raw)


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
    }
