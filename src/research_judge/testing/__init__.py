"""Helpers for testing code that talks to a judge: a fake OpenAI-compatible server, and a fake
provider with OpenAI Files + Batches, Anthropic Messages and Anthropic Message Batches.

For judge clients without any HTTP, see ``research_judge.clients.ScriptedClient``.
"""

from __future__ import annotations

from research_judge.testing.fake_batches import BatchServerStats, FakeBatchServer
from research_judge.testing.fake_openai import (
    FakeOpenAIServer,
    FakeReply,
    Responder,
    SeenRequest,
    ServerStats,
)
from research_judge.testing.prompts import reference_ids_in

__all__ = [
    "BatchServerStats",
    "FakeBatchServer",
    "FakeOpenAIServer",
    "FakeReply",
    "Responder",
    "SeenRequest",
    "ServerStats",
    "reference_ids_in",
]
