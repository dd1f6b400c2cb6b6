"""Results as flat rows: one per session, one column per number (for DataFrames and sheets)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .model import RATIO_NAMES, SCORE_NAMES, Result


def outcome_columns(r: Result) -> dict[str, Any]:
    """What a session came to, flat: verdict, error and its kind, each ratio, each score. The
    table here and the Parquet sessions table share these columns."""
    row: dict[str, Any] = {
        "verdict": r.verdict,
        "error": r.error,
        "error_kind": None if r.error_kind is None else str(r.error_kind),
    }
    for name in RATIO_NAMES:
        row[name] = None if r.ratios is None else getattr(r.ratios, name)
    for name in SCORE_NAMES:
        score = (r.scores or {}).get(name)
        row[name] = None if score is None else score.score
    return row


def result_rows(results: Iterable[Result]) -> list[dict[str, Any]]:
    """Each result as a flat row. Criteria keep their own scales (ratios 0..1, scores 1..3);
    context diagnostics become ``context.<name>`` columns, metadata keys ``metadata.<key>``."""
    rows = []
    for r in results:
        row: dict[str, Any] = {"session_id": r.session_id, **outcome_columns(r)}
        row |= {
            "evidence_share": r.evidence.share,
            "input_tokens": r.usage.input_tokens,
            "output_tokens": r.usage.output_tokens,
            "calls": r.usage.calls,
            "cost_usd": r.usage.cost_usd,
            "provider": None if r.judge is None else r.judge.provider,
            "model": None if r.judge is None else r.judge.model,
            "answer_words": r.answer_stats.words,
        }
        if r.context is not None:  # results written before context diagnostics have none
            c = r.context
            row |= {
                "context.trajectory_tokens": c.trajectory_tokens,
                "context.references": c.references,
                "context.references_judged": c.references_judged,
                "context.largest_reference_tokens": c.largest_reference_tokens,
                "context.duplicate_references": c.duplicate_references,
                "context.used_token_share": c.used_token_share,
                "context.counting_calls": c.counting_calls,
                "context.not_judged": c.not_judged,
            }
        row |= {f"metadata.{key}": value for key, value in r.metadata.items()}
        rows.append(row)
    return rows
