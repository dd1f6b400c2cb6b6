"""A span as every trace reader gives it (OTLP JSON, a JS exporter's span array), and a trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    attributes: dict[str, Any]
    resource: dict[str, Any]

    @property
    def operation(self) -> str | None:
        op = self.attributes.get("gen_ai.operation.name")
        return op if isinstance(op, str) else None


@dataclass
class Trace:
    trace_id: str
    path: Path  # the file of its first span, for messages
    spans: list[Span] = field(default_factory=list)
