"""The judge's wire format (contract section 2): schemas sent, models parsed, completeness checked.

Pydantic guards the boundary; every problem found is collected in words the judge can act on,
because the re-ask sends them back. After parsing, callers get plain frozen dataclasses.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, WithJsonSchema

from ..errors import InvalidJudgeOutput
from ..safety import jsonin
from .schema import strict_schema

Check = Literal["relevant", "used", "grounded"]
Answer = Literal["yes", "no"]
Criterion = Literal["effectiveness", "fluff", "structure"]
# The scoring criteria (call 2); ``results.model.CRITERIA`` is these plus the three ratios.
SCORE_NAMES: tuple[Criterion, ...] = ("effectiveness", "fluff", "structure")
REFERENCE_CHECKS: tuple[Check, ...] = ("relevant", "used")


# --- wire models: strict about values, tolerant of extra keys (any added field is optional) --


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class WireVerdict(_Wire):
    id: str
    check: Check
    answer: Answer
    evidence: str
    claim: str | None = None
    source: str | None = None


class WireCounting(_Wire):
    verdicts: list[WireVerdict]


class WireScore(_Wire):
    criterion: Criterion
    reasoning: str
    evidence: str
    # StrictInt: JSON true is not a score, nor is "3". The schema says enum, not bounds: the
    # providers' strict modes take enums. Field order is the order the judge writes them in,
    # so reasoning comes before the score.
    score: Annotated[
        StrictInt, Field(ge=1, le=3), WithJsonSchema({"type": "integer", "enum": [1, 2, 3]})
    ]


class WireScoring(_Wire):
    scores: list[WireScore]


# --- what the rest of the code sees --------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    id: str
    check: Check
    answer: bool
    evidence: str
    claim: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class Score:
    criterion: Criterion
    score: int
    reasoning: str
    evidence: str


# --- JSON schemas sent with each request: the wire models in strict form -----------------------

COUNTING_SCHEMA: dict[str, Any] = strict_schema(WireCounting)
SCORING_SCHEMA: dict[str, Any] = strict_schema(WireScoring)


# --- parsing --------------------------------------------------------------------------------


def _load(text: str) -> Any:
    # Deep nesting, huge numbers and lone surrogates are invalid output too: re-asked like any.
    try:
        return jsonin.loads(text)
    except jsonin.UnusableJson as exc:
        raise InvalidJudgeOutput([f"the reply is {exc}"]) from exc


def _schema_problems(exc: ValidationError) -> list[str]:
    problems = []
    for err in exc.errors()[:10]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "the reply"
        got = err.get("input")
        shown = "" if isinstance(got, dict | list) else f" (got {json.dumps(got)[:60]})"
        problems.append(f"{where}: {err.get('msg')}{shown}")
    return problems


def parse_counting(text: str, reference_ids: list[str]) -> list[Verdict]:
    """Validate a call-1 reply against the session's references; raise with every problem."""
    try:
        wire = WireCounting.model_validate(_load(text))
    except ValidationError as exc:
        raise InvalidJudgeOutput(_schema_problems(exc)) from exc

    problems: list[str] = []
    known = set(reference_ids)
    pairs = Counter((v.id, v.check) for v in wire.verdicts)
    for (vid, check), count in pairs.items():
        if count > 1:
            problems.append(f"{count} '{check}' verdicts for id {vid!r}; give exactly one")
    for v in wire.verdicts:
        if v.check in REFERENCE_CHECKS and v.id not in known:
            problems.append(f"'{v.check}' verdict names unknown reference id {v.id!r}")
        if v.check == "grounded":
            if v.id in known:
                problems.append(f"claim id {v.id!r} clashes with a reference id; use c1, c2, ...")
            if not v.claim:
                problems.append(f"grounded verdict {v.id!r} does not quote its claim")
            if v.source is not None and v.source not in known:
                problems.append(f"grounded verdict {v.id!r} names unknown source {v.source!r}")
            if v.answer == "yes" and v.source is None:
                problems.append(f"grounded verdict {v.id!r} is 'yes' but names no source")
    for ref_id in reference_ids:
        for check in REFERENCE_CHECKS:
            if (ref_id, check) not in pairs:
                problems.append(f"reference {ref_id!r} has no '{check}' verdict")
    if problems:
        raise InvalidJudgeOutput(problems)
    return [
        Verdict(v.id, v.check, v.answer == "yes", v.evidence, v.claim, v.source)
        for v in wire.verdicts
    ]


def parse_scoring(text: str) -> dict[str, Score]:
    """Validate a call-2 reply: each criterion exactly once, scores 1..3."""
    try:
        wire = WireScoring.model_validate(_load(text))
    except ValidationError as exc:
        raise InvalidJudgeOutput(_schema_problems(exc)) from exc
    counts = Counter(s.criterion for s in wire.scores)
    problems = [f"criterion {c!r} is missing" for c in SCORE_NAMES if counts[c] == 0]
    problems += [f"criterion {c!r} appears {n} times" for c, n in counts.items() if n > 1]
    if problems:
        raise InvalidJudgeOutput(problems)
    return {s.criterion: Score(s.criterion, s.score, s.reasoning, s.evidence) for s in wire.scores}
