"""``--provider baseline``: a judge client that is code, not a model.

It speaks the one client protocol: a ``JudgeRequest`` in, the wire reply (contract section 2)
out. It reads the request's session material back out of the prompt the judge rendered
(``judge.reading``, through the same templates), answers by the surface rules of
``baseline.rules``, and costs nothing: no network, no key, no tokens. It is a floor and a smoke
test: a real judge that cannot beat it on a benchmark is not reading.
"""

from __future__ import annotations

import json

from ..clients.base import JudgeRequest, JudgeResponse, Usage
from ..clients.settings import BASELINE, BASELINE_MODEL
from ..cost.windows import ModelLimits
from ..judge.prompts import PromptSet
from ..judge.reading import RequestReader
from .rules import DEFAULT, Counter, Thresholds, claims_of, scores

PROVIDER = BASELINE
MODEL = BASELINE_MODEL

LIMITS = ModelLimits(context_window=100_000_000, max_output_tokens=1_000_000, source="table")
"""Code has no window: every session is read in one counting call."""


class BaselineClient:
    """A deterministic ``JudgeClient`` answering from the request's own text."""

    def __init__(
        self,
        prompts: PromptSet,
        *,
        model: str = MODEL,
        thresholds: Thresholds = DEFAULT,
    ) -> None:
        self.provider = PROVIDER
        self.model = model
        self.thresholds = thresholds
        self._reader = RequestReader(prompts)

    def reply(self, request: JudgeRequest) -> str:
        """The wire reply (JSON) to ``request``; ``UnreadableRequest`` when its prompt cannot
        be read back. Synchronous: it is pure computation (a fake server can call it too)."""
        shown = self._reader.read(request, lambda answer: claims_of(answer, self.thresholds))
        if request.call == "scoring":
            reply = scores(shown.question, shown.answer, self.thresholds)
        else:
            reply = Counter(shown, self.thresholds).reply()
        return json.dumps(reply, ensure_ascii=False)

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        return JudgeResponse(self.reply(request), Usage(), "stop")

    async def aclose(self) -> None:
        return None
