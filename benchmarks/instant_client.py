"""A judge client without HTTP that answers at once: our code's cost with the network taken out.

Unlike ``ScriptedClient`` it keeps nothing per request (``ScriptedClient.history`` holds every
request, which would swamp a memory measurement over 100k sessions). Replies are the
benchmark's well-formed ones, chosen from the references the request shows, read back through
the prompts that rendered it (``judge_replies.reply_text``; the shipped prompts by default).
"""

from __future__ import annotations

from judge_replies import MODEL, reply_text
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.judge.prompts import PromptSet
from research_judge.testing.shown import RequestShown

_USAGE = {"counting": Usage(1500, 0, 400), "scoring": Usage(1000, 0, 200)}


class InstantClient:
    provider = "openai"
    model = MODEL

    def __init__(self, prompts: PromptSet | None = None) -> None:
        self.shown = RequestShown(prompts)

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        ids = [ref.id for ref in self.shown.read(request).references]
        return JudgeResponse(reply_text(request.call, ids), _USAGE[request.call], "stop")

    async def aclose(self) -> None:
        return None
