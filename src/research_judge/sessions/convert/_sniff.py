"""What a log file looks like, from its first records: which formats read it, or why none does.

``convert auto`` picks the format from this; with an explicit format, a file that plainly is
something else is one message saying what it looks like (instead of one error per line).
Only the first lines are read (``SAMPLE_LINES``), so a large file costs nothing extra.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._spanarray import looks_like_span

SAMPLE_LINES = 20
_WHOLE_LIMIT = 64 * 1024 * 1024  # a pretty-printed document is parsed whole up to this size

_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "document",
     "search_result", "mcp_tool_use", "image"}
)  # fmt: skip
_RESPONSES_ITEMS = frozenset(
    {"message", "function_call", "function_call_output", "web_search_call", "reasoning"}
)
_STREAM_TYPES = frozenset({"system", "assistant", "user", "result"})
_OPENAI_ROLES = frozenset({"tool", "function", "developer"})


@dataclass(frozen=True)
class Sniffed:
    looks_like: str  # "JSONL of Chat Completions messages", "YAML", ...
    formats: tuple[str, ...]  # the formats that read it, the most specific first; () for none
    hint: str = ""  # what to do when no format reads it

    def describe(self) -> str:
        if self.formats:
            which = " or ".join(f"'{f}'" for f in self.formats)
            return f"looks like {self.looks_like} (read by {which})"
        return f"looks like {self.looks_like}; no convert format reads it" + (
            f" ({self.hint})" if self.hint else ""
        )


def sniff(path: Path) -> Sniffed | None:
    """What ``path`` looks like; None when its first lines say nothing (empty, or every one of
    them broken), in which case the chosen format's own errors are the best message."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1024 * 1024)
            first = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
            if first in (b"{", b"[") and _pretty(head):
                head += handle.read(_WHOLE_LIMIT)
                return _document(head)
    except OSError:
        return None
    if b"\x00" in head[:4096]:
        return Sniffed("a binary file", ())
    lines = head.split(b"\n")
    if len(head) == 1024 * 1024:
        lines = lines[:-1]  # the last line may be cut short by the read: not judged
    lines = [line for line in lines if line.strip()][:SAMPLE_LINES]
    values: list[Any] = []
    for raw in lines:
        try:
            values.append(json.loads(raw.decode("utf-8-sig")))
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
    if not values:
        return _not_json(lines)
    return _shape(values)


def _pretty(head: bytes) -> bool:
    """A document spread over lines: its first line is a lone ``{`` or ``[``."""
    first_line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    return first_line.strip() in (b"{", b"[")


def _document(data: bytes) -> Sniffed | None:
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if isinstance(value, list):
        if value and all(isinstance(v, Mapping) for v in value):
            if all(looks_like_span(v) for v in value):
                return _shape([value])
            return _shape(list(value))
        return Sniffed("a JSON array", ())
    return _shape([value])


def _not_json(lines: list[bytes]) -> Sniffed | None:
    if not lines or any(_json_start(line) for line in lines):
        return None  # broken JSON records: the format's own errors name each one
    try:
        text = [line.decode("utf-8") for line in lines]
    except UnicodeDecodeError:
        return Sniffed("a file that is not UTF-8 text", ())
    yaml_like = sum(
        1
        for t in text
        if t.lstrip().startswith(("- ", "---")) or ": " in t or t.rstrip().endswith(":")
    )
    if yaml_like * 2 >= len(text):
        hint = "a YAML cassette of recorded HTTP calls holds requests, not an agent's log"
        return Sniffed("YAML", (), hint)
    return Sniffed("text that is not JSON", ())


def _json_start(line: bytes) -> bool:
    return line.lstrip(b"\xef\xbb\xbf \t").startswith((b"{", b"["))


def _yaml_line(text: str) -> bool:
    return text.lstrip().startswith(("- ", "---")) or ": " in text or text.rstrip().endswith(":")


def looks_like(record: Any) -> Sniffed:
    """What one parsed record looks like (a sessions line that is not a session, say)."""
    return _shape([record])


def _shape(values: list[Any]) -> Sniffed:
    """The format of a sample of parsed records (JSONL lines, or one document)."""
    objects = [v for v in values if isinstance(v, Mapping)]
    arrays = [v for v in values if isinstance(v, list)]
    if arrays and all(v and all(looks_like_span(s) for s in v) for v in arrays) and not objects:
        return Sniffed("a JSON array of spans (an OpenTelemetry JS exporter)", ("otel",))
    if not objects:
        items = [i for a in arrays for i in a if isinstance(i, Mapping)]
        if items and any(i.get("type") in _RESPONSES_ITEMS or "role" in i for i in items):
            hint = 'write each list as {"id": ..., "items": [...]} for \'openai-responses\''
            return Sniffed("bare lists of Responses API items, without a record id", (), hint)
        return Sniffed("JSON that is not objects (one record per line)", ())
    if any("resourceSpans" in o for o in objects):
        keys = _attribute_keys(objects)
        if any(k.startswith(("openinference.", "llm.input_messages")) for k in keys):
            return Sniffed("OTLP JSON traces (OpenInference)", ("openinference", "otel"))
        return Sniffed("OTLP JSON traces", ("otel", "openinference"))
    if all(looks_like_span(o) for o in objects):
        return Sniffed("OpenTelemetry spans, one per line (a JS exporter)", ("otel",))
    if any(
        o.get("type") in ("system", "assistant", "user", "result") and _session(o) for o in objects
    ):
        return Sniffed("a Claude Agent SDK / Claude Code message stream", ("claude-agent",))
    if any(isinstance(o.get("items"), list) or ("input" in o and "output" in o) for o in objects):
        return Sniffed("JSONL of Responses API items", ("openai-responses",))
    if any({"question", "answer", "trajectory"} <= set(o) for o in objects):
        hint = "it is already a sessions file: give it to grade"
        return Sniffed("a sessions file", (), hint)
    if any(o.get("object") == "response" for o in objects):
        hint = 'log each as {"id", "input": <the request input>, "output": <the response>}'
        return Sniffed("stored Responses API responses without their input", (), hint)
    if any(o.get("object") == "chat.completion" for o in objects):
        hint = 'log the request\'s messages and the reply as {"id", "messages": [...]}'
        return Sniffed("Chat Completions responses without their request", (), hint)
    chats = [o["messages"] for o in objects if isinstance(o.get("messages"), list)]
    if chats:
        return _chat(chats, objects)
    names = sorted({str(k) for o in objects for k in o})[:8]
    return Sniffed(f"JSON objects with keys {', '.join(map(repr, names))}", ())


def _chat(chats: list[list[Any]], objects: list[Mapping[str, Any]]) -> Sniffed:
    messages = [m for chat in chats for m in chat if isinstance(m, Mapping)]
    blocks = [
        b.get("type")
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, Mapping)
    ]
    anthropic = any("system" in o for o in objects) or any(
        isinstance(b, str) and (b in _ANTHROPIC_BLOCKS or b.endswith("_tool_result"))
        for b in blocks
    )
    openai = any(
        m.get("role") in _OPENAI_ROLES or "tool_calls" in m or "function_call" in m
        for m in messages
    )
    if anthropic and not openai:
        return Sniffed("JSONL of Messages API conversations (Anthropic)", ("anthropic",))
    if openai and not anthropic:
        return Sniffed("JSONL of Chat Completions conversations", ("openai-chat",))
    # Plain text turns read the same either way.
    return Sniffed("JSONL of chat conversations", ("openai-chat", "anthropic"))


def _anthropic_block(kind: Any) -> bool:
    return isinstance(kind, str) and (kind in _ANTHROPIC_BLOCKS or kind.endswith("_tool_result"))


def _session(record: Mapping[str, Any]) -> bool:
    return isinstance(record.get("session_id", record.get("sessionId")), str) or isinstance(
        record.get("message"), Mapping
    )


def _attribute_keys(exports: list[Mapping[str, Any]]) -> set[str]:
    keys: set[str] = set()
    for export in exports:
        for resource in _list(export.get("resourceSpans")):
            for scope in _list(resource.get("scopeSpans")):
                for span in _list(scope.get("spans")):
                    for attribute in _list(span.get("attributes")):
                        if isinstance(attribute.get("key"), str):
                            keys.add(attribute["key"])
    return keys


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
