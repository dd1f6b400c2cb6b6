"""One client chain, built in one place, with one default per setting."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from research_judge.cli import build_parser
from research_judge.clients.base import JudgeClient
from research_judge.clients.cache import CachingClient
from research_judge.clients.chain import ClientSettings, build_client, layers, resilience_of
from research_judge.clients.recording import RecordingClient, ReplayClient
from research_judge.clients.resilience import ResilientClient
from research_judge.clients.settings import RetryPolicy
from research_judge.engine import RunOptions


def kinds(client: JudgeClient) -> list[str]:
    return [type(layer).__name__ for layer in layers(client)]


async def test_the_full_chain_is_recording_cache_resilience_provider(tmp_path: Path) -> None:
    settings = ClientSettings(
        model="m", api_key="k", cache_dir=tmp_path / "cache", record=tmp_path / "rec"
    )
    client = build_client(settings)
    try:
        assert kinds(client) == [
            "RecordingClient",
            "CachingClient",
            "ResilientClient",
            "OpenAIClient",
        ]
        assert isinstance(client, RecordingClient)
        assert isinstance(client.inner, CachingClient)
        resilient = resilience_of(client)
        assert isinstance(resilient, ResilientClient)
        assert resilient.policy == RetryPolicy()  # the defaults are RetryPolicy's own
        assert resilient.limiter.maximum == ClientSettings.concurrency
    finally:
        await client.aclose()


async def test_settings_reach_their_layers(tmp_path: Path) -> None:
    settings = ClientSettings(
        provider="anthropic",
        model="claude-x",
        api_key="k",
        cache=False,
        concurrency=3,
        retries=0,
        down_after=5.0,
    )
    client = build_client(settings)
    try:
        assert kinds(client) == ["ResilientClient", "AnthropicClient"]
        assert isinstance(client, ResilientClient)
        assert client.limiter.maximum == 3
        assert (client.policy.attempts, client.policy.down_after) == (1, 5.0)
        assert (client.provider, client.model) == ("anthropic", "claude-x")
    finally:
        await client.aclose()


def test_replay_replaces_the_whole_chain(tmp_path: Path) -> None:
    client = build_client(ClientSettings(model="m", replay=tmp_path))
    assert isinstance(client, ReplayClient) and kinds(client) == ["ReplayClient"]
    assert resilience_of(client) is None


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"concurrency": 0}, "--concurrency must be at least 1"),
        ({"retries": -1}, "--retries must be 0 or more"),
        ({"record": "a", "replay": "b"}, "together"),
    ],
)
def test_bad_settings_are_refused_when_made(changes: dict[str, object], words: str) -> None:
    from research_judge.errors import ConfigError

    with pytest.raises(ConfigError, match=words):
        ClientSettings(model="m", **changes)  # type: ignore[arg-type]


def test_the_grade_flags_take_their_defaults_from_the_settings() -> None:
    args = build_parser().parse_args(["grade", "s.jsonl", "--out", "o.jsonl", "--model", "m"])
    for f in fields(ClientSettings):
        flag = {"cache": "no_cache"}.get(f.name, f.name)
        if f.name in ("api_key", "model", "batch_dir"):
            continue  # never a flag / required / derived from --out
        expected = (not f.default) if f.name == "cache" else f.default
        assert getattr(args, flag) == expected, f.name
    assert RunOptions().concurrency == ClientSettings.concurrency
