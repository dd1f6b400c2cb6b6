"""Spans as OpenTelemetry JS exporters write them: a JSON array of span objects (or one per line)
with plain attribute maps, instead of an OTLP export.

The JS SDK's ``ConsoleSpanExporter`` shape: ``traceId``, ``id`` (the span id), ``parentId`` or
``parentSpanContext.spanId`` (SDK 2), ``name``, ``timestamp`` (microseconds), ``attributes``
(``{"key": value}``) and ``resource.attributes``. A serialised ``ReadableSpan`` is read too:
``spanContext`` / ``_spanContext`` for the ids, ``parentSpanId``, ``startTime`` as
``[seconds, nanoseconds]``. The ``ai.*`` spans of the Vercel AI SDK are commonly dumped this way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._common import RecordError
from ._otlp_model import Span


def looks_like_span(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    context = value.get("spanContext") or value.get("_spanContext")
    has_ids = isinstance(context, Mapping) or (
        "traceId" in value and ("id" in value or "spanId" in value)
    )
    return has_ids and "name" in value


def js_span(raw: Mapping[str, Any], where: str) -> Span:
    context = raw.get("spanContext") or raw.get("_spanContext") or {}
    if not isinstance(context, Mapping):
        raise RecordError(f"{where}: spanContext must be an object")
    name = str(raw.get("name", ""))
    trace_id = raw.get("traceId") or context.get("traceId")
    span_id = raw.get("id") or raw.get("spanId") or context.get("spanId")
    for key, value in (("traceId", trace_id), ("span id", span_id)):
        if not isinstance(value, str) or not value:
            raise RecordError(f"{where} (span {name!r}) has no {key}")
    parent_context = raw.get("parentSpanContext")
    parent = (
        raw.get("parentId")
        or raw.get("parentSpanId")
        or (parent_context.get("spanId") if isinstance(parent_context, Mapping) else None)
    )
    if parent is not None and not isinstance(parent, str):
        raise RecordError(f"{where} (span {name!r}): the parent span id must be a string")
    attributes = raw.get("attributes") or {}
    if not isinstance(attributes, Mapping):
        raise RecordError(f"{where} (span {name!r}): attributes must be an object")
    resource = raw.get("resource") or {}
    resource_attributes = resource.get("attributes") if isinstance(resource, Mapping) else None
    return Span(
        trace_id=str(trace_id),
        span_id=str(span_id),
        parent_id=parent or None,
        name=name,
        start=_start(raw, where, name),
        attributes=dict(attributes),
        resource=dict(resource_attributes) if isinstance(resource_attributes, Mapping) else {},
    )


def _start(raw: Mapping[str, Any], where: str, name: str) -> int:
    """The start in nanoseconds: ``timestamp`` (microseconds) or ``startTime`` (``[s, ns]``)."""
    start = raw.get("startTime", raw.get("timestamp", 0))
    try:
        if isinstance(start, list) and len(start) == 2:
            return int(start[0]) * 1_000_000_000 + int(start[1])
        if isinstance(start, int | float) and not isinstance(start, bool):
            micros = "timestamp" in raw and "startTime" not in raw
            return int(start * 1000) if micros else int(start)
    except (TypeError, ValueError, OverflowError):
        pass
    raise RecordError(f"{where} (span {name!r}): its start time is not a number ({start!r})")
