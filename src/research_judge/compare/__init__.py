"""Two graded runs side by side: deltas, paired tests, regressions, flags (contract section 8)."""

from __future__ import annotations

from ..stats.paired import PairedTest
from .core import (
    DEFAULT_CRITICAL_THRESHOLD,
    DEFAULT_THRESHOLD,
    PASS_RATE,
    combined_value,
    compare_runs,
)
from .model import Comparison, Flag, MetricDelta, SessionMove
from .text import render_text

__all__ = [
    "DEFAULT_CRITICAL_THRESHOLD",
    "DEFAULT_THRESHOLD",
    "PASS_RATE",
    "Comparison",
    "Flag",
    "MetricDelta",
    "PairedTest",
    "SessionMove",
    "combined_value",
    "compare_runs",
    "render_text",
]
