"""Reports of one graded run: a self-contained HTML page and a Markdown summary for CI.

``write_report`` is the whole job from files; ``build_report`` + ``render_html`` /
``render_markdown`` are the pieces for callers that already hold results in memory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..compare import DEFAULT_THRESHOLD
from ..errors import ConfigError
from ..results.model import read_results
from .data import DEFAULT_WORST, ReportData, build_report
from .render import MARKDOWN_WORST, render_html, render_markdown

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
    results_path: str | Path,
    *,
    html: str | Path | None = None,
    md: str | Path | None = None,
    labels: str | Path | None = None,
    baseline: str | Path | None = None,
    worst: int = DEFAULT_WORST,
    threshold: float = DEFAULT_THRESHOLD,
) -> ReportData:
    """Read results (and labels, and a baseline run) and write the HTML and/or Markdown report.

    Bad input raises ``InputFileError`` naming the file and line, before anything is written.
    Returns the report's data, for callers that render it once more (a CI step summary).
    """
    if html is None and md is None:
        raise ConfigError("nothing to write: give an HTML path, a Markdown path, or both")
    if str(html) == STDOUT and str(md) == STDOUT:
        raise ConfigError("only one report can go to stdout ('-'), not both HTML and Markdown")
    if worst < 0:
        raise ConfigError(f"the number of worst sessions must be 0 or more, got {worst}")
    results = read_results(results_path)
    agreement = None
    if labels is not None:
        # Imported here: validation pulls in scikit-learn, which only this branch needs.
        from ..validate import read_labels, validate_run

        agreement = validate_run(results, read_labels(labels)).to_dict()
    data = build_report(
        results,
        agreement=agreement,
        baseline=None if baseline is None else read_results(baseline),
        worst=worst,
        threshold=threshold,
        source=Path(results_path).name,
        baseline_source="" if baseline is None else Path(baseline).name,
    )
    if html is not None:
        _emit(html, render_html(data))
    if md is not None:
        _emit(md, render_markdown(data))
    return data


def _emit(target: str | Path, text: str) -> None:
    """``-`` is stdout (``report --md -`` into a PR comment); anything else is a file."""
    if str(target) == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        _write_atomically(Path(target), text)


def _write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder so a reader never sees half a report.

    A plain ``open`` (not mkstemp) so the file gets the usual umask-based permissions: reports
    are meant to be shared, e.g. served as CI artifacts.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
