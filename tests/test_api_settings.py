"""``rj.grade`` takes the grade settings a notebook needs beyond the chain: output allowances,
``max_cost`` and the provider batch APIs, each with the CLI's default and the CLI's behaviour,
against the fake servers of ``research_judge.testing``."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any

import pytest

import research_judge as rj
from research_judge.cli import build_parser, main
from research_judge.clients.settings import ClientSettings
from research_judge.errors import ConfigError, ExitCode, MaxCostReached
from research_judge.judge.settings import JudgeSettings
from research_judge.results.model import Result, read_results
from research_judge.testing import FakeBatchServer, FakeOpenAIServer

from support import body_responder, session, write_sessions

MODEL = "gpt-4.1-mini"  # priced in the shipped table


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-api")


def direct(srv: FakeOpenAIServer, **settings: Any) -> dict[str, Any]:
    return {"model": MODEL, "base_url": srv.base_url, **settings}


def test_each_new_setting_has_the_cli_default() -> None:
    api = inspect.signature(rj.grade).parameters
    cli = build_parser().parse_args(["grade", "s.jsonl", "--out", "o.jsonl", "--model", "m"])
    expected = {
        "counting_max_tokens": JudgeSettings.counting_max_tokens,
        "scoring_max_tokens": JudgeSettings.scoring_max_tokens,
        "batch": ClientSettings.batch,
        "batch_poll": ClientSettings.batch_poll,
        "max_cost": None,  # no limit
    }
    for name, default in expected.items():
        assert api[name].default == default, name
        assert getattr(cli, name) == default, name
    assert api["batch_dir"].default is ClientSettings.batch_dir


def max_tokens(srv: FakeOpenAIServer) -> set[tuple[str, int]]:
    """(reply schema, output cap) of every request the server saw."""
    return {
        (
            r.body["response_format"]["json_schema"]["name"],
            r.body.get("max_tokens") or r.body["max_completion_tokens"],
        )
        for r in srv.requests
    }


def test_output_allowances_reach_the_provider_as_the_cli_sends_them(tmp_path: Path) -> None:
    sessions = [session(f"s-{i}") for i in range(3)]
    with FakeOpenAIServer(body_responder) as srv:
        rj.grade(sessions, **direct(srv, cache=False))
        defaults = max_tokens(srv)
    assert defaults == {
        ("counting_verdicts", JudgeSettings.counting_max_tokens),
        ("criterion_scores", JudgeSettings.scoring_max_tokens),
    }
    with FakeOpenAIServer(body_responder) as srv:
        results = rj.grade(
            sessions, **direct(srv, cache=False, counting_max_tokens=5000, scoring_max_tokens=777)
        )
        chosen = max_tokens(srv)
    assert all(r.error is None for r in results)
    assert chosen == {("counting_verdicts", 5000), ("criterion_scores", 777)}
    src = write_sessions(tmp_path / "s.jsonl", sessions)
    with FakeOpenAIServer(body_responder) as srv:
        code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", MODEL,
                     "--base-url", srv.base_url, "--no-cache", "--quiet",
                     "--counting-max-tokens", "5000", "--scoring-max-tokens", "777"])  # fmt: skip
        assert code == 0 and max_tokens(srv) == chosen


# --- max_cost ---------------------------------------------------------------------------------

LIMIT = 0.006  # a few sessions' worth at gpt-4.1-mini prices, not ten


def test_max_cost_stops_where_the_cli_stops_and_keeps_what_was_graded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = [session(f"s-{i:02d}") for i in range(10)]
    src = write_sessions(tmp_path / "s.jsonl", sessions)
    out = tmp_path / "cli.jsonl"
    with FakeOpenAIServer(body_responder) as srv:
        code = main(["grade", str(src), "--out", str(out), "--model", MODEL, "--base-url",
                     srv.base_url, "--no-cache", "--quiet", "--concurrency",
                     "1", "--max-cost", str(LIMIT)])  # fmt: skip
    assert code == ExitCode.STOPPED
    cli_ids = [r.session_id for r in read_results(out)]
    assert 0 < len(cli_ids) < 10
    assert f"{10 - len(cli_ids)} session(s) not sent" in capsys.readouterr().err

    cache = tmp_path / "cache"
    with FakeOpenAIServer(body_responder) as srv:
        with pytest.raises(MaxCostReached) as stopped:
            rj.grade(sessions, **direct(srv, concurrency=1, cache_dir=cache, max_cost=LIMIT))
        assert srv.stats.requests == 2 * len(cli_ids)  # nothing sent for the rest
        graded: list[Result] = stopped.value.results
        assert [r.session_id for r in graded] == cli_ids  # the CLI's file, line for line
        assert stopped.value.not_sent == 10 - len(cli_ids)
        assert sum(r.usage.cost_usd or 0 for r in graded) <= LIMIT
        assert f"max_cost ${LIMIT:g} reached" in str(stopped.value)

        # No limit, and again: the sessions graded come from the cache, free; the rest are sent.
        everything = rj.grade(sessions, **direct(srv, concurrency=1, cache_dir=cache))
        assert srv.stats.requests == 2 * 10
    assert [r.session_id for r in everything] == [s["id"] for s in sessions]
    assert [r.usage.cost_usd for r in everything[: len(cli_ids)]] == [0.0] * len(cli_ids)


def test_a_budget_that_covers_the_run_returns_every_result() -> None:
    sessions = [session(f"s-{i}") for i in range(3)]
    with FakeOpenAIServer(body_responder) as srv:
        results = rj.grade(sessions, **direct(srv, cache=False, max_cost=1.0))
    assert [r.session_id for r in results] == ["s-0", "s-1", "s-2"]
    assert all(r.error is None and r.usage.cost_usd for r in results)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_cost": math.nan}, "max_cost must be a finite number"),
        ({"max_cost": -1.0}, "max_cost must be positive"),
        ({"max_cost": 1.0, "model": "unpriced-local-model"}, "needs a price for model"),
    ],
)
def test_a_max_cost_that_cannot_be_kept_is_refused_before_anything_is_sent(
    settings: dict[str, Any], message: str
) -> None:
    with FakeOpenAIServer(body_responder) as srv:
        with pytest.raises(ConfigError, match=message):
            rj.grade([session()], **direct(srv, cache=False) | settings)
        assert srv.stats.requests == 0


# --- batch ------------------------------------------------------------------------------------


def batch_answer(body: dict[str, Any]) -> str:
    """The fake batch provider's replies, read from each line's body."""
    return body_responder.respond(body, {})


def test_batch_grades_through_the_batch_api_at_batch_prices(tmp_path: Path) -> None:
    sessions = [session(f"s-{i}") for i in range(4)]
    with FakeBatchServer(batch_answer) as srv:
        options: dict[str, Any] = {"model": MODEL, "base_url": srv.openai_base_url, "cache": False}
        at_once = rj.grade(sessions, **options)
        batched = rj.grade(
            sessions, **options, batch=True, batch_dir=tmp_path / "batches", batch_poll=0.02
        )
        assert srv.stats.batches_created == 1
        assert sum(srv.stats.batched.values()) == 8  # both calls of every session, one batch
    assert [r.session_id for r in batched] == ["s-0", "s-1", "s-2", "s-3"]
    assert [r.to_dict()["verdicts"] for r in batched] == [r.to_dict()["verdicts"] for r in at_once]
    for one, two in zip(at_once, batched, strict=True):
        assert one.usage.cost_usd is not None and two.usage.cost_usd is not None
        assert two.usage.cost_usd == pytest.approx(one.usage.cost_usd / 2)
    assert any((tmp_path / "batches").iterdir())  # recorded, so a later call can pick them up


def test_batch_needs_a_folder_for_its_batches() -> None:
    with pytest.raises(ConfigError, match="batch_dir"):
        rj.grade([session()], model=MODEL, batch=True)
