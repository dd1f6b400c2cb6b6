"""The report's context section: trajectory size against utilization, the heaviest sessions,
and what could not be judged (``context`` in each result, contract section 11).

Geometry only; the templates write the SVG, so every label is escaped like the rest of the page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..results.model import Result
from ..results.rows import ResultRow, ResultsRun, as_rows, as_run

HEAVIEST = 10
_W, _H = 460, 240
_LEFT, _RIGHT, _TOP, _BOTTOM = 44.0, 12.0, 10.0, 34.0


@dataclass(frozen=True)
class Point:
    session_id: str
    x: float
    y: float
    tokens: int
    utilization: float


@dataclass(frozen=True)
class Tick:
    label: str
    at: float  # x for the token axis, y for the utilization axis


@dataclass(frozen=True)
class Scatter:
    width: int
    height: int
    left: float
    right: float  # x of the right edge of the plot
    top: float
    bottom: float  # y of the x axis
    points: tuple[Point, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    left_out: int  # graded sessions with no utilization (no references): not plotted

    @property
    def description(self) -> str:
        return (
            f"Trajectory tokens (log scale) against utilization for {len(self.points)} sessions"
            + (f"; {self.left_out} without references not shown" if self.left_out else "")
        )


@dataclass(frozen=True)
class HeavySession:
    session_id: str
    trajectory_tokens: int
    references: int
    references_judged: int
    largest_reference_tokens: int
    duplicate_references: int
    used_token_share: float | None
    utilization: float | None
    counting_calls: int
    not_judged: int


@dataclass(frozen=True)
class ContextView:
    sessions: int
    split: int
    not_judged_references: int
    not_judged_claims: int
    sessions_not_fully_judged: int
    scatter: Scatter
    heaviest: tuple[HeavySession, ...]


def context_view(
    results: ResultsRun | Sequence[Result], heaviest: int = HEAVIEST
) -> ContextView | None:
    """None when no result carries context diagnostics (results from before they existed)."""
    run = as_run(results)
    with_context = [r for r in run.rows if r.has_context]
    if not with_context:
        return None
    ranked = sorted(with_context, key=lambda r: -r.trajectory_tokens)[:heaviest]
    full = run.full(r.session_id for r in ranked)  # the few shown in detail, read in full
    return ContextView(
        sessions=len(with_context),
        split=sum(r.split for r in with_context),
        not_judged_references=sum(r.not_judged_references for r in with_context),
        not_judged_claims=sum(r.not_judged_claims for r in with_context),
        sessions_not_fully_judged=sum(bool(r.not_judged) for r in with_context),
        scatter=scatter([r for r in with_context if r.ok]),
        heaviest=tuple(_heavy(full[r.session_id]) for r in ranked),
    )


def _heavy(r: Result) -> HeavySession:
    ctx = r.context
    assert ctx is not None
    return HeavySession(
        r.session_id,
        ctx.trajectory_tokens,
        ctx.references,
        ctx.references_judged,
        ctx.largest_reference_tokens,
        ctx.duplicate_references,
        ctx.used_token_share,
        r.criterion_value("utilization") if r.ok else None,
        ctx.counting_calls,
        ctx.not_judged,
    )


def scatter(graded: Sequence[Result | ResultRow]) -> Scatter:
    pairs = [
        (r.session_id, r.trajectory_tokens, u)
        for r in as_rows(graded)
        if r.has_context
        and (u := r.criterion_value("utilization")) is not None
        and r.trajectory_tokens > 0
    ]
    right, bottom = _W - _RIGHT, _H - _BOTTOM
    if pairs:
        low = math.floor(math.log10(min(t for _, t, _ in pairs)))
        high = math.ceil(math.log10(max(t for _, t, _ in pairs)))
    else:
        low, high = 2, 6
    high = max(high, low + 1)

    def x_of(tokens: float) -> float:
        share = (math.log10(tokens) - low) / (high - low)
        return round(_LEFT + share * (right - _LEFT), 2)

    def y_of(value: float) -> float:
        return round(bottom - value * (bottom - _TOP), 2)

    points = tuple(Point(sid, x_of(t), y_of(u), t, u) for sid, t, u in pairs)
    x_ticks = tuple(Tick(_tokens_label(10**e), x_of(10**e)) for e in range(low, high + 1))
    # Labels say the value they sit at: "{v:.1f}" printed 0.25 as 0.2 and 0.75 as 0.8.
    y_ticks = tuple(Tick(f"{v:g}", y_of(v)) for v in (0.0, 0.25, 0.5, 0.75, 1.0))
    return Scatter(
        _W, _H, _LEFT, right, _TOP, bottom, points, x_ticks, y_ticks, len(graded) - len(pairs)
    )


def _tokens_label(value: int) -> str:
    if value >= 1_000_000:
        return f"{value // 1_000_000}M"
    if value >= 1_000:
        return f"{value // 1_000}k"
    return str(value)
