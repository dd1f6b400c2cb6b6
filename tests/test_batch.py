"""``grade --batch`` end to end: the real CLI and SDKs against the fake batch APIs on 127.0.0.1.

Each test states what the provider does (failed lines, expired batches, re-asks, a kill -9 while
a batch is out) and checks what a user relies on: every session graded once, nothing sent twice,
the same results as a direct run, half the cost.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.clients.base import JudgeRequest, Message
from research_judge.clients.batch import BatchState
from research_judge.results.model import Result, read_results
from research_judge.testing.fake_batches import FakeBatchServer

from support import body_responder, session, write_sessions

SECRET = "sk-test-DO-NOT-STORE-0123456789abcdef"
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}
PROVIDERS = tuple(MODELS)


def schema_name(body: dict[str, Any]) -> str:
    """The reply schema a request body asks for, in either provider's shape."""
    if fmt := body.get("response_format"):
        return str(fmt["json_schema"]["name"])
    return str(body["tools"][0]["name"] if body.get("tools") else "")


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def answer(body: dict[str, Any]) -> str:
    """Well-formed judge replies read from a request body of either provider."""
    return body_responder.respond(body, {})


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for provider in PROVIDERS:
        monkeypatch.setenv(f"{provider.upper()}_API_KEY", SECRET)
        monkeypatch.delenv(f"{provider.upper()}_BASE_URL", raising=False)
    yield


def base_url(srv: FakeBatchServer, provider: str) -> str:
    return srv.openai_base_url if provider == "openai" else srv.anthropic_base_url


def grade_args(srv: FakeBatchServer, provider: str, src: Path, out: Path, *extra: str) -> list[str]:
    return [
        "grade", str(src), "--out", str(out), "--provider", provider,
        "--model", MODELS[provider], "--base-url", base_url(srv, provider), "--quiet",
        "--batch-poll", "0.02", *extra,
    ]  # fmt: skip


def sessions(tmp_path: Path, n: int = 6) -> Path:
    return write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(n)])


def graded(out: Path) -> list[Result]:
    results = read_results(out)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return results


def what_results_say(results: list[Result]) -> list[Any]:
    fields = {"session_id", "ratios", "scores", "verdicts", "verdict", "verdict_reasons"}
    return [r.model_dump(include=fields) for r in results]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_run_equals_a_direct_run_at_half_the_cost_and_records_the_same_keys(
    tmp_path: Path, provider: str
) -> None:
    src = sessions(tmp_path)
    with FakeBatchServer(answer) as srv:
        direct = tmp_path / "direct.jsonl"
        args = grade_args(srv, provider, src, direct, "--no-cache", "--record", str(tmp_path / "d"))
        assert main([a for a in args if a not in ("--batch-poll", "0.02")]) == 0
        batched = tmp_path / "batched.jsonl"
        rec = str(tmp_path / "b")
        assert main([*grade_args(srv, provider, src, batched, "--no-cache", "--record", rec),
                     "--batch"]) == 0  # fmt: skip
    assert srv.stats.batches_created == 1
    assert sum(srv.stats.batched.values()) == 12  # both calls of every session in one batch
    one, two = graded(direct), graded(batched)
    assert what_results_say(one) == what_results_say(two)
    for a, b in zip(one, two, strict=True):
        assert a.usage.input_tokens == b.usage.input_tokens
        assert a.usage.cost_usd is not None and b.usage.cost_usd is not None
        assert b.usage.cost_usd == pytest.approx(a.usage.cost_usd / 2)
    assert sorted(os.listdir(tmp_path / "d")) == sorted(os.listdir(tmp_path / "b"))
    assert SECRET not in "".join(p.read_text() for p in (tmp_path / "b").iterdir())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_failed_lines_go_into_the_next_round_and_only_they_are_sent_again(
    tmp_path: Path, provider: str
) -> None:
    failed_once: set[str] = set()

    def fail_first_counting(custom_id: str, body: dict[str, Any]) -> int | None:
        if schema_name(body) == "counting_verdicts" and custom_id not in failed_once:
            failed_once.add(custom_id)
            return 500
        return None

    src = sessions(tmp_path)
    with FakeBatchServer(answer, fail_line=fail_first_counting) as srv:
        out = tmp_path / "o.jsonl"
        assert main([*grade_args(srv, provider, src, out, "--no-cache"), "--batch"]) == 0
    assert len(graded(out)) == 6
    assert srv.stats.batches_created == 2
    assert srv.stats.failed_lines == 6
    resent = {key for key, times in srv.stats.batched.items() if times > 1}
    assert resent == failed_once
    assert set(srv.stats.batched.values()) == {1, 2}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_final_line_error_is_that_sessions_error_and_the_others_are_graded(
    tmp_path: Path, provider: str
) -> None:
    def reject_session_3(custom_id: str, body: dict[str, Any]) -> int | None:
        return 400 if "s-3" in user_texts(body)[0] else None

    src = sessions(tmp_path)
    with FakeBatchServer(answer, fail_line=reject_session_3) as srv:
        out = tmp_path / "o.jsonl"
        assert main([*grade_args(srv, provider, src, out, "--no-cache"), "--batch"]) == 6
    results = {r.session_id: r for r in read_results(out)}
    assert results["s-3"].error_kind == "api" and results["s-3"].verdict is None
    assert all(r.ok for sid, r in results.items() if sid != "s-3")
    assert srv.stats.batches_created == 1  # a 400 is not sent again


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_rerun_sends_a_failed_line_again_instead_of_rereading_the_old_batchs_failure(
    tmp_path: Path, provider: str
) -> None:
    rejecting = True
    rejected: set[str] = set()

    def reject_session_3_until_fixed(custom_id: str, body: dict[str, Any]) -> int | None:
        if rejecting and "s-3" in user_texts(body)[0]:
            rejected.add(custom_id)
            return 400
        return None

    src = sessions(tmp_path)
    with FakeBatchServer(answer, fail_line=reject_session_3_until_fixed) as srv:
        out = tmp_path / "o.jsonl"
        args = [*grade_args(srv, provider, src, out, "--no-cache"), "--batch"]
        assert main(args) == 6
        rejecting = False  # the cause is gone: a rerun must ask again, not reread the failure
        assert main(args) == 0
    assert len(graded(out)) == 6
    assert srv.stats.batches_created == 2  # only s-3's failed lines went into the new batch
    assert {key for key, times in srv.stats.batched.items() if times > 1} == rejected


@pytest.mark.parametrize("provider", PROVIDERS)
def test_invalid_replies_are_re_asked_in_the_next_round(tmp_path: Path, provider: str) -> None:
    def invalid_first_scoring(body: dict[str, Any]) -> str:
        first_try = len(user_texts(body)) == 1
        if schema_name(body) == "criterion_scores" and first_try:
            return '{"scores": "not a list"}'
        return answer(body)

    src = sessions(tmp_path, 4)
    with FakeBatchServer(invalid_first_scoring) as srv:
        out = tmp_path / "o.jsonl"
        assert main([*grade_args(srv, provider, src, out, "--no-cache"), "--batch"]) == 0
    results = graded(out)
    assert [r.usage.calls for r in results] == [3] * 4  # counting, scoring, one re-ask
    assert srv.stats.batches_created == 2
    assert sum(srv.stats.batched.values()) == 12


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_expired_batch_is_sent_again_and_every_session_graded(
    tmp_path: Path, provider: str
) -> None:
    src = sessions(tmp_path, 3)
    with FakeBatchServer(answer, expire_batches=1) as srv:
        out = tmp_path / "o.jsonl"
        assert main([*grade_args(srv, provider, src, out, "--no-cache"), "--batch"]) == 0
    assert len(graded(out)) == 3
    assert srv.stats.batches_created == 2
    assert srv.stats.expired_requests == 6
    assert set(srv.stats.batched.values()) == {2}


def test_the_response_cache_is_filled_from_batch_results(tmp_path: Path) -> None:
    src = sessions(tmp_path, 3)
    cache = str(tmp_path / "cache")
    with FakeBatchServer(answer) as srv:
        first = grade_args(srv, "openai", src, tmp_path / "a.jsonl", "--cache-dir", cache)
        assert main([*first, "--batch"]) == 0
        again = grade_args(srv, "openai", src, tmp_path / "b.jsonl", "--cache-dir", cache)
        assert main(again) == 0  # a direct run now: every call is a cache hit
    assert srv.stats.chat_requests == 0
    assert all(
        r.usage.cache_hits == 2 and r.usage.cost_usd == 0 for r in graded(tmp_path / "b.jsonl")
    )


def test_dry_run_and_max_cost_use_batch_prices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = sessions(tmp_path, 4)
    common = ["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "gpt-4o",
              "--dry-run"]  # fmt: skip
    assert main(common) == 0
    standard = capsys.readouterr().out
    assert main([*common, "--batch"]) == 0
    batch = capsys.readouterr().out

    def cost(text: str) -> float:
        return float(text.split("cost $", 1)[1].split()[0])

    assert cost(batch) == pytest.approx(cost(standard) / 2, rel=1e-3)
    assert "at batch prices (x0.5" in batch


WORKER = r"""
import sys
from research_judge.cli import main
from research_judge.clients.base import JudgeRequest, Message
sys.exit(main({args!r}))
"""


@pytest.mark.parametrize("provider", PROVIDERS)
def test_kill_minus_nine_while_a_batch_is_out_then_the_rerun_sends_nothing_twice(
    tmp_path: Path, provider: str
) -> None:
    src = sessions(tmp_path, 5)
    out = tmp_path / "o.jsonl"
    # The batch does not end while the first client runs: it is killed with its batch out.
    with FakeBatchServer(answer, polls_to_finish=10_000) as srv:
        args = grade_args(srv, provider, src, out, "--no-cache", "--batch")
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
        proc = subprocess.Popen([sys.executable, "-c", WORKER.format(args=args)], env=env)
        state = Path(f"{out}.batches")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and srv.stats.polls < 3:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert srv.stats.batches_created == 1, "the killed client had its batch out"
        recorded = BatchState.load(state).records
        assert [r.batch_id for r in recorded if r.batch_id] == list(srv.batches)
        srv.polls_to_finish = 1  # the provider finishes the batch meanwhile
        assert main(args) == 0
    assert len(graded(out)) == 5
    assert srv.stats.batches_created == 1
    assert set(srv.stats.batched.values()) == {1}  # not one request sent twice


def test_batch_and_replay_together_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = sessions(tmp_path, 1)
    code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "m",
                 "--batch", "--replay", str(tmp_path)])  # fmt: skip
    assert code == 2
    assert "--batch" in capsys.readouterr().err


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_api_that_refuses_our_key_stops_the_run_resumably(
    tmp_path: Path, provider: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = sessions(tmp_path, 2)
    out = tmp_path / "o.jsonl"
    with FakeBatchServer(answer, refuse_batches=401) as srv:
        assert main([*grade_args(srv, provider, src, out, "--no-cache"), "--batch"]) == 3
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "run the same command again" in err and SECRET not in err
    assert not out.exists() or read_results(out) == []


def test_ctrl_c_leaves_the_batch_running_and_says_how_to_resume(tmp_path: Path) -> None:
    src = sessions(tmp_path, 2)
    out = tmp_path / "o.jsonl"
    with FakeBatchServer(answer, polls_to_finish=10_000) as srv:
        args = grade_args(srv, "openai", src, out, "--no-cache", "--batch")
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
        proc = subprocess.Popen(
            [sys.executable, "-c", WORKER.format(args=args)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and srv.stats.polls < 2:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        [batch] = srv.batches.values()
    assert proc.returncode == 130
    assert "keep running at the provider" in err and "Run the same command again" in err
    assert not batch.cancelled


async def test_openai_finds_the_batch_made_from_an_upload_through_the_real_sdk() -> None:
    from research_judge.clients.batch.providers import OpenAIBatches
    from research_judge.clients.openai import OpenAIClient

    with FakeBatchServer(answer) as srv:
        direct = OpenAIClient(MODELS["openai"], api_key=SECRET, base_url=srv.openai_base_url)
        api = OpenAIBatches(direct)
        line, _ = api.line("k1", JudgeRequest("scoring", "s", (Message("user", "u"),), "x", {}))
        first, second = await api.upload([line]), await api.upload([line])
        assert first is not None and second is not None
        made = await api.submit([], first)
        assert await api.find(first) == made
        assert await api.find(second) is None  # uploaded, never made into a batch
        await api.aclose()


def test_max_cost_reserves_at_batch_prices(tmp_path: Path) -> None:
    src = sessions(tmp_path, 6)
    # Room for about four sessions at standard prices, so for all six at half price.
    with FakeBatchServer(answer) as srv:
        dry = grade_args(srv, "openai", src, tmp_path / "d.jsonl", "--dry-run")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(dry) == 0
        standard = float(out.getvalue().split("cost $", 1)[1].split()[0])
        budget = f"{standard * 4 / 6:.6f}"
        plain = grade_args(srv, "openai", src, tmp_path / "a.jsonl", "--no-cache", "--max-cost")
        assert main([*plain, budget]) == 4  # stopped by the budget
        batched = grade_args(srv, "openai", src, tmp_path / "b.jsonl", "--no-cache", "--max-cost")
        assert main([*batched, budget, "--batch"]) == 0
    assert len(read_results(tmp_path / "a.jsonl")) < 6
    assert len(graded(tmp_path / "b.jsonl")) == 6


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_recorded_batch_the_provider_no_longer_has_is_sent_again(
    tmp_path: Path, provider: str
) -> None:
    src = sessions(tmp_path, 2)
    out = tmp_path / "o.jsonl"
    with FakeBatchServer(answer) as srv:
        args = [*grade_args(srv, provider, src, out, "--no-cache"), "--batch"]
        assert main(args) == 0
        keys = list(srv.stats.batched)
        out.unlink()
        for record in Path(f"{out}.batches").glob("*.json"):
            record.unlink()
        # An old record of a batch the provider has since deleted (404 on retrieve).
        BatchState.beside(out).add(provider, MODELS[provider], "batch_long_gone", keys)
        assert main(args) == 0
    assert len(graded(out)) == 2
    assert srv.stats.batches_created == 2 and set(srv.stats.batched.values()) == {2}
