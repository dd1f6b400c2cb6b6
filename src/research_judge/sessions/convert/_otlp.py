"""Reading OTLP JSON (the OpenTelemetry collector's file exporter) into spans grouped by trace.

Both trace formats (``otel``: the GenAI conventions, ``openinference``: Arize Phoenix's) read
their files here. A line that is not an OTLP export, or an export part of the wrong shape, is an
error naming ``file:line`` and the part's path in the export (``resourceSpans[0].scopeSpans[1]``);
the other lines are still read.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import InputFileError
from ._common import RecordError
from ._otlp_model import Span, Trace
from ._spanarray import js_span, looks_like_span

__all__ = ["Span", "Trace", "read_traces"]


# --- reading OTLP JSON ---------------------------------------------------------------------


def read_traces(paths: list[Path]) -> Iterator[Trace | InputFileError]:
    """Spans of every file grouped by trace (a trace may span export batches and files),
    in order of first appearance; unreadable lines and spans are yielded as errors, and so is
    a trace with spans in an unreadable export (the spans read elsewhere are only part of it)."""
    traces: dict[str, Trace] = {}
    broken: dict[str, str] = {}  # trace id -> the malformed export holding some of its spans
    for path in paths:
        for number, document in _documents(path):
            if isinstance(document, InputFileError):
                yield document
                continue
            try:
                spans = list(_spans(document))
            except RecordError as exc:
                yield InputFileError(path, str(exc), number)
                for trace_id in _trace_ids(document):
                    broken.setdefault(trace_id, f"{path}:{number}")
                continue
            for span in spans:
                trace = traces.get(span.trace_id)
                if trace is None:
                    trace = traces[span.trace_id] = Trace(span.trace_id, path)
                trace.spans.append(span)
    for trace in traces.values():
        if trace.trace_id in broken:
            where = broken[trace.trace_id]
            message = (
                f"trace {trace.trace_id}: some of its spans are in a malformed export ({where})"
            )
            yield InputFileError(trace.path, message)
        else:
            yield trace


def _trace_ids(document: Any) -> set[str]:
    """The trace ids a document names anywhere a span may stand, however malformed around them."""
    if isinstance(document, list) or "resourceSpans" not in document:
        spans = _dicts(document if isinstance(document, list) else [document])
        return {s["traceId"] for s in spans if isinstance(s.get("traceId"), str) and s["traceId"]}
    found: set[str] = set()
    for resource_spans in _dicts(document.get("resourceSpans")):
        for scope_spans in _dicts(resource_spans.get("scopeSpans")):
            for span in _dicts(scope_spans.get("spans")):
                if isinstance(span.get("traceId"), str) and span["traceId"]:
                    found.add(span["traceId"])
    return found


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


_Document = dict[str, Any] | list[Any]


def _documents(path: Path) -> Iterator[tuple[int, _Document | InputFileError]]:
    """The file exporter writes one JSON object per line, read one at a time (a line that is not
    UTF-8 is an error for that line only); a pretty-printed single document (a file whose first
    line is ``{`` or ``[``) is read whole."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputFileError(path, f"cannot read trace file: {exc.strerror or exc}") from exc
    with handle:
        first = handle.readline()
        if first.strip().removeprefix(b"\xef\xbb\xbf") in (b"{", b"["):
            whole = first + handle.read()
            try:
                text = whole.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                line = whole[: exc.start].count(b"\n") + 1
                yield line, InputFileError(path, f"not valid UTF-8 (byte {exc.start + 1})", line)
                return
            yield from _parsed(path, iter([(1, text)]))
            return
        yield from _parsed(path, _lines(path, itertools.chain([first], handle)))


def _lines(path: Path, raw: Iterator[bytes]) -> Iterator[tuple[int, str | InputFileError]]:
    for number, line in enumerate(raw, start=1):
        try:
            text = line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            yield number, InputFileError(path, f"not valid UTF-8 (byte {exc.start + 1})", number)
            continue
        if text.strip():
            yield number, text


def _parsed(
    path: Path, chunks: Iterator[tuple[int, str | InputFileError]]
) -> Iterator[tuple[int, _Document | InputFileError]]:
    for number, chunk in chunks:
        if isinstance(chunk, InputFileError):
            yield number, chunk
            continue
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
        except ValueError as exc:  # an integer of more digits than Python converts
            yield number, InputFileError(path, f"not readable JSON: {exc}", number)
            continue
        problem = _not_an_export(value)
        if problem is not None:
            yield number, InputFileError(path, problem, number)
            continue
        yield number, value


def _not_an_export(value: Any) -> str | None:
    """What keeps a parsed JSON document from being spans to read, if anything."""
    if isinstance(value, list):
        if value and all(looks_like_span(item) for item in value):
            return None  # a JS exporter's span array
        return (
            "a JSON array, not an OTLP export object or an array of spans "
            '(the file exporter writes one {"resourceSpans": [...]} object per line)'
        )
    if looks_like_span(value):
        return None  # one span object per line
    if not isinstance(value, dict) or value.get("resourceSpans") is None:
        return "not an OTLP export (no 'resourceSpans' list)"
    if not isinstance(value["resourceSpans"], list):
        return f"'resourceSpans' must be a list, got {type(value['resourceSpans']).__name__}"
    return None


def _spans(document: _Document) -> Iterator[Span]:
    """Every span of an export (or span array); a part of the wrong shape is named by its path
    in the export."""
    if isinstance(document, list):
        for n, raw in enumerate(document):
            yield js_span(raw, f"[{n}]")
        return
    if "resourceSpans" not in document:
        yield js_span(document, "the span")
        return
    for r, item in enumerate(document["resourceSpans"]):
        at = f"resourceSpans[{r}]"
        resource_spans = _object(item, at)
        resource_field = _object(resource_spans.get("resource") or {}, f"{at}.resource")
        try:
            resource = _attributes(resource_field.get("attributes"))
        except RecordError as exc:
            raise RecordError(f"{at}.resource: {exc}") from exc
        for s, scope in enumerate(_list(resource_spans, "scopeSpans", at)):
            scope_spans = _object(scope, f"{at}.scopeSpans[{s}]")
            for n, raw in enumerate(_list(scope_spans, "spans", f"{at}.scopeSpans[{s}]")):
                where = f"{at}.scopeSpans[{s}].spans[{n}]"
                yield _span(_object(raw, where), resource, where)


def _span(raw: dict[str, Any], resource: dict[str, Any], where: str) -> Span:
    name = str(raw.get("name", ""))
    for key in ("traceId", "spanId"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise RecordError(f"{where} (span {name!r}) has no {key}")
    parent = raw.get("parentSpanId") or None
    if parent is not None and not isinstance(parent, str):
        raise RecordError(
            f"{where} (span {name!r}): parentSpanId must be a string, got {type(parent).__name__}"
        )
    try:
        attributes = _attributes(raw.get("attributes"))
    except RecordError as exc:
        raise RecordError(f"span {name!r}: {exc}") from exc
    return Span(
        trace_id=raw["traceId"],
        span_id=raw["spanId"],
        parent_id=parent,
        name=name,
        start=_integer(raw.get("startTimeUnixNano") or 0, f"span {name!r}: ", "startTimeUnixNano"),
        attributes=attributes,
        resource=resource,
    )


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(f"{where} must be an object, got {type(value).__name__}")
    return value


def _list(container: dict[str, Any], key: str, where: str) -> list[Any]:
    value = container.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(f"{where}.{key} must be a list, got {type(value).__name__}")
    return value


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


def json_list(span: Span, key: str, what: str = "list") -> list[dict[str, Any]]:
    """The objects of a span attribute holding a list: a JSON string (most SDKs stringify it) or
    a structured value. Unreadable JSON is an error for this record, never a crash."""
    raw = span.attributes.get(key)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RecordError(f"span {span.name!r}: {key} is not valid JSON ({exc.msg})") from exc
        except RecursionError:
            raise RecordError(f"span {span.name!r}: {key} is nested too deeply") from None
        except ValueError as exc:  # a number of more digits than Python converts
            raise RecordError(f"span {span.name!r}: {key} is not readable JSON ({exc})") from None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RecordError(f"span {span.name!r}: {key} is not a {what}")
    return [m for m in raw if isinstance(m, dict)]
