"""The sessions most worth reading: failing first, then lowest combined criteria.

For each one the report shows what the judge held against it (ungrounded claims, references not
used or not relevant) with the quotes it gave and whether each quote was found where it should be.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..compare import combined_value
from ..results.model import CRITERIA, SCORE_NAMES, Result, VerdictRecord
from ..results.rows import ResultRow, ResultsRun, as_run

MAX_PROBLEMS_SHOWN = 12

# The order a reader should see them in: an unsupported claim in the answer matters more than a
# reference the agent pulled and left unused, which matters more than an irrelevant one.
_CHECK_ORDER = {"grounded": 0, "used": 1, "relevant": 2}
_NO_LABELS = {"grounded": "ungrounded claim", "used": "not used", "relevant": "not relevant"}


@dataclass(frozen=True)
class Problem:
    label: str
    check: str
    ref_id: str
    answer: str
    claim: str
    evidence: str
    source: str
    evidence_verified: bool | None
    claim_verified: bool | None


@dataclass(frozen=True)
class ScoreLine:
    criterion: str
    score: int
    reasoning: str
    evidence: str


@dataclass(frozen=True)
class WorstSession:
    session_id: str
    question: str
    verdict: str | None
    verdict_reasons: tuple[str, ...]  # the verdict policy's own reasons, when it gave any
    combined: float | None
    values: dict[str, float | None]  # every criterion on the 0..1 scale
    scores: tuple[ScoreLine, ...]
    problems: tuple[Problem, ...]
    problems_hidden: int
    n_verdicts: int  # how many call-1 verdicts the session has at all
    evidence_verified: int
    evidence_total: int
    # The citation audit: "precision 0.50, recall 0.67" and each claim whose citation is wrong.
    citations: str | None = None
    citation_issues: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        """Why it is here, first thing on its card: the verdict policy's reasons for a failing
        session (else its most serious finding); for a passing one, its weakest criterion."""
        if self.verdict == "fail":
            if self.verdict_reasons:
                return "Fails: " + "; ".join(self.verdict_reasons)
            if self.problems:
                return f"Fails; most serious finding: {self.problems[0].label}"
            return "Fails"
        known = [(v, name) for name, v in self.values.items() if v is not None]
        if self.verdict == "pass" and known:
            value, name = min(known)
            return f"Passes; weakest criterion: {name} {value:.2f} (0..1)"
        return "Passes" if self.verdict == "pass" else "No verdict"


def worst_sessions(results: ResultsRun | Sequence[Result], limit: int) -> list[WorstSession]:
    """Up to ``limit`` graded sessions: failing before passing, then by combined value (lowest
    first; a session with no criterion values sorts last), then in file order. Ranked on the
    rows; only the sessions shown are read in full."""
    run = as_run(results)
    graded = [(i, r, combined_value(r)) for i, r in enumerate(run.rows) if r.ok]

    def key(item: tuple[int, ResultRow, float | None]) -> tuple[bool, float, int]:
        i, r, combined = item
        return (r.verdict != "fail", math.inf if combined is None else combined, i)

    ranked = heapq.nsmallest(max(limit, 0), graded, key=key)
    full = run.full(r.session_id for _, r, _ in ranked)
    return [describe(full[r.session_id], combined) for _, r, combined in ranked]


def problems_of(verdicts: Sequence[VerdictRecord]) -> list[Problem]:
    """Every "no" answer, plus any "yes" whose quote could not be verified, most serious first."""
    found: list[tuple[int, int, Problem]] = []
    for position, v in enumerate(verdicts):
        if v.answer == "no":
            label = _NO_LABELS[v.check]
        elif v.evidence_verified is False or v.claim_verified is False:
            label = "quote not found"
        else:
            continue
        problem = Problem(
            label=label,
            check=v.check,
            ref_id=v.id,
            answer=v.answer,
            claim=v.claim or "",
            evidence=v.evidence,
            source=v.source or "",
            evidence_verified=v.evidence_verified,
            claim_verified=v.claim_verified,
        )
        rank = _CHECK_ORDER[v.check] + (0 if v.answer == "no" else 10)
        found.append((rank, position, problem))
    return [p for _, _, p in sorted(found, key=lambda t: (t[0], t[1]))]


def describe(r: Result, combined: float | None = None) -> WorstSession:
    """One session's card. ``combined`` defaults to the session's own combined value."""
    if combined is None:
        combined = combined_value(r)
    problems = problems_of(r.verdicts)
    citations, issues = _citations(r)
    scores = tuple(
        ScoreLine(name, r.scores[name].score, r.scores[name].reasoning, r.scores[name].evidence)
        for name in SCORE_NAMES
        if r.scores and name in r.scores
    )
    return WorstSession(
        session_id=r.session_id,
        question=r.question,
        verdict=r.verdict,
        verdict_reasons=tuple(r.verdict_reasons),
        combined=combined,
        values={name: r.criterion_value(name) for name in CRITERIA},
        scores=scores,
        problems=tuple(problems[:MAX_PROBLEMS_SHOWN]),
        problems_hidden=max(len(problems) - MAX_PROBLEMS_SHOWN, 0),
        n_verdicts=len(r.verdicts),
        evidence_verified=r.evidence.verified,
        evidence_total=r.evidence.total,
        citations=citations,
        citation_issues=issues,
    )


def _citations(r: Result) -> tuple[str | None, tuple[str, ...]]:
    """The audit's two ratios in words, and each claim whose citation is wrong."""
    audit = r.citations
    if audit is None:
        return None, ()

    def num(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.2f}"

    issues = []
    for c in audit.claims:
        cited = ", ".join(ref or "(not in the trajectory)" for ref in c.cited)
        if c.status == "misattributed":
            issues.append(f"{c.id} misattributed: cites {cited}, supported by {c.source}")
        elif c.status == "fabricated":
            issues.append(f"{c.id} fabricated: cites {cited}")
        elif c.status == "unsupported":
            issues.append(f"{c.id} cited ({cited}) but unsupported")
    return f"precision {num(audit.precision)}, recall {num(audit.recall)}", tuple(issues)
