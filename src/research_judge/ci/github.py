"""GitHub Actions: the job's step summary and workflow commands (annotations).

Workflow commands are single lines the runner reads from the job's output; whatever they carry
is escaped so a session id or a reason with ``%``, a newline or ``::`` can neither break the line
nor start a command of its own. The project's printing rule (``_text``) comes first: no control
characters, titles on one line; then the runner's own percent-encoding.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from .._text import inline, inline_lines

Level = Literal["error", "warning", "notice"]
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
_TITLE_LIMIT = 200
_MESSAGE_LIMIT = 4000


def escape_data(text: str) -> str:
    """The message part: ``%``, CR and LF are percent-encoded (``%`` first)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (``title=``, ``file=``): also ``:`` and ``,``, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(
    level: Level,
    message: str,
    *,
    title: str | None = None,
    file: str | None = None,
    line: int | None = None,
) -> str:
    """One workflow command line, e.g. ``::error title=...::message``."""
    props: list[str] = []
    if file is not None:
        props.append(f"file={escape_property(file)}")
        if line is not None:
            props.append(f"line={line}")
    if title is not None:
        props.append(f"title={escape_property(_clip(inline(title), _TITLE_LIMIT))}")
    head = f"::{level}" + (f" {','.join(props)}" if props else "")
    return f"{head}::{escape_data(_clip(inline_lines(message), _MESSAGE_LIMIT))}"


def annotations_wanted(flag: bool | None, env: Mapping[str, str] | None = None) -> bool:
    """``--annotations`` / ``--no-annotations`` win; otherwise on when running in GitHub Actions."""
    if flag is not None:
        return flag
    return (os.environ if env is None else env).get("GITHUB_ACTIONS") == "true"


def append_step_summary(markdown: str, env: Mapping[str, str] | None = None) -> Path | None:
    """Append ``markdown`` to the file ``GITHUB_STEP_SUMMARY`` names; None when it is unset.

    Appended, never replaced: earlier steps (and earlier verbs of the same step) keep theirs.
    ``OSError`` propagates for the caller to report.
    """
    target = (os.environ if env is None else env).get(SUMMARY_ENV)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(markdown.rstrip("\n") + "\n\n")
    return path


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
