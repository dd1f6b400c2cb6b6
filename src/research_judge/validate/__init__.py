"""Validate the judge against human pass/fail labels (and optional 1-3 scores).

``read_labels`` reads the labels file, ``validate_run`` computes the agreement report and
``render_text`` prints it; ``ValidationReport.to_dict`` is the JSON form (``validate --json``).
"""

from __future__ import annotations

from .labels import HumanLabel, Labels, read_labels
from .render import render_text
from .report import ValidationReport, validate_run

__all__ = [
    "HumanLabel",
    "Labels",
    "ValidationReport",
    "read_labels",
    "render_text",
    "validate_run",
]
