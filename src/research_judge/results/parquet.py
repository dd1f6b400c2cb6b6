"""A results file as Parquet: one row per session in flat columns, and the call-1 verdicts in a
second file, for querying a night's results in DuckDB, Polars, pandas or a warehouse.

``export_parquet(RESULTS, OUT)`` writes ``OUT`` (the sessions table) and ``verdicts_path(OUT)``
(``run.parquet`` -> ``run.verdicts.parquet``), reading the JSONL as a stream in batches, so
memory stays flat at any size. Both are written to temporary files and renamed into place only
when every line was read: a bad line (named with file:line) leaves no half-written table.
pyarrow is an optional dependency (``pip install 'research-judge[parquet]'``).

The columns are ``SESSION_COLUMNS`` and ``VERDICT_COLUMNS``; the README lists them with their
meaning. Nulls are kept as nulls (an undefined ratio is not 0).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._files import atomic_file
from ..errors import ConfigError, InputFileError
from .model import CITATION_NAMES, RATIO_NAMES, SCORE_NAMES, Result, _numbered_results
from .table import outcome_columns

if TYPE_CHECKING:
    import pyarrow as pa

BATCH = 5000

# (column, Arrow type name): the sessions table, one row per result line, in file order.
SESSION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("session_id", "string"),
    ("line", "int64"),
    ("verdict", "string"),
    ("error", "string"),
    ("error_kind", "string"),
    *((name, "float64") for name in RATIO_NAMES),
    *((name, "int8") for name in SCORE_NAMES),
    *((name, "float64") for name in CITATION_NAMES),
    ("verdict_reasons", "string"),
    ("evidence_verified", "int64"),
    ("evidence_total", "int64"),
    ("evidence_share", "float64"),
    ("input_tokens", "int64"),
    ("cached_input_tokens", "int64"),
    ("output_tokens", "int64"),
    ("calls", "int64"),
    ("cache_hits", "int64"),
    ("cost_usd", "float64"),
    ("answer_chars", "int64"),
    ("answer_words", "int64"),
    ("context_trajectory_tokens", "int64"),
    ("context_references", "int64"),
    ("context_references_judged", "int64"),
    ("context_largest_reference_tokens", "int64"),
    ("context_duplicate_references", "int64"),
    ("context_used_token_share", "float64"),
    ("context_counting_calls", "int64"),
    ("context_split", "bool"),
    ("context_not_judged_references", "int64"),
    ("context_not_judged_claims", "int64"),
    ("judge_provider", "string"),
    ("judge_model", "string"),
    ("judge_fingerprint", "string"),
    ("repeats_k", "int64"),
    ("question", "string"),
)

# The verdicts table: one row per call-1 verdict of a graded session.
VERDICT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("session_id", "string"),
    ("check", "string"),
    ("id", "string"),
    ("answer", "string"),
    ("evidence", "string"),
    ("evidence_verified", "bool"),
    ("claim", "string"),
    ("source", "string"),
    ("claim_verified", "bool"),
)


@dataclass(frozen=True)
class Exported:
    sessions: int
    verdicts: int
    sessions_path: Path
    verdicts_path: Path


PARQUET_MAGIC = b"PAR1"


def is_parquet(head: bytes) -> bool:
    """Whether a file's first bytes are a Parquet file's (what an existing --parquet may be)."""
    return head.startswith(PARQUET_MAGIC)


def check_parquet_targets(out: str | Path, *, force: bool = False) -> None:
    """Both tables may replace only Parquet files (or anything, with ``force``), before any
    work is done: a file of the user's that happens to sit there is never lost."""
    from .._files import check_replaceable

    check_replaceable("--parquet", out, is_parquet, force=force)
    check_replaceable("--parquet (verdicts)", verdicts_path(out), is_parquet, force=force)


def verdicts_path(out: str | Path) -> Path:
    """Where the verdicts table goes: beside ``out``, ``NAME.verdicts.parquet``."""
    p = Path(out)
    stem = p.name.removesuffix(".parquet")
    return p.with_name(f"{stem}.verdicts.parquet")


def export_parquet(results: str | Path, out: str | Path) -> Exported:
    """Write ``results`` (a results JSONL) as the two Parquet tables; see the module docstring."""
    pa, pq = _pyarrow()
    session_schema = _schema(pa, SESSION_COLUMNS)
    verdict_schema = _schema(pa, VERDICT_COLUMNS)
    side = verdicts_path(out)
    n_sessions = n_verdicts = 0
    with ExitStack() as stack:
        s_handle = stack.enter_context(atomic_file(out, what="--parquet"))
        v_handle = stack.enter_context(atomic_file(side, what="--parquet (verdicts)"))
        s_writer = stack.enter_context(pq.ParquetWriter(s_handle, session_schema))
        v_writer = stack.enter_context(pq.ParquetWriter(v_handle, verdict_schema))
        for sessions, verdicts in _batches(results):
            s_writer.write_batch(pa.RecordBatch.from_pylist(sessions, schema=session_schema))
            v_writer.write_batch(pa.RecordBatch.from_pylist(verdicts, schema=verdict_schema))
            n_sessions += len(sessions)
            n_verdicts += len(verdicts)
    return Exported(n_sessions, n_verdicts, Path(out), side)


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ConfigError(
            "writing Parquet needs pyarrow, an optional dependency: "
            "pip install 'research-judge[parquet]'"
        ) from exc
    return pa, pq


def _schema(pa: Any, columns: tuple[tuple[str, str], ...]) -> pa.Schema:
    # Arrow's constructor for "bool" is pa.bool_ (the name is Python's own).
    return pa.schema(
        [(name, getattr(pa, "bool_" if kind == "bool" else kind)()) for name, kind in columns]
    )


def _batches(path: str | Path) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    sessions: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, item in enumerate(_numbered(path), start=1):
        if isinstance(item, InputFileError):
            raise item
        result, line = item
        if result.session_id in seen:
            raise InputFileError(path, f"duplicate session id {result.session_id!r}", line)
        seen.add(result.session_id)
        sessions.append(session_row(result, line))
        verdicts.extend(verdict_rows(result))
        if number % BATCH == 0:
            yield sessions, verdicts
            sessions, verdicts = [], []
    if sessions or not seen:
        yield sessions, verdicts


def _numbered(path: str | Path) -> Iterator[tuple[Result, int] | InputFileError]:
    for number, item in _numbered_results(path):
        yield item if isinstance(item, InputFileError) else (item, number)


def session_row(r: Result, line: int) -> dict[str, Any]:
    """One result as a row of the sessions table."""
    ctx, usage, judge = r.context, r.usage, r.judge
    row: dict[str, Any] = {"session_id": r.session_id, "line": line, **outcome_columns(r)}
    for name in CITATION_NAMES:
        row[name] = r.criterion_value(name)
    row |= {
        "verdict_reasons": "; ".join(r.verdict_reasons),
        "evidence_verified": r.evidence.verified,
        "evidence_total": r.evidence.total,
        "evidence_share": r.evidence.share,
        "input_tokens": usage.input_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "output_tokens": usage.output_tokens,
        "calls": usage.calls,
        "cache_hits": usage.cache_hits,
        "cost_usd": usage.cost_usd,
        "answer_chars": r.answer_stats.chars,
        "answer_words": r.answer_stats.words,
        "judge_provider": None if judge is None else judge.provider,
        "judge_model": None if judge is None else judge.model,
        "judge_fingerprint": None if judge is None else judge.fingerprint,
        "repeats_k": None if r.repeats is None else r.repeats.k,
        "question": r.question,
    }
    context = {
        "context_trajectory_tokens": None if ctx is None else ctx.trajectory_tokens,
        "context_references": None if ctx is None else ctx.references,
        "context_references_judged": None if ctx is None else ctx.references_judged,
        "context_largest_reference_tokens": None if ctx is None else ctx.largest_reference_tokens,
        "context_duplicate_references": None if ctx is None else ctx.duplicate_references,
        "context_used_token_share": None if ctx is None else ctx.used_token_share,
        "context_counting_calls": None if ctx is None else ctx.counting_calls,
        "context_split": None if ctx is None else ctx.split,
        "context_not_judged_references": (None if ctx is None else len(ctx.not_judged_references)),
        "context_not_judged_claims": None if ctx is None else len(ctx.not_judged_claims),
    }
    return row | context


def verdict_rows(r: Result) -> list[dict[str, Any]]:
    """The call-1 verdicts of one result as rows of the verdicts table."""
    return [
        {
            "session_id": r.session_id,
            "check": v.check,
            "id": v.id,
            "answer": v.answer,
            "evidence": v.evidence,
            "evidence_verified": v.evidence_verified,
            "claim": v.claim,
            "source": v.source,
            "claim_verified": v.claim_verified,
        }
        for v in r.verdicts
    ]
