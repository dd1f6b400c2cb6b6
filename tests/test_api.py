"""The Python API (contract section 10): the verbs as functions, the CLI's chain and output."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import pytest

import research_judge as rj
from research_judge.cli import main
from research_judge.errors import InvalidSessionsError, UserError
from research_judge.results.model import read_results
from research_judge.sessions.model import Session
from research_judge.testing.fake_openai import FakeOpenAIServer
from results_support import make_result, write_results

from support import body_responder, session, write_sessions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPLAY: dict[str, Any] = {
    "provider": "scripted",
    "model": "authored-lenient-judge",
    "replay": FIXTURES / "recordings",
}


def fixture_sessions() -> list[dict[str, Any]]:
    lines = (FIXTURES / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# --- grade ------------------------------------------------------------------------------------


def test_a_rate_limited_server_still_grades_every_session_priced_and_in_order(
    tmp_path: Path,
) -> None:
    sessions = [session(f"s-{i:02d}", refs=1 + i % 3) for i in range(24)]
    with FakeOpenAIServer(body_responder, latency=0.02, max_concurrent=3, retry_after=0.05) as srv:
        results = rj.grade(
            sessions,
            model="gpt-4.1-mini",
            base_url=srv.base_url,
            api_key="sk-test-api",
            concurrency=12,
            cache_dir=tmp_path / "cache",
        )
        rate_limited = srv.stats.rate_limited
    assert rate_limited > 0  # the server really pushed back
    assert [r.session_id for r in results] == [s["id"] for s in sessions]
    assert all(r.error is None and r.verdict in ("pass", "fail") for r in results)
    assert all(r.usage.cost_usd is not None and r.usage.cost_usd > 0 for r in results)
    assert all(r.usage.calls == 2 and r.usage.cache_hits == 0 for r in results)


def test_a_provider_stop_raises_with_the_sessions_graded_before_it(tmp_path: Path) -> None:
    # The provider is called down after 10 failed requests in a row: 16 sessions get there.
    sessions = [session(f"s-{i:02d}") for i in range(16)]
    ids = [s["id"] for s in sessions]
    options: dict[str, Any] = {
        "model": "gpt-4.1-mini",
        "api_key": "sk-test-api",
        "cache_dir": tmp_path / "cache",
        "retries": 0,
        "down_after": 0,
        "concurrency": 1,
    }
    with FakeOpenAIServer(body_responder, retry_after=0) as srv:
        rj.grade(sessions[:3], base_url=srv.base_url, **options)  # now in the cache
        srv.fail_status = 503
        with pytest.raises(rj.ProviderDownError) as stop:
            rj.grade(sessions, base_url=srv.base_url, **options)
    graded = stop.value.results
    # What was graded before the stop comes back, in input order, as a results file holds it.
    assert [r.session_id for r in graded] == ids[: len(graded)]
    assert [r.session_id for r in graded if r.error is None] == ids[:3]
    assert all(r.error is not None for r in graded[3:]) and len(graded) < len(ids)


def test_the_cache_is_on_by_default_as_in_the_cli(tmp_path: Path) -> None:
    sessions = [session(f"s-{i}") for i in range(3)]
    with FakeOpenAIServer(body_responder) as srv:
        options: dict[str, Any] = {
            "model": "gpt-4.1-mini",
            "base_url": srv.base_url,
            "api_key": "sk-test-api",
            "cache_dir": tmp_path / "cache",
        }
        first = rj.grade(sessions, **options)
        again = rj.grade(sessions, **options)
        assert srv.stats.requests == 6  # the second run sent nothing
    assert [r.usage.cache_hits for r in again] == [2, 2, 2]
    assert [r.usage.cost_usd for r in again] == [0.0, 0.0, 0.0]
    assert [r.ratios for r in again] == [r.ratios for r in first]


def test_results_equal_the_cli_results_file_line_for_line(tmp_path: Path) -> None:
    out = tmp_path / "cli.jsonl"
    code = main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), "--quiet",
                 "--provider", "scripted", "--model", "authored-lenient-judge",
                 "--replay", str(FIXTURES / "recordings")])  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    results = rj.grade(FIXTURES / "sessions.jsonl", **REPLAY)
    assert [r.to_dict() for r in results] == lines
    first = results[0]
    assert first.ratios is not None and first.scores is not None
    assert (first.ratios.relevance, first.scores["fluff"].score) == (
        lines[0]["ratios"]["relevance"],
        lines[0]["scores"]["fluff"]["score"],
    )


def test_dicts_sessions_and_a_path_grade_alike(tmp_path: Path) -> None:
    dicts = fixture_sessions()[:5]
    path = write_sessions(tmp_path / "five.jsonl", dicts)
    from_dicts = rj.grade(dicts, **REPLAY)
    from_models = rj.grade([Session.model_validate(d) for d in dicts], **REPLAY)
    from_path = rj.grade(str(path), **REPLAY)
    assert [r.to_dict() for r in from_dicts] == [r.to_dict() for r in from_models]
    assert [r.to_dict() for r in from_dicts] == [r.to_dict() for r in from_path]
    assert [r.session_id for r in from_dicts] == [d["id"] for d in dicts]


def test_bad_sessions_are_all_named_and_nothing_is_sent(tmp_path: Path) -> None:
    good = session("s-1")
    missing = {k: v for k, v in session("s-2").items() if k != "answer"}
    with FakeOpenAIServer(body_responder) as srv:
        with pytest.raises(InvalidSessionsError) as caught:
            rj.grade(
                [good, missing, good, 42],  # type: ignore[list-item]
                model="gpt-4.1-mini",
                base_url=srv.base_url,
                api_key="sk-test-api",
                cache=False,
            )
        assert srv.stats.requests == 0
    message = str(caught.value)
    assert "sessions[1]: session 's-2': answer: missing" in message
    assert "sessions[2]: duplicate session id 's-1'" in message
    assert "sessions[3]: expected a dict or a Session, got int" in message
    assert len(caught.value.errors) == 3


def test_bad_lines_of_a_path_are_named_with_file_and_line() -> None:
    with pytest.raises(InvalidSessionsError, match=r"bad_sessions\.jsonl:\d+"):
        rj.grade(FIXTURES / "bad_sessions.jsonl", **REPLAY)


async def test_grade_inside_a_running_loop_says_to_await_agrade() -> None:
    with pytest.raises(UserError, match=r"await research_judge\.agrade\(\.\.\.\)"):
        rj.grade(fixture_sessions()[:1], **REPLAY)
    results = await rj.agrade(fixture_sessions()[:2], **REPLAY)
    assert [r.session_id for r in results] == ["s-0001", "s-0002"]


def test_the_api_functions_survive_importing_their_namesake_subpackages() -> None:
    import importlib

    importlib.import_module("research_judge.validate.report")
    importlib.import_module("research_judge.compare.core")
    assert callable(rj.validate) and callable(rj.compare)
    assert rj.validate.__module__ == rj.compare.__module__ == "research_judge.api"


def test_grade_has_agrade_signature_and_the_cli_defaults() -> None:
    import inspect

    from research_judge.clients.chain import ClientSettings
    from research_judge.judge.grader import JudgeSettings

    params = inspect.signature(rj.grade).parameters
    assert params["concurrency"].default == ClientSettings.concurrency
    assert params["retries"].default == ClientSettings.retries
    assert params["cache"].default is True
    assert params["max_attempts"].default == JudgeSettings.max_attempts
    assert rj.grade.__name__ == "grade"


# --- validate, compare, report, DataFrame -----------------------------------------------------


def test_validate_to_dict_equals_validate_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = rj.grade(FIXTURES / "sessions.jsonl", **REPLAY)
    out = write_results(tmp_path / "results.jsonl", results)
    labels = FIXTURES / "labels.csv"
    assert main(["validate", str(out), "--labels", str(labels), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert rj.validate(results, labels).to_dict() == cli
    assert rj.validate(out, str(labels)).to_dict() == cli

    # A mapping of pass/fail labels is the labels file without its score columns.
    rows = labels.read_text(encoding="utf-8").splitlines()[1:]
    mapping = {row.split(",")[0]: row.split(",")[1] for row in rows}
    plain = rj.validate(results, mapping).to_dict()
    for key in ("n", "raw_agreement", "cohen_kappa", "confusion", "cohen_kappa_ci"):
        assert plain[key] == cli[key], key


def test_validate_refuses_a_label_that_is_not_pass_or_fail() -> None:
    with pytest.raises(UserError, match=r"labels\['s-1'\]: label must be 'pass' or 'fail'"):
        rj.validate([make_result("s-1")], {"s-1": "yes"})


def test_compare_to_dict_equals_compare_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = [make_result(f"s-{i}") for i in range(6)]
    current = [make_result("s-0", "fail", scores=(1, 1, 1)), *baseline[1:]]
    base_file = write_results(tmp_path / "base.jsonl", baseline)
    cur_file = write_results(tmp_path / "cur.jsonl", current)
    assert main(["compare", str(base_file), str(cur_file), "--json"]) == 1
    cli = json.loads(capsys.readouterr().out)
    comparison = rj.compare(baseline, current)
    assert comparison.to_dict() == cli
    assert comparison.regressions == ["s-0"]
    assert rj.compare(base_file, cur_file).to_dict() == cli


def test_results_must_be_result_objects() -> None:
    with pytest.raises(UserError, match=r"results\[0\]: expected a Result, got dict"):
        rj.compare([make_result("s-1").to_dict()], [make_result("s-1")])  # type: ignore[list-item]


def test_write_report_from_memory(tmp_path: Path) -> None:
    results = rj.grade(FIXTURES / "sessions.jsonl", **REPLAY)
    baseline = [r.model_copy(update={"verdict": "pass"}) for r in results]
    labels = {r.session_id: "pass" if i % 2 else "fail" for i, r in enumerate(results)}
    rj.write_report(
        results, html=tmp_path / "r.html", md=tmp_path / "r.md", labels=labels, baseline=baseline
    )
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "kappa" in html.lower()  # the labels were used
    failed = sum(r.verdict == "fail" for r in results)
    assert f"Regressions (pass → fail): {failed}" in md  # so was the baseline


def test_to_dataframe_has_a_row_per_result_and_the_numbers() -> None:
    pandas = pytest.importorskip("pandas")
    results = rj.grade(FIXTURES / "sessions.jsonl", **REPLAY)
    df = rj.to_dataframe(results)
    assert isinstance(df, pandas.DataFrame)
    assert list(df["session_id"]) == [r.session_id for r in results]
    first = results[0]
    assert first.ratios is not None and first.scores is not None
    row = df.iloc[0]
    assert row["relevance"] == first.ratios.relevance
    assert row["effectiveness"] == first.scores["effectiveness"].score
    assert row["verdict"] == first.verdict
    assert row["metadata.domain"] == first.metadata["domain"]
    assert (df["cost_usd"] == 0.0).all()  # replayed: nothing spent


def test_to_dataframe_without_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_pandas(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(UserError, match=r"research-judge\[pandas\]"):
        rj.to_dataframe([make_result("s-1")])


def test_read_results_round_trip_through_to_dict(tmp_path: Path) -> None:
    results = rj.grade(FIXTURES / "sessions.jsonl", **REPLAY)
    back = read_results(write_results(tmp_path / "r.jsonl", results))
    assert [r.to_dict() for r in back] == [r.to_dict() for r in results]


def test_repeats_grades_each_call_k_times_as_the_cli_does(tmp_path: Path) -> None:
    sessions = [session("s-1"), session("s-2")]
    with FakeOpenAIServer(body_responder) as srv:
        results = rj.grade(
            sessions,
            model="gpt-4.1-mini",
            base_url=srv.base_url,
            api_key="sk-test-api",
            cache=False,
            repeats=3,
            temperature=0.7,
        )
        assert srv.stats.requests == 2 * 3 * len(sessions)
    assert [r.session_id for r in results] == ["s-1", "s-2"]
    assert all(r.repeats is not None and len(r.repeats.samples) == 3 for r in results)
    assert all(r.ok for r in results)
