"""Agent logs -> sessions (contract section 12): ``research-judge convert FORMAT INPUT...``.

Each format is one module with a converter for one record; this module reads the inputs, names
every bad record (``file:line``, or the trace id for OpenTelemetry), validates each session
against the input model and streams the good ones to the output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..._validation import describe_validation_error
from ...errors import ConfigError, InputFileError
from ..model import Session
from . import anthropic, openai_chat, openinference, otel
from ._common import ConvertOptions, RecordError, SessionDict, compile_stub_pattern, jsonl_records
from ._otlp import Trace, read_traces
from ._writer import SessionsWriter, check_output

__all__ = ["FORMATS", "ConvertOptions", "ConvertStats", "compile_stub_pattern", "convert_files"]

FORMATS = (openai_chat.NAME, anthropic.NAME, otel.NAME, openinference.NAME)
# Trace formats: OTLP JSON read by trace, then one converter per trace.
_TRACE_CONVERTERS: dict[str, Callable[[Trace, ConvertOptions], SessionDict]] = {
    otel.NAME: otel.convert_trace,
    openinference.NAME: openinference.convert_trace,
}
_JSONL_CONVERTERS: dict[str, Callable[[dict[str, Any], ConvertOptions], SessionDict]] = {
    openai_chat.NAME: openai_chat.convert_record,
    anthropic.NAME: anthropic.convert_record,
}


@dataclass
class ConvertStats:
    sessions: int = 0
    references: int = 0
    offloaded: int = 0  # references whose text became content_ref
    citations: int = 0
    errors: list[InputFileError] = field(default_factory=list)


def convert_files(
    fmt: str,
    inputs: list[str | Path],
    out: str | Path,
    options: ConvertOptions | None = None,
    *,
    on_error: Callable[[InputFileError], None] | None = None,
    force: bool = False,
) -> ConvertStats:
    """Convert every record of ``inputs`` (in order) into ``out``; bad records are collected in
    ``stats.errors`` (and passed to ``on_error`` as they are found), never written. An existing
    ``out`` is replaced only when it is a sessions file (or ``force``)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    options = options or ConvertOptions()
    paths, out_path = [Path(p) for p in inputs], Path(out)
    check_output(out_path, paths, force=force)
    for path in paths:
        if not path.is_file():
            raise InputFileError(path, "no such file")
    stats = ConvertStats()
    seen: set[str] = set()
    with SessionsWriter(out_path) as writer:
        for item in _records(fmt, paths, options):
            checked = item if isinstance(item, InputFileError) else _checked(*item, seen)
            if isinstance(checked, InputFileError):
                stats.errors.append(checked)
                if on_error is not None:
                    on_error(checked)
                continue
            writer.write(checked)
            stats.sessions += 1
            stats.references += len(checked["trajectory"])
            stats.offloaded += sum("content_ref" in r for r in checked["trajectory"])
            stats.citations += len(checked.get("citations", ()))
    return stats


_Converted = tuple[SessionDict, Path, int | None, str]


def _records(
    fmt: str, paths: list[Path], options: ConvertOptions
) -> Iterator[_Converted | InputFileError]:
    if fmt in _TRACE_CONVERTERS:
        convert_trace = _TRACE_CONVERTERS[fmt]
        for trace in read_traces(paths):
            if isinstance(trace, InputFileError):
                yield trace
                continue
            path = trace.path
            label = f"trace {trace.trace_id}: "
            try:
                yield convert_trace(trace, options), path, None, label
            except RecordError as exc:
                yield InputFileError(path, f"{label}{exc}")
        return
    convert = _JSONL_CONVERTERS[fmt]
    for path in paths:
        for number, record in jsonl_records(path):
            if isinstance(record, InputFileError):
                yield record
                continue
            label = f"record {record['id']!r}: " if isinstance(record.get("id"), str) else ""
            try:
                yield convert(record, options), path, number, label
            except RecordError as exc:
                yield InputFileError(path, f"{label}{exc}", number)


def _checked(
    session: SessionDict, path: Path, line: int | None, label: str, seen: set[str]
) -> SessionDict | InputFileError:
    """The converted session, if it is a valid input session and its id is new."""
    try:
        Session.model_validate(session)
    except ValidationError as exc:
        return InputFileError(path, label + describe_validation_error(exc), line)
    if session["id"] in seen:
        return InputFileError(path, f"{label}duplicate session id {session['id']!r}", line)
    seen.add(session["id"])
    return session
