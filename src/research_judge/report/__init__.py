"""Reports of one graded run: a self-contained HTML page and a Markdown summary for CI.

``write_report`` is the whole job from files; ``build_report`` + ``render_html`` /
``render_markdown`` are the pieces for callers that already hold results in memory.
"""

from __future__ import annotations

from pathlib import Path

from ..compare import DEFAULT_THRESHOLD
from ..errors import ConfigError
from ..results.model import read_results
from ..safety import atomic_write, check_distinct, check_output_target
from .data import DEFAULT_WORST, ReportData, build_report
from .render import MARKDOWN_WORST, render_html, render_markdown

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
) -> None:
    """Read results (and labels, and a baseline run) and write the HTML and/or Markdown report.

    Bad input raises ``InputFileError`` naming the file and line, before anything is written.
    """
    if html is None and md is None:
        raise ConfigError("nothing to write: give an HTML path, a Markdown path, or both")
    if worst < 0:
        raise ConfigError(f"the number of worst sessions must be 0 or more, got {worst}")
    check_distinct(
        [("the results file", results_path), ("--labels", labels), ("--baseline", baseline)],
        [("--html", html), ("--md", md)],
    )
    for flag, target in (("--html", html), ("--md", md)):
        if target is not None:
            check_output_target(flag, target)
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
        atomic_write(html, render_html(data), "--html")
    if md is not None:
        atomic_write(md, render_markdown(data), "--md")
