"""Helpers for testing code that talks to a judge: a fake OpenAI-compatible server, a fake
judge that answers any session validly from the request it is sent, and a fake provider with
OpenAI Files + Batches, Anthropic Messages and Anthropic Message Batches.

For judge clients without any HTTP, see ``research_judge.clients.ScriptedClient``; give it
``fake_judge_reply`` to answer every call validly.
"""

from __future__ import annotations

from research_judge.testing.fake_batches import BatchServerStats, FakeBatchServer
from research_judge.testing.fake_judge import FakeJudge, fake_judge_reply, fake_reply
from research_judge.testing.fake_openai import (
    FakeOpenAIServer,
    FakeReply,
    HeaderResponder,
    Responder,
    SeenRequest,
    ServerStats,
)

__all__ = [
    "BatchServerStats",
    "FakeBatchServer",
    "FakeJudge",
    "FakeOpenAIServer",
    "FakeReply",
    "HeaderResponder",
    "Responder",
    "SeenRequest",
    "ServerStats",
    "fake_judge_reply",
    "fake_reply",
]
