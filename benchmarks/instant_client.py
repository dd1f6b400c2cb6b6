"""A judge client without HTTP that answers at once: our code's cost with the network taken out.

Unlike ``ScriptedClient`` it keeps nothing per request (``ScriptedClient.history`` holds every
request, which would swamp a memory measurement over 100k sessions). Replies are the
benchmark's well-formed ones, chosen from the request's material (``judge_replies.reply_text``).
"""

from __future__ import annotations

from judge_replies import MODEL, reply_text
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.clients.material import request_material

_USAGE = {"counting": Usage(1500, 0, 400), "scoring": Usage(1000, 0, 200)}


class InstantClient:
    provider = "openai"
    model = MODEL

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        ids = request_material(request).reference_ids
        return JudgeResponse(reply_text(request.call, ids), _USAGE[request.call], "stop")

    async def aclose(self) -> None:
        return None
