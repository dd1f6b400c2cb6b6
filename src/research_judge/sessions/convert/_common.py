"""What every converter shares: one record's failure, reading JSONL records, building references.

A converter turns one log record (a JSONL line, or an OpenTelemetry trace) into a session dict in
the contract's input format. A problem with one record raises ``RecordError``; the caller names
the record (``file:line`` or the trace id) and goes on with the next.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError, InputFileError

# What a converter produces for one record: a session in the contract's input format.
SessionDict = dict[str, Any]


class RecordError(ValueError):
    """One record cannot become a session; the message says why, in the log's own terms."""


# A value of a shape no converter check foresaw (a number where text belongs, deep in a
# record) must still be one record's error, never a crash that loses every other record.
SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError)


def unexpected(exc: Exception) -> str:
    return f"a value of an unexpected type or shape ({type(exc).__name__}: {exc})"


@dataclass(frozen=True)
class ConvertOptions:
    # A tool result matching this pattern in full is a stub for text kept in storage; its named
    # group ``ref`` becomes the reference's ``content_ref`` (read by ``grade --store``).
    stub_pattern: re.Pattern[str] | None = None
    # A conversation of several answered turns: keep only its final turn (``--last-turn``).
    last_turn: bool = False


@dataclass
class Converted:
    """What one record became: its sessions (one per answered turn for a conversation) and
    notes on what of it became no session (a trailing question without an answer)."""

    sessions: list[SessionDict]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Note:
    """What of a good record became no session, named like an error (``file:line: ...``)."""

    note: InputFileError


def compile_stub_pattern(text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        pattern = re.compile(text, re.DOTALL)
    except re.error as exc:
        raise ConfigError(f"--stub-pattern is not a valid regular expression: {exc}") from exc
    if "ref" not in pattern.groupindex:
        raise ConfigError(
            "--stub-pattern needs a named group 'ref' for the storage key, "
            r"e.g. '\[stored at (?P<ref>\S+)\]'"
        )
    return pattern


def jsonl_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | InputFileError]]:
    """Every non-blank line of a JSONL log as ``(line, object)``, or the error naming the line."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputFileError(path, f"cannot read log: {exc.strerror or exc}") from exc
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield (
                    number,
                    InputFileError(path, f"not valid UTF-8 (byte {exc.start + 1})", number),
                )
                continue
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                yield (
                    number,
                    InputFileError(path, f"not valid JSON: {exc.msg} (column {exc.colno})", number),
                )
                continue
            except RecursionError:
                yield number, InputFileError(path, "not valid JSON: nested too deeply", number)
                continue
            except ValueError as exc:  # an integer of more digits than Python converts
                yield number, InputFileError(path, f"not readable JSON: {exc}", number)
                continue
            if not isinstance(value, dict):
                yield (
                    number,
                    InputFileError(
                        path, f"expected a JSON object, got {type(value).__name__}", number
                    ),
                )
                continue
            yield number, value


class ToolCalls:
    """The tool calls of one JSONL record, by id, and which of them still wait for a result."""

    def __init__(self, call: str, result: str, at: str = "messages[{}]") -> None:
        # How the log names a call and its result, for the error: "tool call", "tool message
        # with tool_call_id"; ``at`` where the call was made (its message index, or line).
        self._call, self._result, self._at = call, result, at
        self._calls: dict[str, tuple[str | None, Any]] = {}
        self._waiting: dict[str, int | str] = {}  # call id -> index of the message that made it

    def asked(self, call_id: str, index: int | str, tool: str | None, args: Any) -> None:
        self._calls[call_id] = (tool, args)
        self._waiting[call_id] = index

    def answered(self, call_id: str) -> tuple[str | None, Any]:
        """The tool and arguments of the call a result answers (None, None: a call not logged)."""
        self._waiting.pop(call_id, None)
        return self._calls.get(call_id, (None, None))

    def check_all_answered(self) -> None:
        """A call with no result is an error naming each such call: the user fixes the log once,
        and a result the agent saw is never silently missing from the trajectory."""
        if self._waiting:
            raise RecordError(
                "; ".join(
                    f"{self._at.format(index)}: {self._call} {call_id!r} "
                    f"({self._calls[call_id][0]}) "
                    f"has no result (no {self._result} {call_id!r})"
                    for call_id, index in self._waiting.items()
                )
            )


def reference(
    ref_id: str,
    text: str,
    options: ConvertOptions,
    *,
    title: str | None = None,
    url: str | None = None,
    **provenance: Any,
) -> dict[str, Any]:
    """A trajectory reference; a tool result that is a storage stub gets ``content_ref``."""
    out: dict[str, Any] = {"id": ref_id}
    stub = options.stub_pattern.fullmatch(text.strip()) if options.stub_pattern else None
    if stub is not None and stub.group("ref"):
        out["content_ref"] = stub.group("ref")
    else:
        out["content"] = text
    out["title"] = title
    out["url"] = url
    out.update({k: v for k, v in provenance.items() if v is not None})
    return out


def tool_reference(
    call_id: str, tool: str | None, args: Any, result: Any, agent: str | None,
    options: ConvertOptions,
) -> dict[str, Any]:  # fmt: skip
    """A tool call's result as a reference, titled by the call and carrying its provenance."""
    return reference(
        call_id,
        as_text(result),
        options,
        title=call_title(tool, args),
        url=url_argument(args),
        agent=agent,
        tool=tool,
        args=args,
    )


def call_title(tool: str | None, args: Any) -> str | None:
    """``web_fetch(url=https://...)``: what the agent asked for, as a reference title."""
    if tool is None:
        return None
    if isinstance(args, Mapping):
        shown = ", ".join(f"{k}={_short(v)}" for k, v in args.items())
    elif args in (None, "", {}):
        shown = ""
    else:
        shown = _short(args)
    return f"{tool}({shown})"


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments as logged: a JSON string (OpenAI, OTel) or already an object."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or a number Python will not convert
            return raw  # kept as the agent sent it: still useful as provenance
    return raw


def url_argument(args: Any) -> str | None:
    if isinstance(args, Mapping):
        url = args.get("url")
        return url if isinstance(url, str) and url else None
    return None


def part_text(part: Mapping[str, Any], where: str) -> str:
    """A text part's ``text``; anything but a string there is an error naming the part."""
    text = part.get("text", "")
    if not isinstance(text, str):
        raise RecordError(
            f"{where}: a text part's 'text' must be a string, got {type(text).__name__}"
        )
    return text


def as_text(value: Any) -> str:
    """A tool result as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def require(record: Mapping[str, Any], key: str, kind: type) -> Any:
    value = record.get(key)
    if not isinstance(value, kind):
        if value is None:
            raise RecordError(f"missing {key!r}")
        raise RecordError(f"{key!r} must be {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _kind_name(kind: type) -> str:
    names: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}
    return names.get(kind, kind.__name__)


def metadata_of(record: Mapping[str, Any]) -> dict[str, Any]:
    meta = record.get("metadata")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise RecordError(f"'metadata' must be an object, got {type(meta).__name__}")
    return dict(meta)
