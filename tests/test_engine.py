"""The batch engine: order, bounded concurrency, resume, budget, selection, faults."""

from __future__ import annotations

import asyncio
import io
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from research_judge.clients import ScriptedClient
from research_judge.clients.base import JudgeRequest, JudgeResponse, Message
from research_judge.cost.prices import PriceTable
from research_judge.engine import (
    AdaptiveLimiter,
    Budget,
    Estimator,
    ResilientClient,
    RetryPolicy,
    RunOptions,
    Selection,
    grade_file,
)
from research_judge.engine.progress import Progress
from research_judge.errors import (
    ApiError,
    ConfigError,
    InputFileError,
    ProviderDownError,
    RateLimitError,
    TransientApiError,
)
from research_judge.judge.grader import Judge
from research_judge.judge.prompts import PromptSet, default_prompts_dir
from research_judge.results.model import read_results
from research_judge.sessions.model import Session

from support import good_responder, session, write_sessions


def ids_in(path: Path) -> list[str]:
    return [json.loads(line)["session_id"] for line in path.read_text().splitlines()]


async def test_results_come_out_in_input_order_whatever_finishes_first(tmp_path: Path) -> None:
    rng = random.Random(7)

    async def slow(request: JudgeRequest) -> Any:
        await asyncio.sleep(rng.random() / 200)
        return good_responder(request)

    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i:03}") for i in range(60)])
    out = tmp_path / "out.jsonl"
    stats = await grade_file(src, out, Judge(ScriptedClient(slow)), RunOptions(concurrency=16))
    assert ids_in(out) == [f"s-{i:03}" for i in range(60)]
    assert stats.graded == 60 and stats.errors == 0


class CountingClient:
    """Answers well after a short wait and remembers how many requests overlapped."""

    provider = "scripted"
    model = "scripted"

    def __init__(self, limit: int | None = None) -> None:
        self.in_flight = 0
        self.peak = 0
        self.limit = limit
        self.sessions: list[str] = []
        self.rejected = 0

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        if self.limit is not None and self.in_flight >= self.limit:
            self.rejected += 1
            raise RateLimitError("HTTP 429: too many requests", 429, retry_after=0.001)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0.002)
        finally:
            self.in_flight -= 1
        self.sessions.append(request.session_id)
        return JudgeResponse(json.dumps(good_responder(request)))

    async def aclose(self) -> None:
        return None


async def test_concurrency_caps_requests_in_flight(tmp_path: Path) -> None:
    inner = CountingClient()
    client = ResilientClient(inner, concurrency=5)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(40)])
    await grade_file(src, tmp_path / "o.jsonl", Judge(client), RunOptions(concurrency=5))
    assert inner.peak == 5


async def test_a_rate_limited_run_backs_off_and_grades_everything(tmp_path: Path) -> None:
    inner = CountingClient(limit=3)
    client = ResilientClient(inner, concurrency=12)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(50)])
    stats = await grade_file(src, tmp_path / "o.jsonl", Judge(client), RunOptions(concurrency=12))
    assert stats.graded == 50 and stats.errors == 0
    assert inner.rejected > 0 and client.limiter.cuts > 0
    assert client.limiter.limit < 12


async def test_one_broken_session_never_stops_the_batch(tmp_path: Path) -> None:
    def responder(request: JudgeRequest) -> Any:
        if request.session_id == "s-3":
            raise RuntimeError("bug in a client")
        return good_responder(request)

    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(6)])
    out = tmp_path / "o.jsonl"
    stats = await grade_file(src, out, Judge(ScriptedClient(responder)), RunOptions())
    results = {r.session_id: r for r in read_results(out)}
    assert stats.graded == 6 and stats.errors == 1
    assert results["s-3"].error_kind == "internal" and results["s-3"].verdict is None
    assert all(results[f"s-{i}"].ok for i in (0, 1, 2, 4, 5))


async def test_bad_lines_are_reported_and_good_sessions_still_graded(tmp_path: Path) -> None:
    src = write_sessions(
        tmp_path / "s.jsonl",
        [session("a"), session("b"), session("a")],
        extra_lines=["{not json", json.dumps({"id": "c", "question": "q"})],
    )
    seen: list[str] = []
    stats = await grade_file(
        src,
        tmp_path / "o.jsonl",
        Judge(ScriptedClient(good_responder)),
        RunOptions(),
        on_input_error=lambda e: seen.append(str(e)),
    )
    assert stats.graded == 2
    assert [s.split(": ", 1)[0] for s in seen] == [f"{src}:3", f"{src}:4", f"{src}:5"]
    assert "duplicate session id 'a'" in seen[0]
    assert "answer: missing" in seen[2]


async def test_a_second_run_sends_nothing(tmp_path: Path) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(5)])
    out = tmp_path / "o.jsonl"
    await grade_file(src, out, Judge(ScriptedClient(good_responder)), RunOptions())
    again = ScriptedClient([])  # any call would fail: the script is empty
    stats = await grade_file(src, out, Judge(again), RunOptions())
    assert stats.reused == 5 and stats.graded == 0 and again.history == []


async def test_a_torn_last_line_is_repaired_and_only_missing_sessions_are_sent(
    tmp_path: Path,
) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(6)])
    out = tmp_path / "o.jsonl"
    await grade_file(src, out, Judge(ScriptedClient(good_responder)), RunOptions())
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]) + lines[3][:40])  # killed while writing line 4

    client = ScriptedClient(good_responder)
    stats = await grade_file(src, out, Judge(client), RunOptions())
    assert stats.repaired_torn_line
    assert sorted({r.session_id for r in client.history}) == ["s-3", "s-4", "s-5"]
    assert ids_in(out) == [f"s-{i}" for i in range(6)]


async def test_progress_of_a_resumed_run_counts_reused_sessions_as_done_not_in_the_rate(
    tmp_path: Path,
) -> None:
    def final_line(total: int) -> tuple[Progress, io.StringIO]:
        times = iter([0.0])  # the run starts at 0 s; every later reading is 10 s

        def clock() -> float:
            return next(times, 10.0)

        stream = io.StringIO()
        return Progress(total, stream=stream, clock=clock, is_tty=False), stream

    out = tmp_path / "o.jsonl"
    first = write_sessions(tmp_path / "a.jsonl", [session(f"s-{i}") for i in range(10)])
    await grade_file(first, out, Judge(ScriptedClient(good_responder)), RunOptions())

    progress, stream = final_line(10)  # everything reused: nothing is drained
    await grade_file(first, out, Judge(ScriptedClient([])), RunOptions(), progress=progress)
    assert (
        stream.getvalue()
        .splitlines()[-1]
        .startswith("done: 10/10 (100%) | elapsed 10s | 0.00 sessions/s")
    )

    more = write_sessions(tmp_path / "b.jsonl", [session(f"s-{i}") for i in range(20)])
    progress, stream = final_line(20)  # 10 reused, 10 graded in 10 s: 1 session/s
    await grade_file(
        more, out, Judge(ScriptedClient(good_responder)), RunOptions(), progress=progress
    )
    assert (
        stream.getvalue()
        .splitlines()[-1]
        .startswith("done: 20/20 (100%) | elapsed 10s | 1.00 sessions/s")
    )


async def test_retry_errors_regrades_only_the_errored_sessions(tmp_path: Path) -> None:
    def flaky(request: JudgeRequest) -> Any:
        if request.session_id == "s-2" and request.call == "scoring":
            return {"scores": []}
        return good_responder(request)

    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(4)])
    out = tmp_path / "o.jsonl"
    await grade_file(src, out, Judge(ScriptedClient(flaky)), RunOptions())
    plain = ScriptedClient(good_responder)
    await grade_file(src, out, Judge(plain), RunOptions())
    assert plain.history == []  # a judge-output error is a result; it is kept by default

    fixed = ScriptedClient(good_responder)
    await grade_file(src, out, Judge(fixed), RunOptions(retry_errors=True))
    assert {r.session_id for r in fixed.history} == {"s-2"}
    results = read_results(out)  # raises on duplicate ids
    assert [r.session_id for r in results] == ["s-0", "s-1", "s-2", "s-3"]
    assert all(r.ok for r in results)


async def test_a_changed_judge_regrades_and_leaves_one_line_per_session(tmp_path: Path) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    out = tmp_path / "o.jsonl"
    await grade_file(src, out, Judge(ScriptedClient(good_responder)), RunOptions())
    other = ScriptedClient(good_responder, model="another-model")
    stats = await grade_file(src, out, Judge(other), RunOptions())
    assert stats.graded == 3 and stats.rewritten
    results = read_results(out)
    assert [r.judge.model for r in results if r.judge] == ["another-model"] * 3


async def test_under_a_budget_each_session_is_rendered_once_for_estimate_and_calls(
    tmp_path: Path,
) -> None:
    prices = PriceTable.load()
    judge = Judge(ScriptedClient(good_responder, provider="openai", model="gpt-4o"), prices=prices)
    rendered: list[str] = []
    render = judge.first_requests

    def counting_render(s: Session) -> tuple[JudgeRequest, JudgeRequest]:
        rendered.append(s.id)
        return render(s)

    judge.first_requests = counting_render  # type: ignore[method-assign]
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(6)])
    budget = Budget(100.0, Estimator(judge, prices))
    stats = await grade_file(src, tmp_path / "o.jsonl", judge, RunOptions(), budget=budget)
    assert stats.graded == 6 and stats.errors == 0
    assert sorted(rendered) == [f"s-{i}" for i in range(6)]  # once each, not twice
    assert budget.spent > 0 and budget.reserved == pytest.approx(0.0)


async def test_max_cost_stops_before_the_budget_and_leaves_a_resumable_file(
    tmp_path: Path,
) -> None:
    prices = PriceTable.load()
    model = "gpt-4o"
    assert prices.price_for(model) is not None
    judge = Judge(ScriptedClient(good_responder, provider="openai", model=model), prices=prices)
    estimator = Estimator(judge, prices)
    sessions = [session(f"s-{i}") for i in range(10)]
    per_session = estimator.session(Session.model_validate(sessions[0])).cost_usd
    assert per_session is not None and per_session > 0
    budget = Budget(per_session * 3.5, estimator)
    src = write_sessions(tmp_path / "s.jsonl", sessions)
    out = tmp_path / "o.jsonl"
    stats = await grade_file(src, out, judge, RunOptions(concurrency=1), budget=budget)
    assert stats.stopped == "budget"
    assert 1 <= stats.graded < 10
    assert budget.spent <= budget.limit
    rest = await grade_file(
        src,
        out,
        Judge(ScriptedClient(good_responder, provider="openai", model=model), prices=prices),
        RunOptions(),
    )
    assert rest.reused == stats.graded and rest.graded == 10 - stats.graded
    assert ids_in(out) == [f"s-{i}" for i in range(10)]


async def test_a_provider_that_is_down_stops_the_run_with_a_resumable_file(
    tmp_path: Path,
) -> None:
    calls = {"n": 0}

    def responder(request: JudgeRequest) -> Any:
        calls["n"] += 1
        if calls["n"] > 6:  # three sessions succeed, then the provider goes away
            return TransientApiError("HTTP 503: unavailable", 503)
        return good_responder(request)

    async def no_sleep(_: float) -> None:
        return None

    policy = RetryPolicy(attempts=2, down_after=0.0, min_failures_for_down=4)
    client = ResilientClient(
        ScriptedClient(responder), concurrency=1, policy=policy, sleep=no_sleep
    )
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(20)])
    out = tmp_path / "o.jsonl"
    with pytest.raises(ProviderDownError, match="no successful judge call"):
        await grade_file(src, out, Judge(client), RunOptions(concurrency=1))
    graded = read_results(out)
    assert [r.session_id for r in graded][:3] == ["s-0", "s-1", "s-2"]
    assert calls["n"] < 40  # stopped early instead of failing all twenty sessions


@pytest.mark.parametrize("with_budget", [False, True])
async def test_a_prompt_template_that_cannot_render_stops_the_run_naming_the_file(
    tmp_path: Path, with_budget: bool
) -> None:
    folder = tmp_path / "prompts"
    shutil.copytree(default_prompts_dir(), folder)
    template = folder / "scoring.user.j2"
    template.write_text(template.read_text() + "{{ qestion }}\n")  # a typo of a user's template
    client = ScriptedClient(good_responder, provider="openai", model="gpt-4o")
    judge = Judge(client, prompts=PromptSet(folder))
    prices = PriceTable.load()
    budget = Budget(1.0, Estimator(judge, prices)) if with_budget else None
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(5)])
    out = tmp_path / "o.jsonl"
    with pytest.raises(ConfigError, match="qestion") as caught:
        await grade_file(src, out, judge, RunOptions(), budget=budget)
    assert str(caught.value).startswith(f"{template}: ")
    assert client.history == []  # nothing was sent for a request that could not be built
    assert not out.exists()  # no session recorded as an "internal error"


@pytest.mark.parametrize("status", [401, 403, 404, 407])
async def test_rejected_credentials_model_or_proxy_stop_at_once(status: int) -> None:
    inner = ScriptedClient([ApiError(f"HTTP {status}: no", status)])
    client = ResilientClient(inner, concurrency=2)
    with pytest.raises(ProviderDownError, match="rejected"):
        await client.complete(_request())
    assert len(inner.history) == 1  # not retried


def _request() -> JudgeRequest:
    return JudgeRequest("scoring", "sys", (Message("user", "u"),), "s", {}, session_id="x")


async def test_retry_after_is_honoured_and_capped() -> None:
    slept: list[float] = []

    async def record_sleep(seconds: float) -> None:
        slept.append(seconds)

    script = [
        RateLimitError("429", 429, retry_after=2.5),
        RateLimitError("429", 429, retry_after=3600),
        TransientApiError("HTTP 502", 502),
        "{}",
    ]
    policy = RetryPolicy(max_retry_after=10.0, backoff_base=0.5, backoff_max=4.0)
    client = ResilientClient(
        ScriptedClient(script), concurrency=4, policy=policy, sleep=record_sleep
    )
    response = await client.complete(_request())
    assert response.content == "{}"
    assert slept[:2] == [2.5, 10.0]
    assert 0 <= slept[2] <= 4.0
    assert client.retries == 3


async def test_selection_by_metadata_and_a_stable_seeded_sample(tmp_path: Path) -> None:
    sessions = [session(f"s-{i:02}") for i in range(30)]
    for i, s in enumerate(sessions):
        s["metadata"]["tier"] = "smoke" if i % 3 == 0 else "full"
    src = write_sessions(tmp_path / "s.jsonl", sessions)

    async def graded_ids(selection: Selection, name: str) -> list[str]:
        out = tmp_path / name
        await grade_file(
            src, out, Judge(ScriptedClient(good_responder)), RunOptions(selection=selection)
        )
        return ids_in(out)

    smoke = await graded_ids(Selection(where={"tier": "smoke"}), "smoke.jsonl")
    assert smoke == [f"s-{i:02}" for i in range(0, 30, 3)]
    a = await graded_ids(Selection(sample=7, seed=1), "a.jsonl")
    b = await graded_ids(Selection(sample=7, seed=1), "b.jsonl")
    c = await graded_ids(Selection(sample=7, seed=2), "c.jsonl")
    assert a == b and len(a) == 7 and a != c
    assert a == sorted(a)  # still in input order


async def test_a_bad_line_before_the_end_is_refused_not_repaired(tmp_path: Path) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    out = tmp_path / "o.jsonl"
    await grade_file(src, out, Judge(ScriptedClient(good_responder)), RunOptions())
    lines = out.read_text().splitlines(keepends=True)
    damaged = lines[0] + "garbage\n" + "".join(lines[1:])
    out.write_text(damaged)
    with pytest.raises(InputFileError, match=r"o\.jsonl:2: not a valid result line"):
        await grade_file(src, out, Judge(ScriptedClient([])), RunOptions())
    assert out.read_text() == damaged  # untouched


async def test_a_complete_last_line_missing_its_newline_is_kept(tmp_path: Path) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    out = tmp_path / "o.jsonl"
    await grade_file(src, out, Judge(ScriptedClient(good_responder)), RunOptions())
    out.write_text(out.read_text().rstrip("\n"))
    client = ScriptedClient([])
    stats = await grade_file(src, out, Judge(client), RunOptions())
    assert stats.reused == 3 and client.history == []
    assert ids_in(out) == ["s-0", "s-1", "s-2"] and out.read_text().endswith("\n")


async def test_api_errors_are_retried_on_resume_but_judge_errors_are_kept(
    tmp_path: Path,
) -> None:
    def responder(request: JudgeRequest) -> Any:
        if request.session_id == "s-0":
            return ApiError("HTTP 400: context too long", 400)
        if request.session_id == "s-1" and request.call == "scoring":
            return {"scores": []}
        return good_responder(request)

    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    out = tmp_path / "o.jsonl"
    await grade_file(src, out, Judge(ScriptedClient(responder)), RunOptions())
    again = ScriptedClient(good_responder)
    await grade_file(src, out, Judge(again), RunOptions())
    assert {r.session_id for r in again.history} == {"s-0"}


async def test_the_limiter_is_first_come_first_served_and_cancellation_leaks_no_slot() -> None:
    limiter = AdaptiveLimiter(1)
    await limiter.acquire()
    order: list[str] = []

    async def wait(name: str) -> None:
        await limiter.acquire()
        order.append(name)

    first, doomed, last = (asyncio.create_task(wait(n)) for n in ("first", "doomed", "last"))
    await asyncio.sleep(0)
    doomed.cancel()
    limiter.release()
    await first
    limiter.release()
    await last
    assert order == ["first", "last"]
    assert doomed.cancelled()
    limiter.release()
    assert limiter.in_flight == 0


async def test_a_waiter_cancelled_at_the_head_of_the_queue_is_skipped_and_stays_cancelled() -> None:
    # The slot is released before the cancelled waiter runs again: _wake drops it and grants
    # the next one; the cancelled waiter must then still end cancelled, not fail differently.
    limiter = AdaptiveLimiter(1)
    await limiter.acquire()
    doomed = asyncio.create_task(limiter.acquire())
    last = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0)
    doomed.cancel()
    limiter.release()
    await last
    with pytest.raises(asyncio.CancelledError):
        await doomed
    assert limiter.in_flight == 1 and not limiter._waiters


async def test_the_limiter_halves_once_per_window_and_grows_back() -> None:
    limiter = AdaptiveLimiter(8)
    epoch = await limiter.acquire()
    limiter.on_rate_limited(epoch)
    limiter.on_rate_limited(epoch)  # same burst: no second cut
    assert limiter.limit == 4 and limiter.cuts == 1
    limiter.release()
    for _ in range(40):
        limiter.on_success()
    assert limiter.limit == 8


async def test_a_provider_failure_behind_a_full_reorder_window_does_not_hang(
    tmp_path: Path,
) -> None:
    # Session 0 is slow and then meets a dead provider; the sessions after it finish first and
    # fill the reorder window. The run must stop, not wait for ever on the window.
    async def responder(request: JudgeRequest) -> Any:
        if request.session_id == "s-0":
            await asyncio.sleep(0.05)
            return ProviderDownError("the provider rejected the request: HTTP 401", 401)
        return good_responder(request)

    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(10)])
    run = grade_file(
        src, tmp_path / "o.jsonl", Judge(ScriptedClient(responder)),
        RunOptions(concurrency=3, window=2),
    )  # fmt: skip
    with pytest.raises(ProviderDownError):
        await asyncio.wait_for(run, timeout=5)
