"""Headline numbers of a set of results: what ``grade`` prints at the end and the demo shows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .model import CITATION_NAMES, CRITERIA, RATIO_NAMES, SCORE_NAMES, Result


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

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    @property
    def evidence_verified(self) -> float | None:
        """The share of quotes verified; None when there was nothing to check."""
        return self.quotes_verified / self.quotes if self.quotes else None


def summarize(results: Iterable[Result]) -> Summary:
    """Errored sessions are counted, then left out of every mean and of the pass rate."""
    s = Summary()
    names = (*CRITERIA, *CITATION_NAMES)
    sums = dict.fromkeys(names, 0.0)
    counts = dict.fromkeys(names, 0)
    for r in results:
        s.sessions += 1
        if not r.ok:
            s.errors += 1
            kind = r.error_kind or "unknown"
            s.error_kinds[kind] = s.error_kinds.get(kind, 0) + 1
            continue
        s.graded += 1
        s.passed += r.verdict == "pass"
        s.quotes_verified += r.evidence.verified
        s.quotes += r.evidence.total
        for name in names:
            value = _as_reported(r, name)
            if value is not None:
                sums[name] += value
                counts[name] += 1
    s.means = {n: (sums[n] / counts[n] if counts[n] else None) for n in names}
    return s


def _as_reported(result: Result, name: str) -> float | None:
    """Ratios on 0-1, scores on their own 1-3 scale (what a reader of the summary expects)."""
    if name in RATIO_NAMES or name in CITATION_NAMES:
        return result.criterion_value(name)
    scores = result.scores or {}
    return float(scores[name].score) if name in scores else None


def format_summary(s: Summary) -> str:
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.0f}%"

    def num(x: float | None, digits: int = 2) -> str:
        return "n/a" if x is None else f"{x:.{digits}f}"

    kinds = ", ".join(f"{k} {v}" for k, v in sorted(s.error_kinds.items()))
    lines = [
        f"sessions {s.sessions}: graded {s.graded}, errors {s.errors}"
        + (f" ({kinds})" if kinds else ""),
        f"pass rate {pct(s.pass_rate)} ({s.passed}/{s.graded})",
        "ratios   " + "  ".join(f"{n} {num(s.means[n])}" for n in RATIO_NAMES),
        "scores   " + "  ".join(f"{n} {num(s.means[n])}" for n in SCORE_NAMES) + "  (1-3)",
        f"evidence quotes verified {pct(s.evidence_verified)}",
        "citations "
        + "  ".join(f"{n.removeprefix('citation_')} {num(s.means[n])}" for n in CITATION_NAMES),
    ]
    return "\n".join(lines)
