"""Two graded runs side by side: deltas, paired tests, regressions, flags (contract section 8).

Names are loaded on first use, so the flags can read the thresholds without ``--help`` loading
the comparison itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..stats.paired import PairedTest
    from .core import PASS_RATE, combined_value, compare_runs
    from .model import (
        DEFAULT_CRITICAL_THRESHOLD,
        DEFAULT_THRESHOLD,
        Comparison,
        Flag,
        MetricDelta,
        SessionMove,
    )
    from .text import render_text

# name -> module that defines it
_EXPORTS = {
    "DEFAULT_CRITICAL_THRESHOLD": ".model",
    "DEFAULT_THRESHOLD": ".model",
    "PASS_RATE": ".core",
    "Comparison": ".model",
    "Flag": ".model",
    "MetricDelta": ".model",
    "PairedTest": "..stats.paired",
    "SessionMove": ".model",
    "combined_value": ".core",
    "compare_runs": ".core",
    "render_text": ".text",
}

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


__getattr__ = lazy_exports(__name__, _EXPORTS)
