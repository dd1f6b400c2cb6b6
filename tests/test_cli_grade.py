"""``research-judge grade`` end to end: the real CLI, the real OpenAI SDK, a fake server."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from research_judge.cli import build_parser, main
from research_judge.cli._grading import execute
from research_judge.results.model import read_results
from research_judge.testing.fake_openai import FakeOpenAIServer

from support import body_responder, session, write_sessions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SECRET = "sk-test-DO-NOT-STORE-0123456789abcdef"
REPLAY = ["--provider", "scripted", "--model", "authored-lenient-judge"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer(body_responder) as srv:
        yield srv


def net(srv: FakeOpenAIServer, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "--provider", "openai", "--model", "gpt-4o-mini", "--base-url", srv.base_url,
        "--cache-dir", str(tmp_path / "cache"), "--quiet", *extra,
    ]  # fmt: skip


def test_replaying_the_bundled_recordings_grades_every_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    code = main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), *REPLAY,
                 "--replay", str(FIXTURES / "recordings"), "--quiet"])  # fmt: skip
    assert code == 0
    results = read_results(out)
    expected = [json.loads(line)["id"] for line in (FIXTURES / "sessions.jsonl").open()]
    assert [r.session_id for r in results] == expected
    assert all(r.ok for r in results)
    out = capsys.readouterr().out
    assert "graded 20, errors 0" in out
    assert f"42 judge calls (42 replayed from {FIXTURES / 'recordings'})" in out


def test_bad_lines_are_named_and_good_sessions_graded_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    bad = FIXTURES / "bad_sessions.jsonl"
    code = main(["grade", str(bad), "--out", str(out), *REPLAY,
                 "--replay", str(FIXTURES / "recordings"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    for line in (2, 3, 5, 6, 7, 8):
        assert f"{bad}:{line}: " in err
    assert "not valid JSON" in err and "duplicate session id" in err
    assert "duplicate reference id" in err and "content: missing" in err
    assert [r.session_id for r in read_results(out)] == ["b-0001", "b-0002", "b-0003"]


def test_progress_of_a_file_with_bad_lines_ends_at_every_good_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = FIXTURES / "bad_sessions.jsonl"
    code = main(["grade", str(bad), "--out", str(tmp_path / "o.jsonl"), *REPLAY,
                 "--replay", str(FIXTURES / "recordings")])  # fmt: skip
    assert code == 2
    [done] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("done: ")]
    assert done.startswith("done: 3/3 (100%)")


def test_a_replay_miss_is_a_session_error_naming_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session("never-recorded")])
    empty = tmp_path / "recordings"
    empty.mkdir()
    out = tmp_path / "o.jsonl"
    code = main(["grade", str(src), "--out", str(out), *REPLAY, "--replay", str(empty), "--quiet"])
    assert code == 6  # good input, a judge-side failure (exit-code table)
    [result] = read_results(out)
    assert result.error_kind == "replay_miss"
    assert result.error is not None and "'never-recorded'" in result.error


def test_record_then_replay_gives_the_same_results_and_no_key_is_stored(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(4)])
    rec = tmp_path / "rec"
    recorded, replayed = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["grade", str(src), "--out", str(recorded), *net(server, tmp_path),
                 "--record", str(rec)]) == 0  # fmt: skip
    sent = server.stats.requests
    assert sent == 8 and server.stats.with_authorization == 8
    # Replayed against the same endpoint it was recorded from (another endpoint is another judge).
    assert main(["grade", str(src), "--out", str(replayed), "--provider", "openai",
                 "--model", "gpt-4o-mini", "--base-url", server.base_url,
                 "--replay", str(rec), "--quiet"]) == 0  # fmt: skip
    assert server.stats.requests == sent  # replay never touched the network

    def essence(path: Path) -> list[tuple[object, ...]]:
        return [(r.session_id, r.ratios, r.scores, r.verdicts, r.verdict) for r in
                read_results(path)]  # fmt: skip

    assert essence(recorded) == essence(replayed)
    for path in [*tmp_path.rglob("*")]:
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path


def test_the_cache_makes_a_rerun_free(
    tmp_path: Path, server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    main(["grade", str(src), "--out", str(tmp_path / "a.jsonl"), *net(server, tmp_path)])
    first = server.stats.requests
    capsys.readouterr()
    main(["grade", str(src), "--out", str(tmp_path / "b.jsonl"), *net(server, tmp_path)])
    assert server.stats.requests == first
    # A warm cache can hide a broken setting: the summary says where the answers came from.
    assert f"({first} from the cache in {tmp_path / 'cache'})" in capsys.readouterr().out
    main(["grade", str(src), "--out", str(tmp_path / "c.jsonl"), *net(server, tmp_path),
          "--no-cache"])  # fmt: skip
    assert server.stats.requests == 2 * first
    assert "(0 from cache: off (--no-cache))" in capsys.readouterr().out


def test_session_text_reaches_the_server_verbatim(tmp_path: Path, server: FakeOpenAIServer) -> None:
    tricky = '{{ user.name }} {% if x %}y{% endif %} "quoted" it\'s <b>&amp;</b>'
    raw = session("t", answer=tricky)
    raw["trajectory"][0]["content"] = tricky
    src = write_sessions(tmp_path / "s.jsonl", [raw])
    main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), *net(server, tmp_path)])
    bodies = [json.dumps(r.body) for r in server.requests]
    assert len(bodies) == 2
    assert all(json.dumps(tricky)[1:-1] in body for body in bodies)


def test_dry_run_estimates_and_sends_nothing(
    tmp_path: Path, server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(5)])
    out = tmp_path / "o.jsonl"
    assert main(["grade", str(src), "--out", str(out), *net(server, tmp_path), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "dry run: 5 session(s)" in text and "cost $" in text
    assert server.stats.requests == 0 and not out.exists()


@pytest.mark.parametrize(("limit", "says"), [("100", "within it"), ("0.0000001", "over it")])
def test_a_dry_run_with_max_cost_says_whether_the_estimate_fits_it(
    tmp_path: Path,
    server: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    limit: str,
    says: str,
) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(5)])
    out = tmp_path / "o.jsonl"
    code = main(["grade", str(src), "--out", str(out), *net(server, tmp_path),
                 "--dry-run", "--max-cost", limit])  # fmt: skip
    assert code == 0
    assert f"--max-cost ${float(limit):g}: the estimate is {says}" in capsys.readouterr().out
    assert server.stats.requests == 0


def test_max_cost_stops_early_with_exit_4_and_a_resumable_file(
    tmp_path: Path, server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(40)])
    out = tmp_path / "o.jsonl"
    code = main(["grade", str(src), "--out", str(out), *net(server, tmp_path),
                 "--max-cost", "0.0015", "--concurrency", "1"])  # fmt: skip
    assert code == 4
    assert "--max-cost" in capsys.readouterr().err
    done = len(read_results(out))
    assert 0 < done < 40
    assert main(["grade", str(src), "--out", str(out), *net(server, tmp_path)]) == 0
    assert len(read_results(out)) == 40


def test_a_rate_limited_server_still_gets_every_session_graded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(30)])
    out = tmp_path / "o.jsonl"
    with FakeOpenAIServer(body_responder, latency=0.02, max_concurrent=3, retry_after=0.05) as srv:
        code = main(["grade", str(src), "--out", str(out), *net(srv, tmp_path, "--no-cache"),
                     "--concurrency", "12"])  # fmt: skip
        assert srv.stats.rate_limited > 0
    results = read_results(out)
    assert code == 0
    assert len(results) == 30 and all(r.error is None for r in results)


@pytest.mark.parametrize(
    ("status", "needle"), [(503, "no successful judge call"), (401, "rejected")]
)
def test_a_provider_that_is_down_stops_the_run_with_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    status: int, needle: str,
) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(50)])
    with FakeOpenAIServer(body_responder, fail_status=status, retry_after=0) as srv:
        code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"),
                     *net(srv, tmp_path, "--retries", "1", "--down-after", "0")])  # fmt: skip
        sent = srv.stats.requests
    err = capsys.readouterr().err
    assert code == 3
    assert needle in err and "run the same command again to resume" in err
    assert SECRET not in err
    assert sent < 50


def test_selection_by_metadata(tmp_path: Path) -> None:
    out = tmp_path / "smoke.jsonl"
    replay = ["--replay", str(FIXTURES / "recordings"), "--quiet"]
    sessions = str(FIXTURES / "sessions.jsonl")
    code = main(["grade", sessions, "--out", str(out), *REPLAY, *replay, "--where", "tier=smoke"])
    assert code == 0
    results = read_results(out)
    lines = [json.loads(line) for line in (FIXTURES / "sessions.jsonl").open()]
    smoke = [s["id"] for s in lines if s["metadata"].get("tier") == "smoke"]
    assert len(smoke) == 6  # the fixture has both tiers: the filter must drop something
    assert [r.session_id for r in results] == smoke  # every smoke session, nothing else


@pytest.mark.parametrize(
    "argv",
    [
        ["--concurrency", "0"],
        ["--record", "a", "--replay", "b"],
        ["--provider", "nope"],
    ],
)
def test_bad_flags_are_one_line_errors_with_exit_2(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_sessions(tmp_path / "s.jsonl", [session()])
    code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "m", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("research-judge grade: error:") and "\n" not in err


def test_a_max_cost_below_the_first_session_says_so_with_exit_4_and_sends_nothing(
    tmp_path: Path, server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # The budget stops the run before any session is written: there is no results file yet,
    # and the summary must not fail reading one (it used to exit 2, "cannot read results").
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(3)])
    out = tmp_path / "o.jsonl"
    code = main(["grade", str(src), "--out", str(out), *net(server, tmp_path),
                 "--max-cost", "0.0000001"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 4, err
    assert "--max-cost $1e-07 reached; 3 session(s) not sent" in err
    assert "cannot read results" not in err
    assert server.stats.requests == 0


def test_a_max_cost_of_zero_is_refused_not_taken_as_no_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.jsonl"
    replay = ["--replay", str(FIXTURES / "recordings"), "--quiet"]
    code = main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), *REPLAY, *replay,
                 "--max-cost", "0"])  # fmt: skip
    assert code == 2
    assert "--max-cost must be positive, got 0" in capsys.readouterr().err
    assert not out.exists()


def test_progress_goes_to_stderr_as_plain_lines_when_not_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    code = main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), *REPLAY,
                 "--replay", str(FIXTURES / "recordings")])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    assert "\r" not in captured.err
    done = [line for line in captured.err.splitlines() if line.startswith("done: ")]
    assert len(done) == 1 and "20/20" in done[0] and "errors 0" in done[0]
    assert "done: " not in captured.out  # stdout keeps only the summary


def test_a_dry_run_names_bad_lines_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = FIXTURES / "bad_sessions.jsonl"
    code = main(["grade", str(bad), "--out", str(tmp_path / "o.jsonl"), "--provider", "openai",
                 "--model", "gpt-4o-mini", "--dry-run"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 2
    assert "dry run: 3 session(s)" in captured.out
    assert f"{bad}:2: not valid JSON" in captured.err


def test_a_dry_run_writes_bad_lines_to_the_error_stream_it_was_given(tmp_path: Path) -> None:
    bad = FIXTURES / "bad_sessions.jsonl"
    args = build_parser().parse_args(["grade", str(bad), "--out", str(tmp_path / "o.jsonl"),
                                      "--model", "gpt-4o-mini", "--dry-run"])  # fmt: skip
    err, out = io.StringIO(), io.StringIO()
    assert asyncio.run(execute(args, err, out)) == 2
    assert f"{bad}:2: not valid JSON" in err.getvalue()
    assert "not valid JSON" not in out.getvalue()
