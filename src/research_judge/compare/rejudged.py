"""Did the score move because the agent changed or because the judge did?

REJUDGED is the baseline's sessions graded again by the current judge (the response cache makes
unchanged requests free). On the sessions graded in all three runs, every metric's delta splits
exactly into

    judge_shift  = REJUDGED - BASELINE   (same agent answers, different judge)
    agent_change = CURRENT  - REJUDGED   (same judge, different agent answers)

each with the same paired test ``compare`` uses (exact McNemar for the pass rate, exact
signed-rank for criteria), and ``moved`` says which part is beyond noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..results.model import CRITERIA, Result
from ..results.rows import ResultRow, as_rows
from ..stats.paired import PairedTest, mcnemar_exact, signed_rank
from .judges import RunJudges, describe_change

Moved = Literal["judge", "agent", "both", "neither"]
PASS_RATE = "pass_rate"


@dataclass(frozen=True)
class Part:
    delta: float | None
    test: PairedTest


@dataclass(frozen=True)
class Split:
    judge_shift: Part
    agent_change: Part

    @property
    def moved(self) -> Moved:
        judge = self.judge_shift.test.significant is True
        agent = self.agent_change.test.significant is True
        return "both" if judge and agent else "judge" if judge else "agent" if agent else "neither"

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge_shift": self.judge_shift.delta,
            "agent_change": self.agent_change.delta,
            "judge_shift_test": self.judge_shift.test.to_dict(),
            "agent_change_test": self.agent_change.test.to_dict(),
            "moved": self.moved,
        }


@dataclass(frozen=True)
class Decomposition:
    n_sessions: int  # graded in all three runs
    metrics: dict[str, Split]  # pass_rate, then the six criteria
    judge: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_sessions": self.n_sessions,
            "judge": self.judge,
            "metrics": {name: split.to_dict() for name, split in self.metrics.items()},
            "warnings": list(self.warnings),
        }


def decompose(
    baseline: Sequence[Result | ResultRow],
    current: Sequence[Result | ResultRow],
    rejudged: Sequence[Result | ResultRow],
    names: Sequence[str] = CRITERIA,
) -> Decomposition:
    """``names``: the criteria the comparison shows (the citation audit's join when a run has
    it), so every row of the comparison has its split."""
    return _decompose(
        list(as_rows(baseline)), list(as_rows(current)), list(as_rows(rejudged)), names
    )


def _decompose(
    baseline: Sequence[ResultRow],
    current: Sequence[ResultRow],
    rejudged: Sequence[ResultRow],
    names: Sequence[str],
) -> Decomposition:
    base = {r.session_id: r for r in baseline if r.ok}
    rej = {r.session_id: r for r in rejudged if r.ok}
    triples = [
        (base[r.session_id], rej[r.session_id], r)
        for r in current
        if r.ok and r.session_id in base and r.session_id in rej
    ]
    metrics = {PASS_RATE: _pass_rate_split(triples)}
    metrics.update({name: _criterion_split(name, triples) for name in names})
    rej_judges, cur_judges = RunJudges.of(rejudged), RunJudges.of(current)
    warnings = _warnings(baseline, rejudged, triples, rej_judges, cur_judges)
    return Decomposition(len(triples), metrics, rej_judges.to_dict(), warnings)


def _pass_rate_split(triples: list[tuple[ResultRow, ResultRow, ResultRow]]) -> Split:
    def part(pairs: list[tuple[ResultRow, ResultRow]]) -> Part:
        before = sum(a.verdict == "pass" for a, _ in pairs)
        after = sum(b.verdict == "pass" for _, b in pairs)
        down = sum(a.verdict == "pass" and b.verdict == "fail" for a, b in pairs)
        up = sum(a.verdict == "fail" and b.verdict == "pass" for a, b in pairs)
        delta = (after - before) / len(pairs) if pairs else None
        return Part(delta, mcnemar_exact(down, up, len(pairs)))

    return Split(
        part([(b, r) for b, r, _ in triples]),
        part([(r, c) for _, r, c in triples]),
    )


def _criterion_split(name: str, triples: list[tuple[ResultRow, ResultRow, ResultRow]]) -> Split:
    # Only sessions where all three runs have a value, so the two parts add up to the total.
    values = [
        (b.criterion_value(name), r.criterion_value(name), c.criterion_value(name))
        for b, r, c in triples
    ]
    full = [(b, r, c) for b, r, c in values if b is not None and r is not None and c is not None]

    def part(diffs: list[float]) -> Part:
        return Part(sum(diffs) / len(diffs) if diffs else None, signed_rank(diffs))

    return Split(part([r - b for b, r, _ in full]), part([c - r for _, r, c in full]))


def _warnings(
    baseline: Sequence[ResultRow],
    rejudged: Sequence[ResultRow],
    triples: list[tuple[ResultRow, ResultRow, ResultRow]],
    rej_judges: RunJudges,
    cur_judges: RunJudges,
) -> list[str]:
    out: list[str] = []
    rej, cur = rej_judges.main, cur_judges.main
    if rej is not None and cur is not None and rej != cur:
        detail = "; ".join(describe_change(rej, cur))
        out.append(
            "the rejudged run was not graded by the current run's judge "
            f"({detail}): agent_change still mixes in a judge change"
        )
    rejudged_ids = {r.session_id for r in rejudged}
    missing = [r.session_id for r in baseline if r.session_id not in rejudged_ids]
    if missing:
        out.append(
            f"{len(missing)} baseline session(s) are not in the rejudged run and are left out "
            "of the split"
        )
    if not triples:
        out.append("no session was graded in all three runs: the split is undefined")
    return out


# Said after a judge-changed warning: exactly what to run to separate the two.
REJUDGE_HINT = (
    "to separate them, grade the baseline's sessions with the current judge (same --provider, "
    "--model, --prompts; the cache makes unchanged requests free) and compare against that: "
    "`research-judge grade BASELINE_SESSIONS.jsonl --out REJUDGED.jsonl --model CURRENT_MODEL` "
    "then `research-judge compare BASELINE.jsonl CURRENT.jsonl --rejudged REJUDGED.jsonl`"
)
