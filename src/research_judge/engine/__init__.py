"""The batch engine: many sessions through one judge, fast, resumable and within budget.

Names are loaded on first use, so the ``grade`` flags can read ``Selection``'s defaults without
``--help`` importing the engine itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..clients.cache import CachingClient
    from ..clients.resilience import AdaptiveLimiter, ResilientClient
    from ..clients.settings import RetryPolicy
    from ..judge.estimate import Budget, Estimate, Estimator
    from .run import RunOptions, RunStats, grade_file, grade_sessions
    from .select import Selection, parse_where

# name -> module that defines it
_EXPORTS = {
    "AdaptiveLimiter": "..clients.resilience",
    "Budget": "..judge.estimate",
    "CachingClient": "..clients.cache",
    "Estimate": "..judge.estimate",
    "Estimator": "..judge.estimate",
    "ResilientClient": "..clients.resilience",
    "RetryPolicy": "..clients.settings",
    "RunOptions": ".run",
    "RunStats": ".run",
    "Selection": ".select",
    "grade_file": ".run",
    "grade_sessions": ".run",
    "parse_where": ".select",
}
# Spelled out for linters and type checkers; the same names as _EXPORTS.
__all__ = [
    "AdaptiveLimiter",
    "Budget",
    "CachingClient",
    "Estimate",
    "Estimator",
    "ResilientClient",
    "RetryPolicy",
    "RunOptions",
    "RunStats",
    "Selection",
    "grade_file",
    "grade_sessions",
    "parse_where",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
