"""``claude-agent``: Claude Agent SDK / Claude Code ``stream-json`` output and ``.jsonl``
transcripts: one JSON message per line, ``type`` ``system`` / ``user`` / ``assistant`` /
``result``, grouped into sessions by ``session_id`` (``sessionId`` in transcripts), across lines
and files.

- Each ``message`` is read through the ``anthropic`` package's types: an assistant line holds a
  Messages API ``Message``, a user line a ``MessageParam``; a line they reject is an error naming
  ``file:line`` and the field, and so is its session (part of it would be missing).
- Question: a main-thread user message's text. Answer: the main thread's last assistant text
  (the ``result`` message's ``result`` when no text was streamed). A ``result`` with
  ``is_error`` makes the session an error naming its ``subtype``.
- References: ``tool_result`` blocks (and server tools' result blocks), id = ``tool_use_id``,
  tool and input from the ``tool_use``, as in ``anthropic``. Sub-agents: a message with
  ``parent_tool_use_id`` (a transcript's ``isSidechain`` line) belongs to the sub-agent that
  ``Task`` call started; its results are references too, ``agent`` naming the sub-agent
  (the call's ``subagent_type``), and the ``Task`` result (the sub-agent's report) is the main
  agent's reference.
- Other line types (``stream_event`` partial messages, transcript ``summary`` lines, ...) hold no
  message of the conversation and are passed over, as the SDK's own parser does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..._validation import describe_validation_error
from ...errors import InputFileError
from ._chat import ChatLog, log_sessions
from ._common import (
    SHAPE_ERRORS,
    Converted,
    ConvertOptions,
    Note,
    RecordError,
    SessionDict,
    ToolCalls,
    jsonl_records,
    unexpected,
)
from .anthropic import result_reference

NAME = "claude-agent"
_MESSAGES = frozenset({"system", "user", "assistant", "result"})
_SPAWNERS = frozenset({"Task", "Agent"})  # the tool that starts a sub-agent (renamed over time)


@dataclass
class _Line:
    number: int
    data: dict[str, Any]


@dataclass
class _Stream:
    session_id: str
    path: Path  # the file of its first line, for messages
    lines: list[tuple[Path, _Line]] = field(default_factory=list)
    broken: str | None = None  # file:line of a line of it that could not be read


def read_sessions(
    paths: list[Path], options: ConvertOptions
) -> Iterator[tuple[SessionDict, Path, int | None, str] | InputFileError | Note]:
    """Every session of the files (in order of first appearance) or the error naming it."""
    streams: dict[str, _Stream] = {}
    for path in paths:
        for number, data in jsonl_records(path):
            if isinstance(data, InputFileError):
                yield data
                continue
            kind = data.get("type")
            if kind not in _MESSAGES:
                continue
            session_id = data.get("session_id", data.get("sessionId"))
            if not isinstance(session_id, str) or not session_id:
                yield InputFileError(path, f"{kind} message without a session_id", number)
                continue
            stream = streams.get(session_id)
            if stream is None:
                stream = streams[session_id] = _Stream(session_id, path)
            problem = _check(data)
            if problem is not None:
                yield InputFileError(path, problem, number)
                stream.broken = stream.broken or f"{path}:{number}"
                continue
            stream.lines.append((path, _Line(number, data)))
    for stream in streams.values():
        label = f"session {stream.session_id!r}: "
        if stream.broken is not None:
            message = f"{label}some of its messages are in a line that could not be read"
            yield InputFileError(stream.path, f"{message} ({stream.broken})")
            continue
        try:
            converted = _convert(stream, options)
        except RecordError as exc:
            yield InputFileError(stream.path, f"{label}{exc}")
            continue
        except SHAPE_ERRORS as exc:
            yield InputFileError(stream.path, label + unexpected(exc))
            continue
        for note in converted.notes:
            yield Note(InputFileError(stream.path, f"{label}{note}"))
        for session in converted.sessions:
            yield session, stream.path, None, label


def _check(data: dict[str, Any]) -> str | None:
    """What is wrong with a message line's ``message``, by the anthropic types, if anything."""
    kind = data["type"]
    if kind not in ("user", "assistant"):
        return None
    message = data.get("message")
    if not isinstance(message, dict):
        return f"{kind} message: 'message' must be an object"
    adapter = _assistant_type() if kind == "assistant" else _user_type()
    try:
        adapter.validate_python(message)
    except ValidationError as exc:
        return f"{kind} message: {describe_validation_error(exc, root='message')}"
    return None


class _Walk:
    """One session's messages in order: turns, calls, sub-agents."""

    def __init__(self, options: ConvertOptions) -> None:
        self.options = options
        self.log = ChatLog()
        self.calls = ToolCalls("tool_use", "tool_result with tool_use_id", "line {}")
        self.spawned: dict[str, str] = {}  # Task call id -> the sub-agent's name
        self.prompts: dict[str, str] = {}  # Task prompt -> sub-agent name (transcript sidechains)
        self.sidechain_agent: str | None = None
        self.answer_id: str | None = None  # the API message id the answer's text came from
        self.answer = ""
        self.result: str | None = None
        self.meta: dict[str, Any] = {}

    def agent_of(self, data: dict[str, Any]) -> str | None:
        """The sub-agent a line belongs to; None for the main thread."""
        parent = data.get("parent_tool_use_id")
        if isinstance(parent, str) and parent:
            return self.spawned.get(parent, parent)
        if data.get("isSidechain"):
            return self.sidechain_agent or "sub-agent"
        return None

    def line(self, index: int, data: dict[str, Any]) -> None:
        kind = data["type"]
        if kind == "system":
            if data.get("subtype") == "init" and isinstance(data.get("model"), str):
                self.meta.setdefault("model", data["model"])
            return
        if kind == "result":
            self._result(data)
            return
        message = data["message"]
        blocks = _blocks(message.get("content"))
        agent = self.agent_of(data)
        if kind == "user":
            self._user(index, data, blocks, agent)
        else:
            self._assistant(index, message, blocks, agent)

    def _user(
        self, index: int, data: dict[str, Any], blocks: list[dict[str, Any]], agent: str | None
    ) -> None:
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        # A transcript's sidechain starts with the Task prompt: it names the sub-agent.
        if data.get("isSidechain") and text.strip() in self.prompts:
            self.sidechain_agent = self.prompts[text.strip()]
        for block in blocks:
            kind = block.get("type")
            if isinstance(kind, str) and kind.endswith("tool_result"):
                self._tool_result(index, block, agent)
        if agent is None and text.strip() and not data.get("isMeta"):
            self.close_answer()
            self.log.ask(text, f"line {index}")
            self.answer_id, self.answer, self.result = None, "", None

    def _assistant(
        self, index: int, message: dict[str, Any], blocks: list[dict[str, Any]], agent: str | None
    ) -> None:
        if isinstance(message.get("model"), str):
            self.meta.setdefault("model", message["model"])
        for block in blocks:
            kind = block.get("type")
            if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
                call_id, name, args = block["id"], block.get("name"), block.get("input")
                self.calls.asked(call_id, index, name, args)
                if name in _SPAWNERS and isinstance(args, dict):
                    sub = args.get("subagent_type") or args.get("description") or name
                    self.spawned[call_id] = str(sub)
                    if isinstance(args.get("prompt"), str):
                        self.prompts[args["prompt"].strip()] = str(sub)
            elif isinstance(kind, str) and kind.endswith("tool_result"):
                self._tool_result(index, block, agent)
        if agent is not None:
            return
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        if text.strip():
            # Claude Code streams one line per content block: a message's texts are joined.
            same = message.get("id") is not None and message.get("id") == self.answer_id
            self.answer = self.answer + text if same else text
            self.answer_id = message.get("id")
            self.log.answered(self.answer)

    def _tool_result(self, index: int, block: dict[str, Any], agent: str | None) -> None:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str) or not call_id:
            raise RecordError(f"line {index}: {block.get('type')} block without a tool_use_id")
        tool, args = self.calls.answered(call_id)
        ref = result_reference(call_id, block, tool, args, self.options)
        if agent is not None:
            ref["agent"] = agent
        self.log.pulled(ref)

    def _result(self, data: dict[str, Any]) -> None:
        if data.get("is_error"):
            detail = data.get("result") or ", ".join(map(str, data.get("errors") or []))
            raise RecordError(
                f"the run ended in error ({data.get('subtype')})"
                + (f": {detail}" if detail else "")
            )
        if isinstance(data.get("result"), str):
            self.result = data["result"]
        for key, meta_key in (("total_cost_usd", "cost_usd"), ("num_turns", "num_turns")):
            if isinstance(data.get(key), int | float):
                self.meta[meta_key] = data[key]
        self.close_answer()

    def close_answer(self) -> None:
        """A turn whose text never streamed takes the ``result`` message's text."""
        if self.log.turns and not (self.log.turns[-1].answer or "").strip() and self.result:
            self.log.answered(self.result)


def _convert(stream: _Stream, options: ConvertOptions) -> Converted:
    walk = _Walk(options)
    for _, line in stream.lines:
        walk.line(line.number, line.data)
    walk.close_answer()
    walk.calls.check_all_answered()
    if not walk.log.turns:
        raise RecordError(
            "no user message with text (the question): `claude -p` does not echo the prompt; "
            "record with --input-format stream-json --replay-user-messages, or add the prompt "
            "as a user line"
        )
    meta = {"session_id": stream.session_id, **walk.meta}
    sub_agents = list(dict.fromkeys(walk.spawned.values()))
    if sub_agents:
        meta["sub_agents"] = sub_agents
    return log_sessions(
        {"metadata": meta}, stream.session_id, walk.log, last_turn=options.last_turn
    )


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


@cache
def _assistant_type() -> TypeAdapter[Any]:
    from anthropic.types import Message

    return TypeAdapter(Message)


@cache
def _user_type() -> TypeAdapter[Any]:
    from anthropic.types import MessageParam

    return TypeAdapter(MessageParam)
