"""One base for client layers: a layer answers as the client it wraps and passes on what it does
not handle (the judge's reply checks, closing) without forwarding them by hand."""

from __future__ import annotations

from pathlib import Path

from research_judge.clients.base import JudgeRequest, JudgeResponse, Message
from research_judge.clients.cache import CachingClient
from research_judge.clients.scripted import ScriptedClient
from research_judge.clients.wrapper import WrapperClient, find_layer, layers


def request() -> JudgeRequest:
    return JudgeRequest("scoring", "system", (Message("user", "u"),), "scores", {})


def entries(folder: Path) -> int:
    return len(list(folder.iterdir()))


class Counting(WrapperClient):
    """A layer that only counts calls: everything else is the base's."""

    def __init__(self, inner: ScriptedClient | WrapperClient) -> None:
        super().__init__(inner)
        self.calls = 0

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        self.calls += 1
        return await super().complete(request)


class Closing(ScriptedClient):
    closed = False

    async def aclose(self) -> None:
        self.closed = True


async def test_a_layer_passes_reply_checks_and_closing_through(tmp_path: Path) -> None:
    provider = Closing(['{"n": 1}'], model="m")
    cache = CachingClient(provider, tmp_path)
    outer = Counting(cache)
    assert (outer.provider, outer.model) == (provider.provider, "m")
    response = await outer.complete(request())
    assert outer.calls == 1 and entries(tmp_path) == 0
    # The judge tells the outermost layer; the cache below stores the accepted reply.
    outer.reply_checked(request(), response, valid=True)
    assert entries(tmp_path) == 1
    await outer.aclose()
    assert provider.closed


def test_layers_follow_wrappers_only() -> None:
    class NotALayer(ScriptedClient):
        inner = ScriptedClient([])  # an attribute of that name is no layer

    bottom = NotALayer([])
    outer = Counting(Counting(bottom))
    assert [type(c).__name__ for c in layers(outer)] == ["Counting", "Counting", "NotALayer"]
    assert find_layer(outer, NotALayer) is bottom
    assert find_layer(outer, CachingClient) is None
