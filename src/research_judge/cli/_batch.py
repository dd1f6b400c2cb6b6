"""``grade --batch``: the batch client in the chain, the resume hint, the closing line."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from ..clients.base import JudgeClient
from ..clients.batch import BatchClient, BatchCounters, BatchState
from ..engine.batch_progress import BatchProgress, format_batches

BATCH_SESSIONS_IN_FLIGHT = 50_000
"""Sessions graded at once in batch mode: up to 100,000 requests per round, one Anthropic batch
or two OpenAI ones. Later sessions go into later rounds."""


def batch_client(args: argparse.Namespace, direct: JudgeClient, err: TextIO | None) -> BatchClient:
    """The provider's batch API over the direct client, with its state beside ``--out``."""
    from ..clients.batch.providers import batch_api  # loads the SDKs: only when batching

    progress = BatchProgress(err or sys.stderr, enabled=not args.quiet)
    return BatchClient(
        batch_api(direct),
        BatchState.beside(args.out),
        poll_interval=args.batch_poll,
        on_change=progress,
    )


def batch_counters(client: JudgeClient) -> BatchCounters | None:
    """The counters of the batch client inside a chain (cache and recording wrap it)."""
    seen: object = client
    while seen is not None:
        if isinstance(seen, BatchClient):
            return seen.counters
        seen = getattr(seen, "inner", None)
    return None


def resume_hint(out: str) -> str:
    return (
        f"research-judge grade: interrupted; the batches already sent keep running at the "
        f"provider (recorded in {out}.batches/). Run the same command again to pick them up: "
        "nothing is sent twice."
    )


def batch_summary(counters: BatchCounters, out: str) -> str:
    return f"{format_batches(counters)}; batch records in {out}.batches/"
