"""Another endpoint or another --mode is another judge: no shared cache, recording or resume."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.clients import OpenAIClient
from research_judge.clients.cache import CachingClient
from research_judge.judge.grader import Judge
from research_judge.sessions.model import Session
from research_judge.testing.fake_openai import FakeOpenAIServer

from support import body_responder, session, write_sessions

SESSION = Session.model_validate(session())


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeOpenAIServer, FakeOpenAIServer]]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer(body_responder) as a, FakeOpenAIServer(body_responder) as b:
        yield a, b


async def grade_through_cache(base_url: str, cache: Path, mode: str = "json_schema") -> None:
    client = OpenAIClient(
        "gpt-4o-mini",
        base_url=base_url,
        mode=mode,
    )
    try:
        result = await Judge(CachingClient(client, cache)).grade(SESSION)
    finally:
        await client.aclose()
    # The test server answers from the response_format, which tool mode does not send.
    assert result.error is None or mode == "tool"


async def test_a_server_with_the_same_model_name_does_not_share_cache_entries(
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer], tmp_path: Path
) -> None:
    a, b = servers
    await grade_through_cache(a.base_url, tmp_path)
    await grade_through_cache(b.base_url, tmp_path)
    assert (a.stats.requests, b.stats.requests) == (2, 2)
    await grade_through_cache(a.base_url, tmp_path)  # the same endpoint still hits
    assert a.stats.requests == 2


async def test_another_mode_does_not_share_cache_entries(
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer], tmp_path: Path
) -> None:
    a, _ = servers
    await grade_through_cache(a.base_url, tmp_path, "json_schema")
    await grade_through_cache(a.base_url, tmp_path, "tool")
    assert a.stats.requests > 2  # nothing answered from the json_schema entries


def test_the_fingerprint_names_endpoint_and_mode_but_not_the_default_spelled_out(
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer],
) -> None:
    a, b = servers

    def fingerprint(**options: str) -> str:
        return Judge(OpenAIClient("gpt-4o-mini", **options)).fingerprint  # type: ignore[arg-type]

    default = fingerprint()
    assert fingerprint(base_url="https://api.openai.com/v1/") == default
    assert fingerprint(mode="json_schema") == default
    assert len({default, fingerprint(base_url=a.base_url), fingerprint(base_url=b.base_url),
                fingerprint(mode="tool")}) == 4  # fmt: skip


def test_resume_against_another_endpoint_regrades(
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer], tmp_path: Path
) -> None:
    a, b = servers
    src = write_sessions(tmp_path / "s.jsonl", [session("s-1"), session("s-2")])
    out = tmp_path / "o.jsonl"

    def grade(server: FakeOpenAIServer) -> int:
        return main(["grade", str(src), "--out", str(out), "--provider", "openai", "--model",
                     "gpt-4o-mini", "--base-url", server.base_url, "--no-cache",
                     "--quiet"])  # fmt: skip

    assert grade(a) == 0 and grade(a) == 0
    assert a.stats.requests == 4  # the second run on the same endpoint resumed: nothing sent
    assert grade(b) == 0
    assert b.stats.requests == 4
