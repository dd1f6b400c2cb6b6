"""The batch engine: many sessions through one judge, fast, resumable and within budget."""

from __future__ import annotations

from ..clients.cache import CachingClient
from ..clients.resilience import AdaptiveLimiter, ResilientClient, RetryPolicy
from ..cost.estimate import Budget, Estimate, Estimator
from .run import RunOptions, RunStats, grade_file, grade_sessions
from .select import Selection, parse_where

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
