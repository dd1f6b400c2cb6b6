"""What changed in the agents' context between two runs: tokens pulled per session and the share
of them the answer used (``context`` in each result). Shown beside the criteria, never flagged:
pulling more is a cost and a warning sign, not a quality regression by itself."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from ..results.rows import ResultRow
from ..stats.paired import signed_rank
from .model import MetricDelta

TOKENS_PULLED = "tokens_pulled"
USED_TOKEN_SHARE = "used_token_share"
CONTEXT_METRICS = (TOKENS_PULLED, USED_TOKEN_SHARE)


def context_deltas(pairs: Sequence[tuple[ResultRow, ResultRow]]) -> list[MetricDelta]:
    """Rows for the common sessions that carry context on both sides; none when no pair does.

    Tokens pulled is a property of the session, so every common pair counts; the used token
    share needs the judge's verdicts, so only pairs graded on both sides count."""
    both = [(b, c) for b, c in pairs if b.has_context and c.has_context]
    if not both:
        return []
    tokens = [(float(b.trajectory_tokens), float(c.trajectory_tokens)) for b, c in both]
    shares = [(b.used_token_share, c.used_token_share) for b, c in both if b.ok and c.ok]
    share_pairs = [(x, y) for x, y in shares if x is not None and y is not None]
    return [_delta(TOKENS_PULLED, tokens), _delta(USED_TOKEN_SHARE, share_pairs)]


def _delta(name: str, pairs: list[tuple[float, float]]) -> MetricDelta:
    base = [b for b, _ in pairs]
    cur = [c for _, c in pairs]
    return MetricDelta(
        name,
        fmean(base) if base else None,
        fmean(cur) if cur else None,
        len(base),
        len(cur),
        signed_rank([c - b for b, c in pairs]),
    )
