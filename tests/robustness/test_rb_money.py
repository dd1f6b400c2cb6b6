"""Spend is never hidden or offset: every reported token counts, impossible usage is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.clients import OpenAIClient, ScriptedClient
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.clients.cache import CachingClient
from research_judge.cost.prices import PriceTable
from research_judge.errors import JudgeRefusal
from research_judge.judge.grader import Judge
from research_judge.results.model import read_results
from research_judge.sessions.model import Session
from research_judge.testing.fake_openai import FakeOpenAIServer, FakeReply

from support import (
    WithHeaders,
    body_responder,
    good_responder,
    scoring_reply,
    session,
    write_sessions,
)

PRICES = PriceTable.load()


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.json"))


def replies(cache: Path) -> list[str]:
    return [json.loads(e.read_text())["response"]["content"] for e in entries(cache)]


SESSION = Session.model_validate(session())


def scoring_first(reply: Any) -> Any:
    """A responder whose first scoring reply is ``reply``; every other call is answered well."""
    sent: list[int] = []

    def responder(request: JudgeRequest) -> Any:
        if request.call == "scoring" and not sent:
            sent.append(1)
            return reply
        return good_responder(request)

    return responder


@pytest.mark.parametrize(
    "usage",
    [Usage(-60_000_000, 0, 0), Usage(10, 0, -5), Usage(10**40, 0, 0), Usage(5, 10, 1)],
)
async def test_impossible_usage_makes_the_reply_invalid_and_it_is_asked_again(usage: Usage) -> None:
    bad = JudgeResponse(json.dumps(scoring_reply()), usage)
    client = ScriptedClient(scoring_first(bad), provider="openai", model="gpt-4o")
    result = await Judge(client, prices=PRICES).grade(SESSION)
    assert result.error is None
    assert [r.call for r in client.history].count("scoring") == 2
    u = result.usage
    assert min(u.input_tokens, u.output_tokens, u.cached_input_tokens) >= 0
    assert u.input_tokens < 10**9
    assert u.cost_usd is not None and u.cost_usd >= 0


async def test_a_cut_reply_is_paid_for_and_counted() -> None:
    cut = JudgeRefusal("reply truncated at max_output_tokens", Usage(7_000, 0, 2_048))
    plain = await Judge(ScriptedClient(good_responder, provider="openai", model="gpt-4o"),
                        prices=PRICES).grade(SESSION)  # fmt: skip
    client = ScriptedClient(scoring_first(cut), provider="openai", model="gpt-4o")
    result = await Judge(client, prices=PRICES).grade(SESSION)
    assert result.error is None
    assert result.usage.output_tokens >= plain.usage.output_tokens + 2_048
    assert result.usage.input_tokens >= plain.usage.input_tokens + 7_000
    assert result.usage.cost_usd is not None and plain.usage.cost_usd is not None
    assert result.usage.cost_usd > plain.usage.cost_usd


async def test_tokens_of_a_reply_cut_off_by_a_real_server_reach_the_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    filler = "x" * 40_000  # ~10,000 tokens of a reply the server cut off

    def responder(body: dict[str, Any], headers: dict[str, str]) -> Any:
        if body["response_format"]["json_schema"]["name"] == "counting_verdicts" and not seen:
            seen.append(1)
            return FakeReply(filler, finish_reason="length")
        return body_responder.respond(body, headers)

    seen: list[int] = []
    with FakeOpenAIServer(WithHeaders(responder)) as srv:
        client = OpenAIClient("gpt-4o-mini", base_url=srv.base_url)
        try:
            result = await Judge(client, prices=PRICES).grade(SESSION)
        finally:
            await client.aclose()
    assert result.error is None and result.usage.calls >= 3  # the cut call, then a re-plan
    assert result.usage.output_tokens >= 10_000


def spoil_scoring_entries(cache: Path, bad: str) -> None:
    for entry in entries(cache):
        data = json.loads(entry.read_text())
        if data["request"]["call"] == "scoring":
            data["response"]["content"] = bad
            entry.write_text(json.dumps(data))


def damage_first_entry(cache: Path, damage: str) -> str:
    """Overwrite the first entry with ``damage``; return the reply it held."""
    first = entries(cache)[0]
    reply: str = json.loads(first.read_text())["response"]["content"]
    first.write_text(damage, encoding="latin-1")
    return reply


# --- the response cache --------------------------------------------------------------------


async def test_a_reply_that_failed_validation_is_never_cached(tmp_path: Path) -> None:
    bad = json.dumps({"scores": []})
    first = CachingClient(ScriptedClient(scoring_first(bad)), tmp_path)
    assert (await Judge(first).grade(SESSION)).error is None
    assert replies(tmp_path) and bad not in replies(tmp_path)
    # A second run asks the provider again for the question whose first answer was bad.
    again = ScriptedClient(good_responder)
    assert (await Judge(CachingClient(again, tmp_path)).grade(SESSION)).error is None
    assert [r.call for r in again.history] == ["scoring"]


async def test_a_cached_reply_that_fails_validation_is_dropped(tmp_path: Path) -> None:
    await Judge(CachingClient(ScriptedClient(good_responder), tmp_path)).grade(SESSION)
    bad = json.dumps({"scores": "nonsense"})
    spoil_scoring_entries(tmp_path, bad)  # as an older version stored whatever came back
    client = ScriptedClient(good_responder)
    assert (await Judge(CachingClient(client, tmp_path)).grade(SESSION)).error is None
    assert bad not in replies(tmp_path)


@pytest.mark.parametrize("damage", ["", "{not json", '{"key": "wrong"}', "\x00\xff"])
async def test_an_unreadable_cache_entry_is_a_miss_and_is_replaced(
    tmp_path: Path, damage: str
) -> None:
    await Judge(CachingClient(ScriptedClient(good_responder), tmp_path)).grade(SESSION)
    first = damage_first_entry(tmp_path, damage)
    client = ScriptedClient(good_responder)
    result = await Judge(CachingClient(client, tmp_path)).grade(SESSION)
    assert result.error is None
    assert len(client.history) == 1
    assert first in replies(tmp_path)  # the damaged entry was replaced by a good one


# --- --max-cost --------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", ["0.002", "0.00001"])
def test_the_max_cost_stop_message_counts_every_session_not_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], limit: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(300)])
    out = tmp_path / "o.jsonl"
    with FakeOpenAIServer(body_responder) as srv:
        code = main(["grade", str(src), "--out", str(out), "--provider", "openai",
                     "--model", "gpt-4o-mini", "--base-url", srv.base_url, "--no-cache",

                     "--quiet", "--concurrency", "1", "--max-cost", limit])  # fmt: skip
    assert code == 4
    written = len(read_results(out)) if out.exists() else 0  # below one session: nothing sent
    assert written < 300
    assert f"{300 - written} session(s) not sent" in capsys.readouterr().err


async def test_each_jurors_cache_stores_the_replies_the_judge_accepted(tmp_path: Path) -> None:
    from research_judge.clients.jury import JuryClient
    from research_judge.judge.repeats import RepeatingJudge

    caches = [tmp_path / "a", tmp_path / "b"]
    jury = JuryClient(
        [
            CachingClient(ScriptedClient(good_responder, model=f"m{i}"), c)
            for i, c in enumerate(caches)
        ]
    )
    result = await RepeatingJudge(jury, repeats=2).grade(SESSION)
    assert result.error is None
    assert [len(entries(c)) for c in caches] == [2, 2]  # counting and scoring, per juror
