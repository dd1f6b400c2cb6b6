"""Helpers for testing code that talks to a judge: a fake OpenAI-compatible server.

For judge clients without any HTTP, see ``research_judge.clients.ScriptedClient``.
"""

from __future__ import annotations

from research_judge.testing.fake_openai import (
    FakeOpenAIServer,
    FakeReply,
    Responder,
    SeenRequest,
    ServerStats,
)
from research_judge.testing.prompts import reference_ids_in

__all__ = [
    "FakeOpenAIServer",
    "FakeReply",
    "Responder",
    "SeenRequest",
    "ServerStats",
    "reference_ids_in",
]
