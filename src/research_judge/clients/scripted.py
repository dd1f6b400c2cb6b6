"""A judge that answers from a script: for tests, demos and benchmarks without a model.

Give it a list of replies consumed one per call, or one function that answers every call:

    ScriptedClient(['{"verdicts": []}', {"scores": [...]}, TransientApiError("flaky"), fn])
    ScriptedClient(lambda request: {"scores": [...]})

A reply may be JSON text, a dict (serialised), a ready ``JudgeResponse``, an exception instance
(raised), or a callable ``f(request)`` returning any of those (it may be ``async``). Usage is an
estimate, four characters to a token, so cost arithmetic has something to add up.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias

from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.cost.tokens import estimate_tokens
from research_judge.errors import ResearchJudgeError

ReplyValue: TypeAlias = str | dict[str, Any] | JudgeResponse | BaseException
Responder: TypeAlias = Callable[[JudgeRequest], ReplyValue | Awaitable[ReplyValue]]
ScriptItem: TypeAlias = ReplyValue | Responder


class ScriptExhausted(ResearchJudgeError):
    """The script ran out of replies: the code under test made more calls than it expected."""


class ScriptedClient:
    """A ``JudgeClient`` whose replies are given up front. ``history`` lists the requests seen."""

    def __init__(
        self,
        replies: Sequence[ScriptItem] | Responder,
        *,
        provider: str = "scripted",
        model: str = "scripted",
    ) -> None:
        self.provider = provider
        self.model = model
        self.history: list[JudgeRequest] = []
        self.closed = False
        if isinstance(replies, str | dict | JudgeResponse | BaseException):
            # A lone reply is almost certainly a mistake (a str would be read letter by letter).
            raise TypeError("ScriptedClient takes a list of replies or one function, not one reply")
        if callable(replies):
            self._responder: Responder | None = replies
            self._script: list[ScriptItem] = []
        else:
            self._responder = None
            self._script = list(replies)

    @property
    def remaining(self) -> int:
        """Replies not yet used (0 for a single-function script)."""
        return max(0, len(self._script) - len(self.history))

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        # Take the script item before the first await, so concurrent calls get replies in the
        # order they were made.
        call_number = len(self.history) + 1
        self.history.append(request)
        if self._responder is not None:
            item: ScriptItem = self._responder
        elif call_number <= len(self._script):
            item = self._script[call_number - 1]
        else:
            raise ScriptExhausted(
                f"scripted judge has no reply for call {call_number} "
                f"(session {request.session_id!r}, {request.call}): "
                f"the script held {len(self._script)}"
            )
        value = await _resolve(item, request)
        if isinstance(value, BaseException):
            raise value
        if isinstance(value, JudgeResponse):
            return value
        content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return JudgeResponse(content, _estimated_usage(request, content), "stop")

    async def aclose(self) -> None:
        self.closed = True


async def _resolve(item: ScriptItem, request: JudgeRequest) -> ReplyValue:
    if isinstance(item, BaseException) or not callable(item):
        return item
    value = item(request)
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, str | dict | JudgeResponse | BaseException):
        raise TypeError(
            f"scripted reply function returned {type(value).__name__}; "
            "expected str, dict, JudgeResponse or an exception"
        )
    return value


def _estimated_usage(request: JudgeRequest, content: str) -> Usage:
    prompt = request.system + "".join(m.content for m in request.messages)
    return Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(content))
