"""``grade --batch``: every judge call through the provider's batch API, at batch prices.

``BatchClient`` is a ``JudgeClient`` like any other, so the judge's per-session logic (requests,
validation, re-asks, assembly) is the direct run's; only the waiting differs. See docs/batch.md.
"""

from __future__ import annotations

from research_judge.clients.batch.client import BatchClient, BatchCounters
from research_judge.clients.batch.state import BatchRecord, BatchState
from research_judge.clients.settings import DEFAULT_POLL_INTERVAL

__all__ = ["DEFAULT_POLL_INTERVAL", "BatchClient", "BatchCounters", "BatchRecord", "BatchState"]
