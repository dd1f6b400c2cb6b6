"""Agent logs -> sessions (contract section 12): ``research-judge convert FORMAT INPUT...``.

Each format is one module with a converter for one record; this module reads the inputs, names
every bad record (``file:line``, or the trace id for OpenTelemetry), validates each session
against the input model and streams the good ones to the output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..._validation import describe_validation_error
from ...errors import ConfigError, InputFileError
from ..model import Session
from . import anthropic, claude_agent, openai_chat, openai_responses, openinference, otel
from ._common import (
    SHAPE_ERRORS,
    Converted,
    ConvertOptions,
    Note,
    RecordError,
    SessionDict,
    compile_stub_pattern,
    jsonl_records,
    unexpected,
)
from ._otlp import Trace, read_traces
from ._sniff import sniff
from ._writer import SessionsWriter, check_output

__all__ = [
    "AUTO",
    "ERRORS_SHOWN_PER_FILE",
    "FORMATS",
    "ConvertOptions",
    "ConvertStats",
    "compile_stub_pattern",
    "convert_files",
]

FORMATS = (
    openai_chat.NAME,
    openai_responses.NAME,
    anthropic.NAME,
    claude_agent.NAME,
    otel.NAME,
    openinference.NAME,
)
# Trace formats: OTLP JSON read by trace, then one converter per trace.
_TRACE_CONVERTERS: dict[str, Callable[[Trace, ConvertOptions], SessionDict]] = {
    otel.NAME: otel.convert_trace,
    openinference.NAME: openinference.convert_trace,
}
# Chat formats: one JSONL record; a conversation is one session per answered turn (``_turns``).
_JSONL_CONVERTERS: dict[
    str, Callable[[dict[str, Any], ConvertOptions], Converted | SessionDict]
] = {
    openai_chat.NAME: openai_chat.convert_record,
    openai_responses.NAME: openai_responses.convert_record,
    anthropic.NAME: anthropic.convert_record,
}


AUTO = "auto"  # the format of each file, from what it looks like
# At most this many bad records of one file are reported one by one; the rest are counted.
ERRORS_SHOWN_PER_FILE = 10


@dataclass
class ConvertStats:
    sessions: int = 0
    references: int = 0
    offloaded: int = 0  # references whose text became content_ref
    citations: int = 0
    errors: list[InputFileError] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)  # input -> the format that read it
    # What of a good record became no session (an unanswered last turn), named like errors.
    notes: list[InputFileError] = field(default_factory=list)


def convert_files(
    fmt: str,
    inputs: list[str | Path],
    out: str | Path,
    options: ConvertOptions | None = None,
    *,
    on_error: Callable[[InputFileError], None] | None = None,
    on_note: Callable[[InputFileError], None] | None = None,
    force: bool = False,
) -> ConvertStats:
    """Convert every record of ``inputs`` (in order) into ``out``; bad records are collected in
    ``stats.errors`` (and passed to ``on_error`` as they are found, at most
    ``ERRORS_SHOWN_PER_FILE`` per file, then one line counting the rest), never written; what
    of a good record became no session is in ``stats.notes`` (and passed to ``on_note``).

    An existing ``out`` is replaced only when it is a sessions file (or ``force``).

    ``fmt`` ``auto`` reads each file in the format it looks like; with a named format, a file
    that plainly is something else is one error saying what it looks like."""
    if fmt not in (*FORMATS, AUTO):
        raise ConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)} or auto")
    options = options or ConvertOptions()
    paths, out_path = [Path(p) for p in inputs], Path(out)
    check_output(out_path, paths, force=force)
    for path in paths:
        if not path.is_file():
            raise InputFileError(path, "no such file")
    stats = ConvertStats()
    report = _Reporter(stats, on_error)
    seen: set[str] = set()
    with SessionsWriter(out_path) as writer:
        for group_fmt, group in _by_format(fmt, paths, report):
            for path in group:
                stats.formats[str(path)] = group_fmt
            for item in _records(group_fmt, group, options):
                if isinstance(item, Note):
                    stats.notes.append(item.note)
                    if on_note is not None:
                        on_note(item.note)
                    continue
                checked = item if isinstance(item, InputFileError) else _checked(*item, seen)
                if isinstance(checked, InputFileError):
                    report(checked)
                    continue
                session, line = checked
                writer.write_line(line)
                stats.sessions += 1
                stats.references += len(session["trajectory"])
                stats.offloaded += sum("content_ref" in r for r in session["trajectory"])
                stats.citations += len(session.get("citations", ()))
    report.close()
    return stats


class _Reporter:
    """Collects every error; passes on the first few of each file and counts the rest."""

    def __init__(
        self, stats: ConvertStats, on_error: Callable[[InputFileError], None] | None
    ) -> None:
        self.stats, self.on_error = stats, on_error
        self.shown: dict[str, int] = {}
        self.held: dict[str, int] = {}

    def __call__(self, error: InputFileError) -> None:
        self.stats.errors.append(error)
        if self.on_error is None:
            return
        if self.shown.get(error.path, 0) < ERRORS_SHOWN_PER_FILE:
            self.shown[error.path] = self.shown.get(error.path, 0) + 1
            self.on_error(error)
        else:
            self.held[error.path] = self.held.get(error.path, 0) + 1

    def close(self) -> None:
        if self.on_error is None:
            return
        for path, count in self.held.items():
            self.on_error(InputFileError(path, f"... and {count} more bad record(s) like these"))


def _by_format(
    fmt: str, paths: list[Path], report: Callable[[InputFileError], None]
) -> Iterator[tuple[str, list[Path]]]:
    """The inputs in runs of one format, in order (a trace or a stream may span files); a file
    no format reads, or that plainly is not ``fmt``, is reported once and left out."""
    run: list[Path] = []
    run_fmt = fmt
    for path in paths:
        looks = sniff(path)
        if fmt == AUTO:
            if looks is None or not looks.formats:
                what = looks.describe() if looks else "is empty or has no readable record"
                report(InputFileError(path, what))
                continue
            file_fmt = looks.formats[0]
        else:
            if looks is not None and fmt not in looks.formats:
                report(InputFileError(path, f"{looks.describe()}, not {fmt!r}"))
                continue
            file_fmt = fmt
        if run and file_fmt != run_fmt:
            yield run_fmt, run
            run = []
        run_fmt = file_fmt
        run.append(path)
    if run:
        yield run_fmt, run


_Converted = tuple[SessionDict, Path, int | None, str]


def _records(
    fmt: str, paths: list[Path], options: ConvertOptions
) -> Iterator[_Converted | InputFileError | Note]:
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
            except SHAPE_ERRORS as exc:
                yield InputFileError(path, label + unexpected(exc))
        return
    if fmt == claude_agent.NAME:  # a session is many lines, grouped by session id
        yield from claude_agent.read_sessions(paths, options)
        return
    convert = _JSONL_CONVERTERS[fmt]
    for path in paths:
        for number, record in jsonl_records(path):
            if isinstance(record, InputFileError):
                yield record
                continue
            label = f"record {record['id']!r}: " if isinstance(record.get("id"), str) else ""
            try:
                converted = convert(record, options)
            except RecordError as exc:
                yield InputFileError(path, f"{label}{exc}", number)
                continue
            except SHAPE_ERRORS as exc:
                yield InputFileError(path, label + unexpected(exc), number)
                continue
            if isinstance(converted, dict):  # a format that is not read turn by turn
                converted = Converted([converted])
            for note in converted.notes:
                yield Note(InputFileError(path, f"{label}{note}", number))
            for session in converted.sessions:
                yield session, path, number, label


def _checked(
    session: SessionDict, path: Path, line: int | None, label: str, seen: set[str]
) -> tuple[SessionDict, str] | InputFileError:
    """The converted session and its JSON line, if it is a valid input session, its id is new
    and it can be written as strict JSON in UTF-8."""
    try:
        Session.model_validate(session)
    except ValidationError as exc:
        return InputFileError(path, label + describe_validation_error(exc), line)
    if session["id"] in seen:
        return InputFileError(path, f"{label}duplicate session id {session['id']!r}", line)
    try:
        text = json.dumps(session, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # (a ValueError too: caught first)
        problem = f"holds a lone surrogate escape ({exc.object[exc.start]!a}), which is not text"
        return InputFileError(path, label + problem, line)
    except ValueError:  # NaN or Infinity: not JSON, and no reader of the output would take it
        problem = "holds a number that is not JSON (NaN or Infinity)"
        return InputFileError(path, label + problem, line)
    seen.add(session["id"])
    return session, text + "\n"
