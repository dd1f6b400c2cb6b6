"""``research-judge convert``: agent logs (OpenAI, Anthropic, Claude, OTel) -> sessions."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._ci import add_force_flag
from ._help import DefaultsFormatter
from .config import add_config_flag

if TYPE_CHECKING:
    from ..errors import InputFileError

FORMATS = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "claude-agent",
    "otel",
    "openinference",
)  # checked against the library's list in a test
AUTO = "auto"
DESCRIPTION = """\
Convert agent logs into the sessions JSONL that grade reads. Each tool result the agent
received becomes one reference (id = the tool call id), with its tool, arguments and, for
OpenTelemetry, the agent that made the call.

formats:
  openai-chat  JSONL of {"id", "messages", "metadata"?}, Chat Completions messages
  openai-responses  JSONL of {"id", "items", "metadata"?}: Responses API items as the
               OpenAI Agents SDK's to_input_list() returns them (or {"id", "input",
               "output"}: a request and its stored response)
  anthropic    JSONL of {"id", "system"?, "messages", "metadata"?}, Messages API blocks
               (tool_result, web_fetch and web_search server tool results, citations)
  claude-agent Claude Agent SDK / Claude Code stream-json output or .jsonl transcripts:
               one conversation per session_id, sub-agent (Task) results named by agent
  otel         OTLP JSON traces (the collector's file exporter), GenAI semantic
               conventions: one session per trace, references from the root agent
               and every sub-agent; also the Vercel AI SDK's ai.* spans, as OTLP or
               as a JS exporter's span array
  openinference  the same OTLP JSON under the OpenInference conventions (Arize Phoenix):
               AGENT / LLM / TOOL / RETRIEVER spans, flattened message attributes
  auto         (or no FORMAT) each file in the format it looks like; a file no format
               reads is one line saying what it looks like

A chat record with several answered user turns becomes one session per turn (id
RECORD#N; the earlier turns go with it as conversation context for the judge); a record
with one turn keeps its id. --last-turn keeps only each record's final turn.

Bad records are named (file:line, or the trace id) and skipped; the rest are converted.
The output is written to a temporary file and renamed into place; an input is never
overwritten. Exit 0 when every record converted, 2 when any was bad.
See docs/agent-logs.md."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "convert",
        usage="research-judge convert [FORMAT] INPUT... --out SESSIONS.jsonl [options]",
        help="turn agent logs into a sessions file for grade",
        description=DESCRIPTION,
        formatter_class=DefaultsFormatter,
    )
    # FORMAT may be left out (= auto): argparse cannot tell an optional positional from the
    # inputs after it, so the first word is read as FORMAT when it names one.
    p.add_argument(
        "inputs",
        metavar="INPUT",
        nargs="+",
        help=f"FORMAT first if given ({' | '.join((*FORMATS, AUTO))}; default auto), then "
        "the log files, read in order (- for stdin)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="SESSIONS.jsonl",
        help="sessions file to write (its folder is created; - for stdout)",
    )
    p.add_argument(
        "--stub-pattern",
        metavar="REGEX",
        help="a tool result matching REGEX in full is a stub for offloaded text: its named group "
        "'ref' becomes the reference's content_ref, read at grading time by grade --store",
    )
    p.add_argument(
        "--last-turn",
        action="store_true",
        help="of a conversation with several answered user turns, keep only the final turn "
        "(its id stays RECORD#N; the earlier turns are still its context)",
    )
    p.add_argument("--quiet", action="store_true", help="print no summary line")
    add_force_flag(p)
    add_config_flag(p)
    p.set_defaults(run=run_convert)


def run_convert(args: argparse.Namespace) -> int:
    from ..errors import ConfigError, ExitCode
    from ..sessions.convert import ConvertOptions, compile_stub_pattern, convert_files
    from ._stdin import STDIN, spooled_stdin

    printer = _Printer()
    hooks: dict[str, Any] = {
        "on_error": printer.error,
        "on_note": printer.note,
        "force": args.force,
    }

    fmt, inputs = _format_and_inputs(args.inputs)
    options = ConvertOptions(
        stub_pattern=compile_stub_pattern(args.stub_pattern), last_turn=args.last_turn
    )
    if inputs.count(STDIN) > 1:
        raise ConfigError("'-' (standard input) can be given once")
    if STDIN in inputs:
        with spooled_stdin("stdin.log") as path:
            printer.stdin_copy = str(path)
            spooled: list[str | Path] = [str(path) if i == STDIN else i for i in inputs]
            stats = convert_files(fmt, spooled, args.out, options, **hooks)
    else:
        stats = convert_files(fmt, list(inputs), args.out, options, **hooks)
    if not args.quiet:
        bad = f"; {len(stats.errors)} bad record(s) skipped (listed above)" if stats.errors else ""
        if stats.notes:
            bad += f"; {len(stats.notes)} unanswered turn(s) not converted (noted above)"
        print(
            f"converted {stats.sessions} session(s) to {args.out}: {stats.references} "
            f"reference(s), {stats.offloaded} offloaded (content_ref), "
            f"{stats.citations} provider citation(s){bad}",
            # With --out - the sessions are on stdout: keep it clean for the next command.
            file=sys.stderr if args.out == "-" else sys.stdout,
        )
    return ExitCode.FAILED if stats.errors else ExitCode.OK


def _format_and_inputs(words: list[str]) -> tuple[str, list[str]]:
    from ..errors import ConfigError

    if words[0] in (*FORMATS, AUTO):
        if len(words) == 1:
            raise ConfigError(f"convert {words[0]}: give at least one INPUT log file")
        return words[0], words[1:]
    return AUTO, words


class _Printer:
    """Prints each bad record and note as one inert line (a record's text, a tool's name or an
    id, is in the message), standard input's temporary copy named ``-`` as the user typed it."""

    def __init__(self) -> None:
        self.stdin_copy: str | None = None

    def error(self, exc: InputFileError) -> None:
        print(f"research-judge convert: {self._line(exc)}", file=sys.stderr)

    def note(self, exc: InputFileError) -> None:
        print(f"research-judge convert: note: {self._line(exc)}", file=sys.stderr)

    def _line(self, exc: InputFileError) -> str:
        from .._text import inline
        from ..errors import InputFileError

        if self.stdin_copy is not None and exc.path == self.stdin_copy:
            exc = InputFileError("-", exc.message, exc.line)
        return inline(exc)
