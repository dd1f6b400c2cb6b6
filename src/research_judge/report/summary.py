"""Run-level numbers for the report: the headline, tokens and cost, judge errors, judges."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ..compare.judges import RunJudges
from ..results.model import CITATION_NAMES, RATIO_NAMES, SCORE_NAMES, Result
from ..results.rows import ResultRow, as_rows
from ..results.summary import summarize


@dataclass(frozen=True)
class Headline:
    sessions: int
    graded: int
    errors: int
    passed: int
    pass_rate: float | None  # over graded sessions; None when nothing was graded
    ratio_means: dict[str, float | None]  # 0..1, nulls left out
    score_means: dict[str, float | None]  # on the judge's own 1..3 scale, as summarize gives
    citation_means: dict[str, float | None]  # the citation audit's precision and recall, 0..1
    evidence_verified: int
    evidence_total: int
    evidence_share: float | None  # None when there was no quote to check

    @property
    def failed(self) -> int:
        return self.graded - self.passed


@dataclass(frozen=True)
class CostSummary:
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    calls: int
    cache_hits: int
    known_cost_usd: float
    sessions_without_cost: int

    @property
    def total_cost_usd(self) -> float | None:
        """The whole run's cost, or None ("unknown") when any session's cost is unknown."""
        return None if self.sessions_without_cost else self.known_cost_usd


@dataclass(frozen=True)
class ErrorLine:
    session_id: str
    kind: str
    message: str


@dataclass(frozen=True)
class JudgeLine:
    provider: str
    model: str
    prompts: dict[str, str]  # prompt role -> sha256
    fingerprint: str
    sessions: int


def headline(results: Iterable[Result | ResultRow]) -> Headline:
    """``summarize``'s numbers (the ones ``grade`` prints), split into ratios and scores."""
    s = summarize(results)
    return Headline(
        sessions=s.sessions,
        graded=s.graded,
        errors=s.errors,
        passed=s.passed,
        pass_rate=s.pass_rate,
        ratio_means={name: s.means[name] for name in RATIO_NAMES},
        score_means={name: s.means[name] for name in SCORE_NAMES},
        citation_means={name: s.means[name] for name in CITATION_NAMES},
        evidence_verified=s.quotes_verified,
        evidence_total=s.quotes,
        evidence_share=s.evidence_verified,
    )


def cost(results: Iterable[Result | ResultRow]) -> CostSummary:
    # Errored sessions are counted too: their failed attempts were paid for.
    rows = list(as_rows(results))
    costs = [r.cost_usd for r in rows]
    return CostSummary(
        input_tokens=sum(r.input_tokens for r in rows),
        cached_input_tokens=sum(r.cached_input_tokens for r in rows),
        output_tokens=sum(r.output_tokens for r in rows),
        calls=sum(r.calls for r in rows),
        cache_hits=sum(r.cache_hits for r in rows),
        known_cost_usd=math.fsum(c for c in costs if c is not None),
        sessions_without_cost=sum(c is None for c in costs),
    )


def errors(results: Iterable[Result | ResultRow]) -> list[ErrorLine]:
    return [
        ErrorLine(r.session_id, r.error_kind or "error", r.error or "no verdict recorded")
        for r in results
        if not r.ok
    ]


def judges(results: Iterable[Result | ResultRow]) -> list[JudgeLine]:
    return [
        JudgeLine(ident.provider, ident.model, dict(ident.prompts), ident.fingerprint, n)
        for ident, n in RunJudges.of(results).counts
    ]
