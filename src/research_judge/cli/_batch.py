"""``grade --batch`` in the CLI: the resume hint and the closing line (sessions in flight:
``engine.run.RunOptions.for_client``)."""

from __future__ import annotations

from ..clients.base import JudgeClient
from ..clients.batch import BatchClient, BatchCounters
from ..clients.chain import layers
from ..engine.batch_progress import BatchProgress, format_batches

__all__ = [
    "BatchProgress",
    "batch_counters",
    "batch_summary",
    "resume_hint",
]


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
