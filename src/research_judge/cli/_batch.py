"""``grade --batch`` in the CLI: sessions in flight, the resume hint, the closing line."""

from __future__ import annotations

from ..clients.base import JudgeClient
from ..clients.batch import BatchClient, BatchCounters
from ..clients.chain import layers
from ..engine.batch_progress import BatchProgress, format_batches

__all__ = [
    "BATCH_SESSIONS_IN_FLIGHT",
    "BatchProgress",
    "batch_counters",
    "batch_summary",
    "resume_hint",
]

BATCH_SESSIONS_IN_FLIGHT = 50_000
"""Sessions graded at once in batch mode: up to 100,000 requests per round, one Anthropic batch
or two OpenAI ones. Later sessions go into later rounds."""


def batch_counters(client: JudgeClient) -> BatchCounters | None:
    """The counters of the batch client inside a chain (cache and recording wrap it)."""
    return next((c.counters for c in layers(client) if isinstance(c, BatchClient)), None)


def resume_hint(out: str) -> str:
    return (
        f"research-judge grade: interrupted; the batches already sent keep running at the "
        f"provider (recorded in {out}.batches/). Run the same command again to pick them up: "
        "nothing is sent twice."
    )


def batch_summary(counters: BatchCounters, out: str) -> str:
    return f"{format_batches(counters)}; batch records in {out}.batches/"
