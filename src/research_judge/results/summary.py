"""Headline numbers of a set of results: what ``grade`` prints at the end and the demo shows."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._format import num, pct
from .model import CITATION_NAMES, CRITERIA, RATIO_NAMES, SCORE_NAMES, Result
from .rows import ResultRow, as_rows


@dataclass
class Summary:
    sessions: int = 0
    graded: int = 0
    errors: int = 0
    passed: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    means: dict[str, float | None] = field(default_factory=dict)
    quotes_verified: int = 0  # evidence and claim quotes found in their text (graded sessions)
    quotes: int = 0
    context: ContextSummary = field(default_factory=lambda: ContextSummary())
    # The first errored session and its error's text: the reason is said where the count is,
    # not left inside the results file.
    first_error: tuple[str, str] | None = None

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    @property
    def evidence_verified(self) -> float | None:
        """The share of quotes verified; None when there was nothing to check."""
        return self.quotes_verified / self.quotes if self.quotes else None


@dataclass
class ContextSummary:
    """Context diagnostics over the results that carry them (contract section 11)."""

    sessions: int = 0
    trajectory_tokens: list[int] = field(default_factory=list)
    split: int = 0
    counting_calls: int = 0
    not_judged_references: int = 0
    not_judged_claims: int = 0
    sessions_not_fully_judged: int = 0
    duplicate_references: int = 0
    used_token_shares: list[float] = field(default_factory=list)

    def add(self, row: ResultRow) -> None:
        if not row.has_context:
            return
        self.sessions += 1
        self.trajectory_tokens.append(row.trajectory_tokens)
        self.split += row.split
        self.counting_calls += row.counting_calls
        self.duplicate_references += row.duplicate_references
        self.not_judged_references += row.not_judged_references
        self.not_judged_claims += row.not_judged_claims
        self.sessions_not_fully_judged += row.not_judged > 0
        if row.ok and row.used_token_share is not None:
            self.used_token_shares.append(row.used_token_share)

    def to_dict(self) -> dict[str, Any]:
        tokens = self.trajectory_tokens
        return {
            "sessions": self.sessions,
            "trajectory_tokens_median": statistics.median(tokens) if tokens else None,
            "trajectory_tokens_max": max(tokens) if tokens else None,
            "used_token_share_mean": (
                round(statistics.fmean(self.used_token_shares), 4)
                if self.used_token_shares
                else None
            ),
            "duplicate_references": self.duplicate_references,
            "split_sessions": self.split,
            "counting_calls": self.counting_calls,
            "not_judged_references": self.not_judged_references,
            "not_judged_claims": self.not_judged_claims,
            "sessions_not_fully_judged": self.sessions_not_fully_judged,
        }

    def line(self) -> str | None:
        if not self.sessions:
            return None
        tokens = self.trajectory_tokens
        share = (
            f"{statistics.fmean(self.used_token_shares):.2f}" if self.used_token_shares else "n/a"
        )
        text = (
            f"context  trajectory tokens median {statistics.median(tokens):.0f}, max "
            f"{max(tokens)}; used token share {share}; duplicate references "
            f"{self.duplicate_references}; split {self.split} session(s)"
        )
        if self.not_judged_references or self.not_judged_claims:
            text += (
                f"; not judged {self.not_judged_references} reference(s) and "
                f"{self.not_judged_claims} claim(s) in {self.sessions_not_fully_judged} "
                "session(s), left out of the ratios"
            )
        return text


def summarize(results: Iterable[Result | ResultRow]) -> Summary:
    """Errored sessions are counted, then left out of every mean and of the pass rate.

    A fold: ``results`` may be a stream (``grade`` reads its --out back as rows)."""
    s = Summary()
    names = (*CRITERIA, *CITATION_NAMES)
    sums = dict.fromkeys(names, 0.0)
    counts = dict.fromkeys(names, 0)
    for r in as_rows(results):
        s.sessions += 1
        s.context.add(r)
        if not r.ok:
            s.errors += 1
            kind = r.error_kind or "unknown"
            s.error_kinds[kind] = s.error_kinds.get(kind, 0) + 1
            if s.first_error is None:
                s.first_error = (r.session_id, r.error or kind)
            continue
        s.graded += 1
        s.passed += r.verdict == "pass"
        s.quotes_verified += r.evidence_verified
        s.quotes += r.evidence_total
        for name in names:
            value = _as_reported(r, name)
            if value is not None:
                sums[name] += value
                counts[name] += 1
    s.means = {n: (sums[n] / counts[n] if counts[n] else None) for n in names}
    return s


def _as_reported(row: ResultRow, name: str) -> float | None:
    """Ratios on 0-1, scores on their own 1-3 scale (what a reader of the summary expects)."""
    if name in RATIO_NAMES or name in CITATION_NAMES:
        return row.criterion_value(name)
    score = row.score(name)
    return None if score is None else float(score)


_FIRST_ERROR_CHARS = 300


def _one_line(text: str) -> str:
    """One printable line: the text comes from a server or a results file (neither trusted), so
    no newline (a CI workflow command must start a line) and no terminal control character."""
    flat = "".join(c if c.isprintable() else " " for c in " ".join(text.split()))
    return flat if len(flat) <= _FIRST_ERROR_CHARS else flat[: _FIRST_ERROR_CHARS - 3] + "..."


def format_summary(s: Summary) -> str:
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(s.error_kinds.items()))
    lines = [
        f"sessions {s.sessions}: graded {s.graded}, errors {s.errors}"
        + (f" ({kinds})" if kinds else ""),
    ]
    if s.first_error is not None:
        session, text = s.first_error
        lines.append(f"first error: {_one_line(session)}: {_one_line(text)}")
    lines += [
        f"pass rate {pct(s.pass_rate, 0)} ({s.passed}/{s.graded})",
        "ratios   " + "  ".join(f"{n} {num(s.means[n], 2)}" for n in RATIO_NAMES),
        "scores   " + "  ".join(f"{n} {num(s.means[n], 2)}" for n in SCORE_NAMES) + "  (1-3)",
        f"evidence quotes verified {pct(s.evidence_verified, 0)}",
        "citations "
        + "  ".join(f"{n.removeprefix('citation_')} {num(s.means[n], 2)}" for n in CITATION_NAMES),
    ]
    if (context := s.context.line()) is not None:
        lines.append(context)
    return "\n".join(lines)
