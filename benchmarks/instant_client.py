"""A judge client without HTTP that answers at once: our code's cost with the network taken out.

Unlike ``ScriptedClient`` it keeps nothing per request (``ScriptedClient.history`` holds every
request, which would swamp a memory measurement over 100k sessions). Replies are the
benchmark's well-formed ones; their texts are built once per reference list.
"""

from __future__ import annotations

import json

from judge_replies import MODEL, counting_reply, scoring_reply
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage


class InstantClient:
    provider = "openai"
    model = MODEL

    def __init__(self) -> None:
        self._texts: dict[tuple[str, ...], str] = {}
        self._scoring = JudgeResponse(json.dumps(scoring_reply()), Usage(1000, 0, 200), "stop")

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        if request.call != "counting":
            return self._scoring
        ids = request.material.reference_ids if request.material is not None else ()
        text = self._texts.get(ids)
        if text is None:
            text = self._texts[ids] = json.dumps(counting_reply(list(ids)))
        return JudgeResponse(text, Usage(1500, 0, 400), "stop")

    async def aclose(self) -> None:
        return None
