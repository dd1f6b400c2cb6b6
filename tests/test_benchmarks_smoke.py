"""The benchmark scripts work: each runs at a tiny size and reports its figures.

Timings are never asserted here (they depend on the machine); what is asserted is what a broken
script or a changed prompt would break: the benchmark replies still fit the rendered prompts,
every run grades cleanly, and the pass/fail properties (rate limiting, kill -9) hold.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from research_judge.clients.base import JudgeRequest
from research_judge.clients.openai import OpenAIClient
from research_judge.clients.scripted import ScriptedClient
from research_judge.judge.evidence import EvidenceChecker
from research_judge.judge.grader import Judge
from research_judge.judge.verdicts import parse_counting, parse_scoring
from research_judge.sessions.model import Session, iter_sessions

BENCH_DIR = Path(__file__).resolve().parents[1] / "benchmarks"


def bench(name: str) -> ModuleType:
    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    return importlib.import_module(name)


def numbers(figures: list, benchmark: str) -> dict[str, float]:
    """Figure name -> its measured number, for one benchmark's figures."""
    out = {}
    for f in figures:
        assert f.benchmark == benchmark
        out[f.name] = float(f.value.split()[0])
    return out


def test_benchmark_replies_fit_the_rendered_prompts(tmp_path: Path) -> None:
    replies = bench("judge_replies")
    src = replies.write_sessions(tmp_path / "s.jsonl", 25)
    judge = Judge(ScriptedClient([]))
    sessions = [s for _, s in iter_sessions(src)]
    assert len(sessions) == 25 and all(isinstance(s, Session) for s in sessions)
    wire = OpenAIClient("gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    fake = replies.BodyReplies()

    def respond(request: JudgeRequest) -> str:
        # What the real client sends (the body), answered as the server does.
        return str(fake.respond(wire.request_body(request), {}))

    for s in sessions:
        counting, scoring = (respond(r) for r in judge.first_requests(s))
        verdicts = parse_counting(counting, s.reference_ids)
        assert {v.id for v in verdicts if v.check == "relevant"} == set(s.reference_ids)
        checker = EvidenceChecker(s)
        checked = [checker.check(v) for v in verdicts]
        assert all(c.evidence_verified and c.claim_verified is not False for c in checked)
        assert {v.answer for v in verdicts} == {True, False}  # a mix, as a real judge gives
        assert set(parse_scoring(scoring)) == {
            "effectiveness",
            "fluff",
            "structure",
        }


def test_every_bare_loop_sends_two_calls_per_session(tmp_path: Path) -> None:
    bare = bench("bare_loop")
    calls = bare.render_calls(bench("judge_replies").write_sessions(tmp_path / "s.jsonl", 5))
    assert len(calls) == 5
    with bench("server_process").FakeServerProcess(latency=0.01) as server:
        for floor in bare.FLOORS:
            asyncio.run(bare.bare_run(calls, server.base_url, 3, floor))
    assert server.stats["requests"] == server.stats["completed"] == 2 * 5 * len(bare.FLOORS)
    assert 1 <= server.stats["max_in_flight"] <= 3


def test_efficiency_and_cpu_benchmarks_run(tmp_path: Path) -> None:
    eff = numbers(
        bench("bench_efficiency").run(tmp_path, sessions=6, latency=0.01, concurrency=4, repeats=1),
        "efficiency",
    )
    # No side can beat the ideal: at most `concurrency` calls in flight, each held >= latency.
    for side in ("pipeline", "bare SDK loop", "bare aiohttp loop"):
        assert 0 < eff[f"ideal / wall, {side}"] <= 1
    cpu = numbers(
        bench("bench_cpu").run(tmp_path, sessions=6, concurrency=4, repeats=1, profile=False),
        "cpu",
    )
    pipeline = cpu["pipeline CPU per session"]
    assert pipeline > 0 and cpu["bare SDK create() loop CPU per session"] > 0
    assert cpu["bare SDK with_raw_response.create() loop"] > 0
    assert cpu["bare SDK post() loop"] > 0
    assert cpu["bare aiohttp loop CPU per session"] > 0
    for ratio, floor in [
        ("pipeline / bare SDK loop", "bare SDK create() loop CPU per session"),
        ("pipeline / bare with_raw_response loop", "bare SDK with_raw_response.create() loop"),
        ("pipeline / bare aiohttp loop", "bare aiohttp loop CPU per session"),
    ]:
        # The figures are printed to 0.01 ms, so the quotient of printed values is only close.
        assert cpu[ratio] == pytest.approx(pipeline / cpu[floor], rel=0.05)


def test_rss_benchmark_falls_back_to_the_instant_client_when_http_is_too_slow(
    tmp_path: Path,
) -> None:
    figures = bench("bench_rss").run(tmp_path, small=4, large=12, http_mid=None, http_limit=0.0)
    names = [f.name for f in figures]
    assert names[:3] == ["peak RSS 4 (instant)", "peak RSS 12 (instant)", "growth 4->12 (instant)"]
    assert "InstantClient" in figures[2].note
    assert numbers(figures, "rss")["peak RSS 12 (instant)"] > 10  # MB: a real process
    assert not list(tmp_path.glob("rss.*"))  # the large files are cleaned up


def test_rate_limited_run_grades_everything(tmp_path: Path) -> None:
    figures = bench("bench_rate_limit").run(
        tmp_path, sessions=10, concurrency=8, provider_limit=2, latency=0.03, retry_after=0.05
    )
    graded = figures[0]
    assert graded.value == "10 / 0" and graded.ok is True
    seen, retries = (int(x) for x in figures[1].value.split(" / "))
    assert seen > 0 and retries >= seen  # the limit was really hit, and every 429 retried


def test_kill_minus_nine_benchmark_passes(tmp_path: Path) -> None:
    kill = bench("bench_kill_resume")
    figures = kill.run(
        tmp_path, sessions=16, concurrency=2, latency=0.03, cases=(kill.Case((0.25,), 0.005),)
    )
    assert [(f.value, f.ok) for f in figures] == [("1/1", True), ("0", True)]


def test_bootstrap_kappa_benchmark_checks_its_two_paths(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kappa = bench("bootstrap_kappa")
    assert kappa.main([]) == 0  # default sizes: about a second
    out = capsys.readouterr().out
    assert "same kappa on identical resamples: yes" in out and "CIs agree within 0.03: yes" in out
    # The cross-check can fail: a kappa off by 0.1 no longer matches sklearn's.
    real = kappa.kappa_from_counts
    monkeypatch.setattr(kappa, "kappa_from_counts", lambda *counts: real(*counts) + 0.1)
    assert kappa.main(["--resamples", "100", "--loop", "20"]) == 1
    assert "same kappa on identical resamples: NO" in capsys.readouterr().out


def test_convert_benchmark_converts_every_session(tmp_path: Path) -> None:
    figures = bench("bench_convert").run(tmp_path, sessions=20, rounds=1, depth=800)
    values = numbers(figures, "convert")
    assert set(values) == {
        "openai-chat sessions/s",
        "openai-chat time / parse-and-write floor",
        "otel sessions/s",
        "otel time / parse-and-write floor",
        "800-span chain: time per span / 100-span chain's",
    }
    out = (tmp_path / "convert.otel.out.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(out) == 20 and '"content_ref": "s0/3.txt"' in out[0]


def test_batch_benchmark_grades_every_session_through_the_fake_batch_api(tmp_path: Path) -> None:
    figures = bench("bench_batch").run(tmp_path, sessions=20, poll=0.05)
    by_name = {f.name: f for f in figures}
    assert by_name["graded without error"].value == "20/20"
    assert by_name["batches / lines"].value == "1 / 40"


def test_startup_benchmark_measures_each_light_verb(tmp_path: Path) -> None:
    figures = bench("bench_startup").run(tmp_path, repeats=1)
    values = numbers(figures, "startup")
    assert set(values) == {
        "python -c pass (CPU s)",
        "--help: CPU beyond Python",
        "validate on 20 sessions: CPU beyond Python",
        "compare on 20 sessions: CPU beyond Python",
        "report on 20 sessions: CPU beyond Python",
        "report --labels --baseline on 20 sessions: CPU beyond Python",
    }
    assert (tmp_path / "r.html").is_file() and (tmp_path / "r.md").is_file()


def test_scale_benchmark_runs_every_verb_on_generated_results(tmp_path: Path) -> None:
    figures = bench("bench_scale").run(tmp_path, lines=300)
    values = numbers(figures, "scale")
    verbs = ("grade closing summary", "validate --labels (200)", "compare", "report --md",
             "report --html", "report --md --baseline --labels")  # fmt: skip
    assert set(values) == {
        f"{verb}, 300 lines: {what}" for verb in verbs for what in ("peak RSS", "CPU per line")
    }
    assert all(v > 0 for v in values.values())
    report = (tmp_path / "scale-300" / "r2.md").read_text(encoding="utf-8")
    assert "Regressions" in report  # the baseline was compared, not skipped
