"""Results as slim records: the few numbers per session that ``validate``, ``compare``,
``report``, ``stability`` and ``grade``'s summary compute from.

A full ``Result`` in memory costs about 34 kB (the call-1 verdicts with their quotes, the
scores' reasoning, the citation audit's claims) and most of a verb's time goes into building it;
every figure those verbs print is a fold over a few scalars per session. ``iter_rows`` reads a
results file into ``ResultRow``s: each line is validated by pydantic against a projection of
``Result`` that names only the fields kept (the same field types, so a bad value in them is
named at its line as ``read_results`` names it), and the rest of the line is skipped without
being turned into Python objects. Fields a verb does not read are not checked by that verb.

The few sessions a verb shows in detail (the report's worst sessions, the questions of
regressions, ``validate --suggest``'s picks) are read again in full from their lines:
``ResultsRun.full``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._validation import describe_validation_error
from ..errors import ErrorKind, InputFileError
from .model import (
    CITATION_NAMES,
    RATIO_NAMES,
    SCORE_NAMES,
    AnswerStats,
    EvidenceSummary,
    JudgeInfo,
    NotJudgedClaim,
    PassFail,
    Ratios,
    Repeats,
    Result,
    UsageInfo,
)

_N = TypeVar("_N", int, float)
_M = TypeVar("_M", bound=BaseModel)


class _Slim(BaseModel):
    # Everything not named here is skipped by the JSON parser, never built as Python objects.
    model_config = ConfigDict(extra="ignore")


class _Score(_Slim):
    score: Literal[1, 2, 3]


class _Citations(_Slim):
    precision: float | None = None
    recall: float | None = None


class _Context(_Slim):
    trajectory_tokens: int = 0
    used_token_share: float | None = None
    counting_calls: int = 0
    split: bool = False
    duplicate_references: int = 0
    not_judged_references: list[str] = Field(default_factory=list)
    not_judged_claims: list[NotJudgedClaim] = Field(default_factory=list)


class _Line(_Slim):
    """The projection of ``Result`` a row is made from (same names, same types)."""

    session_id: str
    ratios: Ratios | None = None
    scores: dict[str, _Score] | None = None
    verdict: PassFail | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    judge: JudgeInfo | None = None
    usage: UsageInfo = Field(default_factory=UsageInfo)
    evidence: EvidenceSummary = Field(default_factory=EvidenceSummary)
    citations: _Citations | None = None
    answer_stats: AnswerStats = Field(default_factory=AnswerStats)
    context: _Context | None = None
    repeats: Repeats | None = None


@dataclass(slots=True)
class ResultRow:
    """One session's scalars; ``line`` is its line in the results file (0: held in memory)."""

    session_id: str
    line: int = 0
    verdict: PassFail | None = None
    error: str | None = None
    error_kind: str | None = None
    relevance: float | None = None
    utilization: float | None = None
    grounding: float | None = None
    effectiveness: int | None = None  # the judge's 1-3 scores, as written
    fluff: int | None = None
    structure: int | None = None
    citation_precision: float | None = None
    citation_recall: float | None = None
    audited: bool = False  # the result carries a citation audit
    judge: JudgeInfo | None = None  # one shared object per distinct judge in a file
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float | None = None
    evidence_verified: int = 0
    evidence_total: int = 0
    chars: int = 0
    words: int = 0
    has_context: bool = False  # context diagnostics present (results before them have none)
    trajectory_tokens: int = 0
    used_token_share: float | None = None
    split: bool = False
    counting_calls: int = 0
    duplicate_references: int = 0
    not_judged_references: int = 0
    not_judged_claims: int = 0
    repeats: Repeats | None = None  # only with `grade --repeats K`

    @property
    def ok(self) -> bool:
        return self.error is None and self.verdict is not None

    @property
    def not_judged(self) -> int:
        return self.not_judged_references + self.not_judged_claims

    def score(self, name: str) -> int | None:
        """A 1-3 score on its own scale; None when the result has none for ``name``."""
        if name not in SCORE_NAMES:
            raise KeyError(name)
        value: int | None = getattr(self, name)
        return value

    def criterion_value(self, name: str) -> float | None:
        """As ``Result.criterion_value``: ratios as they are, 1-3 scores as (score - 1) / 2."""
        if name in SCORE_NAMES:
            s = self.score(name)
            return None if s is None else (s - 1) / 2
        if name in RATIO_NAMES or name in CITATION_NAMES:
            value: float | None = getattr(self, name)
            return value
        raise KeyError(name)

    @classmethod
    def of(cls, result: Result, line: int = 0) -> ResultRow:
        """The row of a result held in memory (the Python API's lists of ``Result``)."""
        return _row(result, line, _Shared())


_SHARED_NUMBERS = 200_000  # past this many distinct values, new ones are kept as they come


class _Shared:
    """One object per distinct judge and per distinct number in a file: a million rows share a
    handful of judges and a few thousand ratios and token counts (a float costs 24 bytes)."""

    def __init__(self) -> None:
        self._judges: dict[str, JudgeInfo] = {}
        self._numbers: dict[float, float] = {}

    def judge(self, judge: JudgeInfo | None) -> JudgeInfo | None:
        if judge is None:
            return None
        return self._judges.setdefault(judge.model_dump_json(), judge)

    def num(self, value: _N) -> _N:
        if value and len(self._numbers) < _SHARED_NUMBERS:  # 0.0 and -0.0 are equal keys too
            # 1 and 1.0 are equal keys: the type of what comes back must be the one asked for.
            shared = self._numbers.setdefault(value, value)
            if type(shared) is type(value):
                return shared
        return value

    def opt(self, value: float | None) -> float | None:
        return None if value is None else self.num(value)


def _row(r: Result | _Line, line: int, shared: _Shared) -> ResultRow:
    ratios, scores, ctx, cit, usage = r.ratios, r.scores or {}, r.context, r.citations, r.usage
    opt, num = shared.opt, shared.num
    score = {
        name: (s.score if (s := scores.get(name)) is not None else None) for name in SCORE_NAMES
    }
    return ResultRow(
        session_id=r.session_id,
        line=line,
        verdict=r.verdict,
        error=r.error,
        error_kind=None if r.error_kind is None else str(r.error_kind),
        relevance=None if ratios is None else opt(ratios.relevance),
        utilization=None if ratios is None else opt(ratios.utilization),
        grounding=None if ratios is None else opt(ratios.grounding),
        effectiveness=score["effectiveness"],
        fluff=score["fluff"],
        structure=score["structure"],
        citation_precision=None if cit is None else opt(cit.precision),
        citation_recall=None if cit is None else opt(cit.recall),
        audited=cit is not None,
        judge=shared.judge(r.judge),
        input_tokens=num(usage.input_tokens),
        cached_input_tokens=num(usage.cached_input_tokens),
        output_tokens=num(usage.output_tokens),
        calls=usage.calls,
        cache_hits=usage.cache_hits,
        cost_usd=usage.cost_usd,
        evidence_verified=r.evidence.verified,
        evidence_total=r.evidence.total,
        chars=num(r.answer_stats.chars),
        words=r.answer_stats.words,
        has_context=ctx is not None,
        trajectory_tokens=0 if ctx is None else num(ctx.trajectory_tokens),
        used_token_share=None if ctx is None else opt(ctx.used_token_share),
        split=False if ctx is None else ctx.split,
        counting_calls=0 if ctx is None else ctx.counting_calls,
        duplicate_references=0 if ctx is None else ctx.duplicate_references,
        not_judged_references=0 if ctx is None else len(ctx.not_judged_references),
        not_judged_claims=0 if ctx is None else len(ctx.not_judged_claims),
        repeats=r.repeats,
    )


def iter_rows(
    path: str | Path, *, missing_ok: bool = False
) -> Iterator[ResultRow | InputFileError]:
    """Each line of a results file as a row, or the error naming its line (as ``iter_results``)."""
    p = Path(path)
    if missing_ok and not p.exists():
        return
    shared = _Shared()
    try:
        handle = p.open("rb")
    except OSError as exc:
        raise InputFileError(p, f"cannot read results: {exc.strerror or exc}") from exc
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield InputFileError(p, f"not valid UTF-8 (byte {exc.start + 1})", number)
                continue
            if not text.strip():
                continue
            try:
                parsed = _Line.model_validate_json(text)
            except ValidationError as exc:
                yield InputFileError(p, describe_validation_error(exc, limit=1), number)
                continue
            yield _row(parsed, number, shared)


def read_rows(path: str | Path) -> list[ResultRow]:
    """Every row of a file; the first bad line or duplicate id raises, as ``read_results``."""
    out: list[ResultRow] = []
    seen: set[str] = set()
    for item in iter_rows(path):
        if isinstance(item, InputFileError):
            raise item
        if item.session_id in seen:
            raise InputFileError(path, f"duplicate session id {item.session_id!r}", item.line)
        seen.add(item.session_id)
        out.append(item)
    return out


@dataclass(frozen=True)
class ResultsRun:
    """One run's rows, and the way back to the full result of any of them.

    From a file (``load``), a full result is read again from its line; from results held in
    memory (``held``), it is the object itself.
    """

    rows: Sequence[ResultRow]
    path: Path | None = None
    held: Mapping[str, Result] | None = None

    @classmethod
    def load(cls, path: str | Path) -> ResultsRun:
        return cls(read_rows(path), Path(path))

    @classmethod
    def of(cls, results: Iterable[Result]) -> ResultsRun:
        held = list(results)
        rows = [ResultRow.of(r) for r in held]
        return cls(rows, None, {r.session_id: r for r in held})

    def full(self, ids: Iterable[str]) -> dict[str, Result]:
        """The full results of these sessions (ids this run lacks are left out)."""
        wanted = set(ids)
        if self.held is not None:
            return {i: self.held[i] for i in wanted if i in self.held}
        if not wanted or self.path is None:
            return {}
        lines = {row.line: row.session_id for row in self.rows if row.session_id in wanted}
        return _read_lines(self.path, lines, Result)

    def questions(self, ids: Iterable[str]) -> dict[str, str]:
        """The question of each of these sessions (a second pass reads only that field, so a
        list of a hundred thousand regressions costs their questions, not their results)."""
        wanted = set(ids)
        if self.held is not None:
            return {i: self.held[i].question for i in wanted if i in self.held}
        if not wanted or self.path is None:
            return {}
        lines = {row.line: row.session_id for row in self.rows if row.session_id in wanted}
        return {sid: q.question for sid, q in _read_lines(self.path, lines, _Question).items()}


class _Question(_Slim):
    session_id: str
    question: str = ""


def _read_lines(path: Path, lines: Mapping[int, str], model: type[_M]) -> dict[str, _M]:
    """The given lines of a results file, each validated as ``model``, by session id."""
    out: dict[str, _M] = {}
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputFileError(path, f"cannot read results: {exc.strerror or exc}") from exc
    last = max(lines, default=0)
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number > last:
                break
            if number not in lines:
                continue
            try:
                result = model.model_validate_json(raw)
            except ValidationError as exc:
                raise InputFileError(path, describe_validation_error(exc, limit=1), number) from exc
            if getattr(result, "session_id", None) != lines[number]:
                raise InputFileError(path, "changed while it was being read", number)
            out[lines[number]] = result
    return out


def as_rows(items: Iterable[Result | ResultRow]) -> Iterator[ResultRow]:
    """Rows as they are, results held in memory as their rows."""
    for item in items:
        yield item if isinstance(item, ResultRow) else ResultRow.of(item)


def as_run(results: ResultsRun | Iterable[Result]) -> ResultsRun:
    """A run from either form the library's callers pass."""
    return results if isinstance(results, ResultsRun) else ResultsRun.of(results)
