"""Reports of one graded run: a self-contained HTML page and a Markdown summary for CI.

``write_report`` is the whole job from files; ``build_report`` + ``render_html`` /
``render_markdown`` are the pieces for callers that already hold results in memory.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .._files import check_replaceable
from .._lazy import lazy_exports
from ..compare.model import DEFAULT_THRESHOLD
from ..errors import ConfigError, OutputError
from ..judge.policy import VerdictPolicy
from ..safety import check_distinct, check_output_target

if TYPE_CHECKING:
    from ..results.model import Result
    from ..results.rows import ResultsRun
    from ..validate import Labels
    from .data import ReportData, build_report
    from .render import MARKDOWN_WORST, render_html, render_markdown

DEFAULT_WORST = 10
"""How many of the worst sessions the HTML report shows in detail (``report --worst``)."""

# Loaded on first use (Jinja, the statistics): ``report --help`` reads only DEFAULT_WORST.
_LAZY = {
    "MARKDOWN_WORST": ".render",
    "ReportData": ".data",
    "build_report": ".data",
    "render_html": ".render",
    "render_markdown": ".render",
}

STDOUT = "-"

__all__ = [
    "DEFAULT_WORST",
    "MARKDOWN_WORST",
    "ReportData",
    "build_report",
    "render_html",
    "render_markdown",
    "write_report",
]


def write_report(
    results: str | Path | ResultsRun | Sequence[Result],
    *,
    html: str | Path | None = None,
    md: str | Path | None = None,
    labels: str | Path | Labels | None = None,
    baseline: str | Path | ResultsRun | Sequence[Result] | None = None,
    rejudged: str | Path | ResultsRun | Sequence[Result] | None = None,
    worst: int = DEFAULT_WORST,
    threshold: float = DEFAULT_THRESHOLD,
    policy: VerdictPolicy | None = None,
    force: bool = False,
) -> ReportData:
    """Write the HTML and/or Markdown report of a run (results, labels and a baseline run each
    from a file or already in memory).

    Bad input raises ``InputFileError`` naming the file and line, before anything is written.
    An existing file at ``html`` or ``md`` is replaced only when it is an earlier report (or
    ``force``): anything else is a ``ConfigError``, before anything is read.
    Returns the report's data, for callers that render it once more (a CI step summary).
    """
    from .data import build_report
    from .render import render_html, render_markdown

    if html is None and md is None:
        raise ConfigError("nothing to write: give an HTML path, a Markdown path, or both")
    if str(html) == STDOUT and str(md) == STDOUT:
        raise ConfigError("only one report can go to stdout ('-'), not both HTML and Markdown")
    if worst < 0:
        raise ConfigError(f"the number of worst sessions must be 0 or more, got {worst}")

    def path_of(value: object) -> str | Path | None:
        return value if isinstance(value, str | Path) else None

    check_distinct(
        [
            ("the results file", path_of(results)),
            ("--labels", path_of(labels)),
            ("--baseline", path_of(baseline)),
        ],
        [("--html", html), ("--md", md)],
    )
    for flag, target, ours in (("--html", html, _html_report), ("--md", md, _md_report)):
        if target is not None:
            check_output_target(flag, target)
            check_replaceable(flag, target, ours, force=force)
    current, source = _run(results)
    agreement = None
    if labels is not None:
        # Imported here: validation pulls in scikit-learn, which only this branch needs.
        from ..validate import read_labels, validate_run

        read = read_labels(labels) if isinstance(labels, str | Path) else labels
        agreement = validate_run(current, read)
    older, baseline_source = (None, "") if baseline is None else _run(baseline)
    data = build_report(
        current,
        agreement=agreement,
        baseline=older,
        rejudged=None if rejudged is None else _run(rejudged)[0],
        worst=worst,
        threshold=threshold,
        source=source,
        baseline_source=baseline_source,
        # The run's date is when its results file was last written; unknown for results held
        # in memory.
        run_date=(
            _utc_minutes(Path(results).stat().st_mtime) if isinstance(results, str | Path) else ""
        ),
        generated_at=_utc_minutes(time.time()),
        policy=policy,
    )
    if html is not None:
        _emit(html, render_html(data), "--html")
    if md is not None:
        _emit(md, render_markdown(data), "--md")
    return data


def _html_report(head: bytes) -> bool:
    return b"<title>research-judge report" in head


def _md_report(head: bytes) -> bool:
    return b"## research-judge report" in head


def _emit(target: str | Path, text: str, flag: str) -> None:
    """``-`` is stdout (``report --md -`` into a PR comment); anything else is a file."""
    if str(target) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        from .._files import write_atomically

        try:
            write_atomically(target, text, what=flag)
        except OSError as exc:
            raise OutputError(f"cannot write {flag} {target}: {exc.strerror or exc}") from exc


def _utc_minutes(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _run(results: str | Path | ResultsRun | Sequence[Result]) -> tuple[ResultsRun, str]:
    """A run's rows and the name the report shows for it (none when held in memory)."""
    from ..results.rows import ResultsRun, as_run

    if isinstance(results, str | Path):
        return ResultsRun.load(results), Path(results).name
    return as_run(results), ""


__getattr__ = lazy_exports(__name__, _LAZY)
