"""Results of running tasks: one ``TaskResult`` per task, a ``TaskReport`` per run, and the diff
between two runs (regressions and fixes), plus the JSON form a later run reads back as baseline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._files import read_text
from .._validation import describe_validation_error
from ..errors import InputFileError


@dataclass(frozen=True)
class TaskResult:
    """How one task went. ``passed`` is derived from ``reasons`` so the two can never disagree.

    ``answer`` is what the agent answered (``None`` when it gave none or its result was
    unusable); ``detail`` keeps the exception message when the agent raised, since the reason
    carries only the type name.
    """

    id: str
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0
    answer: str | None = None
    detail: str | None = None
    tier: str | None = None

    @property
    def passed(self) -> bool:
        return not self.reasons

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "passed": self.passed,
            "reasons": list(self.reasons),
            "seconds": self.seconds,
            "answer": self.answer,
            "detail": self.detail,
            "tier": self.tier,
        }


@dataclass(frozen=True)
class TierStats:
    n: int
    n_passed: int

    @property
    def pass_rate(self) -> float:
        return self.n_passed / self.n if self.n else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "n_passed": self.n_passed, "pass_rate": self.pass_rate}


@dataclass(frozen=True)
class TaskReport:
    """One run of an agent over a task list. ``results`` are in task order.

    ``pass_rate`` of an empty run is 0.0 (the contract promises a float); ``n == 0`` tells that
    case apart from a run where everything failed.
    """

    results: list[TaskResult]
    agent: str | None = None

    @property
    def n(self) -> int:
        return len(self.results)

    @property
    def n_passed(self) -> int:
        return sum(1 for r in self.results if r.passed)

    @property
    def pass_rate(self) -> float:
        return self.n_passed / self.n if self.results else 0.0

    def by_id(self) -> dict[str, TaskResult]:
        return {r.id: r for r in self.results}

    def tiers(self) -> dict[str, TierStats]:
        """Pass counts per difficulty tier, tiers in order of first appearance; tasks without a
        tier are left out (empty when no task names one)."""
        out: dict[str, TierStats] = {}
        for r in self.results:
            if r.tier is None:
                continue
            before = out.get(r.tier, TierStats(0, 0))
            out[r.tier] = TierStats(before.n + 1, before.n_passed + int(r.passed))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "n": self.n,
            "n_passed": self.n_passed,
            "pass_rate": self.pass_rate,
            "tiers": {name: t.to_dict() for name, t in self.tiers().items()},
            "results": [r.to_dict() for r in self.results],
        }

    @classmethod
    def from_dict(cls, data: object) -> TaskReport:
        """Rebuild a report from ``to_dict()`` output; raise ``ValueError`` saying what is wrong.

        Keys beyond the report's own (``regressions``, ``fixes``, ... as ``tasks run --json``
        adds them) are ignored, so a saved comparison can serve as the next baseline.
        """
        try:
            model = _ReportModel.model_validate(data)
        except ValidationError as exc:
            raise ValueError(describe_validation_error(exc, limit=1)) from exc
        results: list[TaskResult] = []
        seen: set[str] = set()
        for index, item in enumerate(model.results):
            if item.id in seen:
                raise ValueError(f"results.{index}: duplicate task id {item.id!r}")
            if item.passed is not None and item.passed != (not item.reasons):
                raise ValueError(f"results.{index}: 'passed' disagrees with 'reasons'")
            seen.add(item.id)
            results.append(
                TaskResult(
                    id=item.id,
                    reasons=list(item.reasons),
                    seconds=item.seconds,
                    answer=item.answer,
                    detail=item.detail,
                    tier=item.tier,
                )
            )
        return cls(results=results, agent=model.agent)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)


class _ResultModel(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    passed: bool | None = None
    reasons: list[str]
    seconds: float = Field(default=0.0, ge=0)
    answer: str | None = None
    detail: str | None = None
    tier: str | None = None


class _ReportModel(BaseModel):
    model_config = ConfigDict(extra="ignore")

    agent: str | None = None
    results: list[_ResultModel]


def read_report(path: str | Path) -> TaskReport:
    """Load a report saved from ``research-judge tasks run --json``; errors name the file."""
    p = Path(path)
    text = read_text(p, "report")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(p, f"not valid JSON ({exc.msg})", exc.lineno) from exc
    try:
        return TaskReport.from_dict(data)
    except ValueError as exc:
        raise InputFileError(p, f"not a task report: {exc}") from exc


def regressions(old: TaskReport, new: TaskReport) -> list[str]:
    """Ids that passed in ``old`` and fail in ``new``, in ``new``'s task order.

    Tasks present in only one of the runs are neither regressions nor fixes.
    """
    return _flipped(old, new, now_passing=False)


def fixes(old: TaskReport, new: TaskReport) -> list[str]:
    """Ids that failed in ``old`` and pass in ``new``, in ``new``'s task order."""
    return _flipped(old, new, now_passing=True)


def only_in(report: TaskReport, other: TaskReport) -> list[str]:
    """Ids of ``report`` that ``other`` does not have, in ``report``'s task order."""
    theirs = other.by_id()
    return [r.id for r in report.results if r.id not in theirs]


def _flipped(old: TaskReport, new: TaskReport, *, now_passing: bool) -> list[str]:
    """Ids in both runs whose outcome changed to ``now_passing``, in ``new``'s task order."""
    before = old.by_id()
    return [
        r.id
        for r in new.results
        if r.passed == now_passing and r.id in before and before[r.id].passed != now_passing
    ]
