"""Long sessions end to end: the command line, the real OpenAI client and the fake server with
a window (refusing prompts over it, cutting replies over their cap), and the benchmark's smoke."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.clients.base import JudgeRequest, Message
from research_judge.clients.openai import OpenAIClient
from research_judge.errors import ContextLengthError, OutputTruncated
from research_judge.results.model import read_results
from research_judge.testing.fake_openai import FakeOpenAIServer
from research_judge.testing.long_sessions import TruthfulJudge, make_session

BENCH_DIR = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def request(text: str, cap: int) -> JudgeRequest:
    return JudgeRequest(
        "counting", "system", (Message("user", text),), "counting_verdicts", {}, cap
    )


async def test_the_fake_refuses_over_the_window_and_cuts_long_replies() -> None:
    with FakeOpenAIServer(lambda body: "x" * 4000, context_window=2000) as srv:
        client = OpenAIClient("fake-model", api_key="sk-test", base_url=srv.base_url)
        try:
            with pytest.raises(ContextLengthError, match="maximum context length is 2000"):
                await client.complete(request("y" * 8000, 100))
            with pytest.raises(OutputTruncated):
                await client.complete(request("short", 100))
        finally:
            await client.aclose()
    assert srv.stats.refused_context == 1 and srv.stats.cut == 1


def grade(
    tmp_path: Path, sessions: list[dict], srv: FakeOpenAIServer, *extra: str
) -> tuple[int, list]:
    src = tmp_path / "sessions.jsonl"
    src.write_text("".join(json.dumps(s) + "\n" for s in sessions))
    out = tmp_path / "results.jsonl"
    code = main(["grade", str(src), "--out", str(out), "--provider", "openai",
                 "--model", "gpt-4o", "--base-url", srv.base_url, "--no-cache", "--quiet",
                 *extra])  # fmt: skip
    return code, read_results(out)


def test_a_window_smaller_than_believed_is_replanned_from_the_providers_refusals(
    tmp_path: Path,
) -> None:
    first, second = make_session("s-1", 40, 1500), make_session("s-2", 40, 1500)
    # The judge is told 32k; the server holds 12k: its 400s make the judge plan smaller, and
    # the window it states is kept for the calls after it.
    with FakeOpenAIServer(TruthfulJudge([first, second]), context_window=12_000) as srv:
        code, results = grade(
            tmp_path, [first.session, second.session], srv, "--context-window", "32000",
            "--concurrency", "1",
        )  # fmt: skip
    assert code == 0, [r.error for r in results]
    refused = [r for r in srv.requests if r.status == 400]
    assert 0 < len(refused) <= 2 and srv.stats.cut == 0
    for result, built in zip(results, (first, second), strict=True):
        assert result.ratios == built.truth
        assert result.context is not None and result.context.references_judged == 40


def test_unknown_model_prints_one_notice_and_dry_run_counts_split_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = make_session("s-small", 3, 500).session
    big = make_session("s-big", 10, 3000).session
    src = tmp_path / "sessions.jsonl"
    src.write_text(json.dumps(small) + "\n" + json.dumps(big) + "\n")
    out = tmp_path / "out.jsonl"
    args = ["grade", str(src), "--out", str(out), "--provider", "openai", "--dry-run"]
    assert main([*args, "--model", "my-local-model"]) == 0
    captured = capsys.readouterr()
    notices = [line for line in captured.err.splitlines() if "context-window table" in line]
    assert len(notices) == 1 and "128,000-token window" in notices[0]
    wide = captured.out
    assert main([*args, "--model", "my-local-model", "--context-window", "8000"]) == 0
    narrow = capsys.readouterr().out
    assert "dry run: 2 session(s), 4 judge calls" in wide
    assert "1 session(s) larger than one call are split" in narrow
    assert "judge calls" in narrow and "4 judge calls" not in narrow
    assert not out.exists()


def test_summary_counts_what_was_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = make_session("s-big", 30, 1500)
    truthful = TruthfulJudge([built])

    class Broken:
        """Invalid output for every later call (claims fixed) that shows r25."""

        def respond(self, body: dict, headers: dict[str, str]) -> str:
            shown = truthful.shown.read_body(body, truthful.shows_claims)
            if shown.claims is not None and "r25" in [ref.id for ref in shown.references]:
                return "not json"
            return truthful.respond(body, headers)

    with FakeOpenAIServer(Broken()) as srv:
        code, [result] = grade(tmp_path, [built.session], srv, "--context-window", "12000")
    assert code == 0 and result.context is not None and result.context.not_judged > 0
    out = capsys.readouterr().out
    assert "not judged" in out and "context" in out


def test_the_long_session_benchmark_runs_at_a_small_size(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH_DIR))
    try:
        import bench_long_sessions as bench
    finally:
        sys.path.remove(str(BENCH_DIR))
    rows = bench.run(bench.QUICK, tmp_path, window=16_000, extra=["--context-window", "16000"])
    assert [r.name for r in rows] == [name for name, _, _ in bench.QUICK]
    for row in rows:
        assert row.ok, row
        assert row.refused == 0 and row.cut == 0
    assert rows[0].counting_calls == 1 and all(r.counting_calls > 1 for r in rows[1:])
    assert "sent/traj" in bench.table(rows)


def test_the_python_api_takes_a_context_window(tmp_path: Path) -> None:
    import research_judge

    built = make_session("s-big", 30, 1500)
    with FakeOpenAIServer(TruthfulJudge([built]), context_window=12_000) as srv:
        [result] = research_judge.grade(
            [built.session],
            model="gpt-4o",
            base_url=srv.base_url,
            api_key="sk-test",
            cache=False,
            context_window=12_000,
        )
    assert srv.stats.refused_context == 0
    assert result.ratios == built.truth
    assert result.context is not None and result.context.counting_calls > 1


def test_a_jury_is_planned_for_its_smallest_window() -> None:
    from research_judge.clients.settings import ClientSettings
    from research_judge.cost.windows import WindowTable
    from research_judge.grading import juror_specs, run_limits

    settings = ClientSettings(model="gpt-4.1", api_key="k")
    jury = juror_specs("gpt-4o,anthropic:claude-3-5-haiku")
    limits, notices = run_limits(WindowTable.load(None), settings, jury, None)
    assert (limits.context_window, limits.max_output_tokens) == (128_000, 8192)
    assert notices == []  # every juror is in the table: no notice
