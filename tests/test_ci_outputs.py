"""CI outputs of every verb: JUnit XML (read back with junitparser), the GitHub step summary and
workflow-command annotations, with the environment variables set as GitHub Actions sets them."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase

from research_judge.ci.github import command, escape_data, escape_property
from research_judge.cli import main
from research_judge.results.model import read_results
from results_support import JUDGE, make_result, write_results

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
REPLAY = ["--provider", "scripted", "--model", "authored-lenient-judge", "--quiet"]
REPLAY += ["--replay", str(FIXTURES / "recordings")]


@pytest.fixture(autouse=True)
def _outside_github(monkeypatch: pytest.MonkeyPatch) -> None:
    # The suite itself may run under GitHub Actions: start every test from a clean slate.
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def summary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "step_summary.md"
    path.write_text("earlier step's summary\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    return path


def cases(path: Path | str) -> list[TestCase]:
    xml = JUnitXml.fromfile(str(path))
    return [case for suite in xml for case in suite]


def outcome(case: TestCase) -> str:
    if not case.result:
        return "passed"
    return type(case.result[0]).__name__.lower()


# --- grade ---------------------------------------------------------------------------------------


def test_grade_junit_has_one_case_per_session_and_per_bad_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, junit = tmp_path / "r.jsonl", tmp_path / "grade.xml"
    bad = FIXTURES / "bad_sessions.jsonl"

    code = main(["grade", str(bad), "--out", str(out), *REPLAY, "--junit", str(junit)])

    assert code == 2
    results = read_results(out)
    found = cases(junit)
    by_name = {c.name: c for c in found}
    for r in results:
        case = by_name[r.session_id]
        assert outcome(case) == ("passed" if r.verdict == "pass" else "failure")
        if r.verdict == "fail":
            assert case.result[0].message.startswith("fail: ")
            assert "evidence: " in (case.result[0].text or "")
    line_cases = [c for c in found if c.name.startswith(f"{bad}:")]
    assert sorted(int(c.name.rsplit(":", 1)[1]) for c in line_cases) == [2, 3, 5, 6, 7, 8]
    assert all(isinstance(c.result[0], Error) for c in line_cases)
    assert len(found) == len(results) + 6


def test_grade_fixtures_junit_failures_match_fail_verdicts(tmp_path: Path) -> None:
    out, junit = tmp_path / "r.jsonl", tmp_path / "grade.xml"
    code = main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), *REPLAY])
    assert code == 0
    # A second run resumes everything and still reports every session.
    sessions = str(FIXTURES / "sessions.jsonl")
    main(["grade", sessions, "--out", str(out), *REPLAY, "--junit", str(junit)])
    results = read_results(out)
    xml = JUnitXml.fromfile(str(junit))
    [suite] = list(xml)
    assert suite.tests == len(results) == 20
    assert suite.failures == sum(r.verdict == "fail" for r in results) > 0
    assert suite.errors == 0


def test_grade_appends_its_summary_and_annotates_bad_lines(
    tmp_path: Path,
    summary_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    bad = FIXTURES / "bad_sessions.jsonl"

    code = main(["grade", str(bad), "--out", str(tmp_path / "r.jsonl"), *REPLAY])

    assert code == 2
    text = summary_file.read_text(encoding="utf-8")
    assert text.startswith("earlier step's summary\n")  # appended, never replaced
    assert "#" in text.split("earlier step's summary\n", 1)[1]
    out = capsys.readouterr().out
    annotations = [line for line in out.splitlines() if line.startswith("::")]
    assert f"::error file={escape_property(str(bad))},line=2," in annotations[0]
    assert len([a for a in annotations if a.startswith("::error file=")]) == 6


def test_grade_json_with_junit_on_stdout_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = str(FIXTURES / "sessions.jsonl")
    argv = ["grade", sessions, "--out", str(tmp_path / "r.jsonl"), *REPLAY, "--json"]
    assert main([*argv, "--junit", "-"]) == 2
    assert "--json and --junit - both want stdout" in capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()


# --- tasks ---------------------------------------------------------------------------------------

TASKS = str(FIXTURES / "tasks" / "tasks.jsonl")


@pytest.fixture
def at_repo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield


def test_tasks_junit_on_stdout_one_case_per_task_with_regressions_marked(
    at_repo: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tasks", "run", TASKS, "--agent", "fixtures.tasks.agents:v1", "--json"]) == 1
    baseline = tmp_path / "v1.json"
    baseline.write_text(capsys.readouterr().out, encoding="utf-8")

    code = main(["tasks", "run", TASKS, "--agent", "fixtures.tasks.agents:v2",
                 "--baseline", str(baseline), "--junit", "-"])  # fmt: skip

    captured = capsys.readouterr()
    assert code == 1
    xml_file = tmp_path / "out.xml"
    xml_file.write_text(captured.out, encoding="utf-8")
    found = {c.name: c for c in cases(xml_file)}
    assert list(found) == [json.loads(t)["id"] for t in Path(TASKS).read_text().splitlines()]
    multiply = found["multiply"].result[0]
    assert isinstance(multiply, Failure)
    assert multiply.type == "regression"
    assert multiply.message == "regressed (passed in the baseline): wrong answer"
    assert outcome(found["add-small"]) == "passed"
    assert "pass rate: 4/8" in captured.err  # the table moved to stderr


def test_tasks_agent_errors_are_junit_errors_with_the_exception_message(
    at_repo: None, tmp_path: Path
) -> None:
    junit = tmp_path / "t.xml"
    main(["tasks", "run", TASKS, "--agent", "fixtures.tasks.agents:v1", "--junit", str(junit)])
    errors = [c for c in cases(junit) if c.result and isinstance(c.result[0], Error)]
    assert [c.name for c in errors] == ["exchange-rate"]
    assert errors[0].result[0].message == "error: KeyError"
    assert "JPY" in (errors[0].result[0].text or "")
    # Each task's duration rides on its case (passed, failed or errored alike).
    assert all(c.time is not None and c.time >= 0 for c in cases(junit))
    failed = [c for c in cases(junit) if c.result and isinstance(c.result[0], Failure)]
    assert failed and all(c.result[0].message for c in failed)  # the reasons, as the message


def test_tasks_summary_and_annotations_name_the_regression(
    at_repo: None,
    tmp_path: Path,
    summary_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["tasks", "run", TASKS, "--agent", "fixtures.tasks.agents:v1", "--json"])
    baseline = tmp_path / "v1.json"
    baseline.write_text(capsys.readouterr().out, encoding="utf-8")

    code = main(["tasks", "run", TASKS, "--agent", "fixtures.tasks.agents:v2",
                 "--baseline", str(baseline), "--annotations"])  # fmt: skip

    assert code == 1
    out = capsys.readouterr().out
    assert "::error title=research-judge tasks%3A regression multiply::wrong answer" in out
    summary = summary_file.read_text(encoding="utf-8")
    assert "### research-judge tasks: ❌ regressions" in summary
    assert "- Regressions (1): multiply" in summary


# --- validate ------------------------------------------------------------------------------------


def graded_fixtures(tmp_path: Path) -> Path:
    out = tmp_path / "r.jsonl"
    assert main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), *REPLAY]) == 0
    return out


def test_validate_junit_has_agreement_and_each_criterion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], summary_file: Path
) -> None:
    results, junit = graded_fixtures(tmp_path), tmp_path / "v.xml"
    argv = ["validate", str(results), "--labels", str(FIXTURES / "labels.csv")]
    assert main([*argv, "--bootstrap", "0", "--junit", str(junit)]) == 0
    names = [c.name for c in cases(junit)]
    assert names == ["pass/fail agreement", "effectiveness", "fluff", "structure"]
    agreement = cases(junit)[0]
    assert "cohen kappa" in (agreement.system_out or "")
    assert "### research-judge validate" in summary_file.read_text(encoding="utf-8")


def test_validate_junit_skips_criteria_the_labels_do_not_score(tmp_path: Path) -> None:
    results = graded_fixtures(tmp_path)
    labels = tmp_path / "labels.csv"
    rows = (FIXTURES / "labels.csv").read_text(encoding="utf-8").splitlines()
    labels.write_text("\n".join(",".join(r.split(",")[:2]) for r in rows) + "\n")
    junit = tmp_path / "v.xml"
    argv = ["validate", str(results), "--labels", str(labels), "--bootstrap", "0"]
    main([*argv, "--junit", str(junit)])
    skipped = [c.name for c in cases(junit) if c.result and isinstance(c.result[0], Skipped)]
    assert skipped == ["effectiveness", "fluff", "structure"]


# --- compare -------------------------------------------------------------------------------------


def run_file(path: Path, n_pass: int, n: int = 10, judge: dict[str, object] = JUDGE) -> Path:
    return write_results(
        path,
        [make_result(f"s{i}", "pass" if i < n_pass else "fail", judge=judge) for i in range(n)],
    )


def test_compare_junit_one_case_per_metric_and_the_judge_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cur = run_file(tmp_path / "b.jsonl", 8), run_file(tmp_path / "c.jsonl", 6)
    junit = tmp_path / "c.xml"

    assert main(["compare", str(base), str(cur), "--junit", str(junit)]) == 1

    found = cases(junit)
    assert [c.name for c in found] == [
        "pass_rate", "relevance", "utilization", "grounding",
        "effectiveness", "fluff", "structure", "no regressions", "judge unchanged",
    ]  # fmt: skip
    # 2 of 10 flipped: the pass rate's drop is within noise (McNemar p = 0.5), so by default
    # its gate only warns; the two regressed sessions fail the run.
    assert outcome(found[0]) == "passed"
    assert "within noise" in (found[0].system_out or "")
    failure = found[7].result[0]
    assert isinstance(failure, Failure)
    assert failure.message == "2 sessions passed in the baseline and fail now"
    assert failure.text == "s6, s7"
    assert [outcome(c) for c in found].count("failure") == 1


def test_fail_on_any_fails_the_pass_rate_gate_as_well(tmp_path: Path) -> None:
    base, cur = run_file(tmp_path / "b.jsonl", 8), run_file(tmp_path / "c.jsonl", 6)
    junit = tmp_path / "c.xml"
    assert main(["compare", str(base), str(cur), "--fail-on", "any", "--junit", str(junit)]) == 1
    found = {c.name: c for c in cases(junit)}
    failure = found["pass_rate"].result[0]
    assert isinstance(failure, Failure)
    assert failure.message.startswith("pass_rate dropped by 0.200 (critical")
    assert "regressions: s6, s7" in (failure.text or "")
    assert outcome(found["no regressions"]) == "failure"


def noisy_structure(path: Path, lowered: int, n: int = 12) -> Path:
    """Every session passes; structure is one step lower (3 -> 2) on the first ``lowered``."""
    return write_results(
        path,
        [make_result(f"s{i}", scores=(3, 2, 2 if i < lowered else 3)) for i in range(n)],
    )


def test_a_drop_within_noise_with_no_regression_warns_and_exits_0_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # structure drops by 0.125 on the 0..1 scale, but only 3 sessions moved: no paired test can
    # call that beyond noise, and no verdict flipped. The demo's own case, in small.
    base, cur = noisy_structure(tmp_path / "b.jsonl", 0), noisy_structure(tmp_path / "c.jsonl", 3)
    assert main(["compare", str(base), str(cur)]) == 0
    captured = capsys.readouterr()
    assert "not failing: structure dropped by 0.125" in captured.err
    assert "within noise" in captured.err
    assert "WARNING: 1 metric dropped by more than 0.05 (structure within noise)" in captured.out

    assert main(["compare", str(base), str(cur), "--fail-on", "any"]) == 1


def test_a_significant_drop_fails_by_default_without_any_regression(tmp_path: Path) -> None:
    base = noisy_structure(tmp_path / "b.jsonl", 0, n=20)
    cur = noisy_structure(tmp_path / "c.jsonl", 12, n=20)  # 12 of 20 down, none up: p < 0.001
    assert main(["compare", str(base), str(cur)]) == 1


def test_one_regression_fails_by_default_even_when_a_fix_offsets_the_pass_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write_results(tmp_path / "b.jsonl", [make_result("a"), make_result("b", "fail")])
    cur = write_results(tmp_path / "c.jsonl", [make_result("a", "fail"), make_result("b")])
    assert main(["compare", str(base), str(cur), "--annotations"]) == 1
    out = capsys.readouterr().out
    assert "no regressions::1 session passed in the baseline and fail now" in out


def test_fail_on_significant_still_fails_a_significant_drop(tmp_path: Path) -> None:
    base = run_file(tmp_path / "b.jsonl", 40, n=40)
    cur = run_file(tmp_path / "c.jsonl", 20, n=40)
    assert main(["compare", str(base), str(cur), "--fail-on", "significant"]) == 1


def test_compare_help_states_the_default_rule(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit 1 when any session regressed" in text
    assert "a drop within noise with no regression is printed as a warning and exits 0" in text
    assert "(default significant)" in text


def test_a_changed_judge_fails_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = {**JUDGE, "model": "judge-2", "fingerprint": "f2"}
    base = run_file(tmp_path / "b.jsonl", 8)
    cur = run_file(tmp_path / "c.jsonl", 8, judge=other)

    assert main(["compare", str(base), str(cur), "--annotations"]) == 1
    captured = capsys.readouterr()
    assert "failing: judge changed" in captured.err
    assert "::error title=research-judge compare%3A judge unchanged::judge changed" in captured.out

    assert main(["compare", str(base), str(cur), "--allow-judge-change"]) == 0
    assert "not failing: judge changed" in capsys.readouterr().err

    # --rejudged (the baseline regraded by the new judge) separates the two: it passes too.
    rejudged = run_file(tmp_path / "rejudged.jsonl", 8, judge=other)
    assert main(["compare", str(base), str(cur), "--rejudged", str(rejudged)]) == 0
    assert "not failing: judge changed" in capsys.readouterr().err
    junit = tmp_path / "c.xml"
    main(["compare", str(base), str(cur), "--junit", str(junit)])
    [gate] = [c for c in cases(junit) if c.name == "judge unchanged"]
    assert isinstance(gate.result[0], Failure) and "judge changed" in gate.result[0].message


def test_a_changed_prompt_is_a_changed_judge(tmp_path: Path) -> None:
    prompts = {**JUDGE["prompts"], "scoring": {"name": "scoring", "sha256": "c" * 64}}
    other = {**JUDGE, "prompts": prompts, "fingerprint": "f3"}
    base = run_file(tmp_path / "b.jsonl", 8)
    cur = run_file(tmp_path / "c.jsonl", 8, judge=other)
    assert main(["compare", str(base), str(cur)]) == 1


def test_compare_summary_is_appended_with_ids_made_inert(
    tmp_path: Path, summary_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = "@octocat <img src=x>"
    base = write_results(tmp_path / "b.jsonl", [make_result(hostile, "pass")] + [
        make_result(f"s{i}") for i in range(5)])  # fmt: skip
    cur = write_results(tmp_path / "c.jsonl", [make_result(hostile, "fail")] + [
        make_result(f"s{i}") for i in range(5)])  # fmt: skip
    main(["compare", str(base), str(cur)])
    text = summary_file.read_text(encoding="utf-8")
    assert "### research-judge compare: ❌ failed" in text
    assert "<img" not in text and "@octocat" not in text


def test_annotations_follow_github_actions_and_the_flag_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cur = run_file(tmp_path / "b.jsonl", 8), run_file(tmp_path / "c.jsonl", 6)
    main(["compare", str(base), str(cur)])
    assert "::error" not in capsys.readouterr().out

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    main(["compare", str(base), str(cur)])
    out = capsys.readouterr().out
    assert "::warning title=research-judge compare%3A pass_rate::pass_rate dropped" in out
    assert "::error title=research-judge compare%3A no regressions::2 sessions passed" in out
    assert "::error title=regression%3A s6::passed in the baseline, fails now" in out

    main(["compare", str(base), str(cur), "--no-annotations"])
    assert "::error" not in capsys.readouterr().out

    # With JSON on stdout the commands go to stderr, so the JSON stays parseable.
    main(["compare", str(base), str(cur), "--json"])
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert "::error" in captured.err


def test_junit_to_a_directory_is_an_output_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = run_file(tmp_path / "b.jsonl", 8)
    assert main(["compare", str(base), str(base), "--junit", str(tmp_path)]) == 5
    assert "not a regular file" in capsys.readouterr().err


# --- escaping ------------------------------------------------------------------------------------


def test_workflow_commands_escape_percent_cr_lf_and_property_separators() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    line = command("error", "line one\n::warning::forged", title="id: a,b")
    # The runner shows %0A as a line break: that shown line starts with "\" (the printing rule).
    assert line == "::error title=id%3A a%2Cb::line one%0A\\::warning::forged"
    assert "\n" not in line


def test_session_text_xml_cannot_carry_is_replaced_and_the_file_parses(tmp_path: Path) -> None:
    from research_judge.ci.junit import grade_cases, to_xml

    r = make_result("s\x00-1", "fail", question="nul \x00 esc \x1b ff \ufffe end ]]> <x/>")
    path = tmp_path / "g.xml"
    path.write_text(to_xml("research-judge grade", grade_cases([r])), encoding="utf-8")
    [case] = cases(path)
    assert case.name == "s\\x00-1"  # a control character is shown, as everywhere we print
    text = case.result[0].text or ""
    assert "]]> <x/>" in text and "nul \\x00 esc \\x1b ff \ufffd end" in text


def test_validate_gate_failure_is_annotated_and_a_failed_junit_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, junit = graded_fixtures(tmp_path), tmp_path / "v.xml"
    argv = ["validate", str(results), "--labels", str(FIXTURES / "labels.csv"), "--bootstrap", "0"]

    code = main([*argv, "--min-kappa", "0.99", "--annotations", "--junit", str(junit)])

    assert code == 1
    out = capsys.readouterr().out
    assert "::error title=research-judge validate%3A min-kappa::" in out
    [gate] = [c for c in cases(junit) if c.name == "min-kappa"]
    assert isinstance(gate.result[0], Failure)
    assert "0.99" in gate.result[0].message


def test_grade_judge_errors_are_one_warning_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from support import session, write_sessions

    src = write_sessions(tmp_path / "s.jsonl", [session("never-recorded")])
    empty = tmp_path / "recordings"
    empty.mkdir()
    argv = ["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--quiet"]
    argv += ["--provider", "scripted", "--model", "m", "--replay", str(empty), "--annotations"]
    junit = tmp_path / "grade.xml"

    assert main([*argv, "--junit", str(junit)]) == 6  # good input, a judge error: not 2

    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("::")]
    assert line.startswith("::warning title=research-judge grade%3A judge errors::1 session(s)")
    assert "never-recorded" in line
    # In the JUnit file the session is an error (not a failure), typed by its error_kind.
    [case] = cases(junit)
    assert case.name == "never-recorded" and isinstance(case.result[0], Error)
    assert case.result[0].type == "replay_miss"
    assert "no recorded judge exchange" in (case.result[0].message or "")


def test_bad_input_and_judge_errors_in_one_run_exit_2_and_json_counts_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "recordings"
    empty.mkdir()  # every good session misses its recording: a judge error
    argv = ["grade", str(FIXTURES / "bad_sessions.jsonl"), "--out", str(tmp_path / "o.jsonl")]
    argv += ["--provider", "scripted", "--model", "m", "--replay", str(empty), "--quiet", "--json"]

    assert main(argv) == 2  # the input is the first thing to fix

    summary = json.loads(capsys.readouterr().out)
    assert summary["input_errors"] == 6 and summary["errors"] == 3
    assert summary["error_kinds"] == {"replay_miss": 3}


def test_a_text_block_cannot_be_closed_by_the_text_inside() -> None:
    from research_judge.ci.markdown import text_block

    block = text_block("research-judge stability", "id ```` end\n@someone <b>")
    assert block.startswith("### research-judge stability\n\n`````text\n")
    assert block.endswith("\n`````\n")


def test_stability_appends_its_text_as_a_block(
    tmp_path: Path, summary_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from research_judge.results.model import Result

    def repeated(sid: str, verdicts: list[str]) -> Result:
        data = make_result(sid, verdicts[0]).model_dump()
        data["repeats"] = {
            "k": len(verdicts),
            "aggregation": "test",
            "samples": [
                {"verdict": v, "scores": {"effectiveness": 3, "fluff": 2, "structure": 3}}
                for v in verdicts
            ],
        }
        return Result.model_validate(data)

    runs = [repeated("a", ["pass"] * 3), repeated("b", ["pass", "fail", "pass"])]
    path = write_results(tmp_path / "r.jsonl", runs)
    assert main(["stability", str(path), "--bootstrap", "0"]) == 0
    text = capsys.readouterr().out
    summary = summary_file.read_text(encoding="utf-8")
    assert "### research-judge stability\n\n```text\n" in summary
    assert text.rstrip() in summary


def test_a_provider_down_stop_is_annotated_summarised_and_a_junit_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    summary_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from research_judge.testing.fake_openai import FakeOpenAIServer

    from support import body_responder, session, write_sessions

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(5)])
    junit = tmp_path / "grade.xml"
    with FakeOpenAIServer(body_responder, fail_status=503, retry_after=0) as srv:
        code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--quiet",
                     "--provider", "openai", "--model", "gpt-4o-mini", "--base-url", srv.base_url,
                     "--cache-dir", str(tmp_path / "cache"), "--retries", "0",
                     "--down-after", "0", "--junit", str(junit)])  # fmt: skip
    assert code == 3
    # On stdout, as a finished run's annotations are (stderr when stdout carries --json).
    out = capsys.readouterr().out
    assert "::error title=research-judge grade%3A stopped::provider down: " in out
    # The step summary says why the step failed; the JUnit file holds the stop as an error.
    summary = summary_file.read_text(encoding="utf-8")
    assert summary.startswith("earlier step's summary\n")
    assert "### research-judge grade: stopped\n\nprovider down: " in summary
    [stop] = [c for c in cases(junit) if c.name == "provider"]
    assert isinstance(stop.result[0], Error) and stop.result[0].type == "provider_down"
    assert "rerun the same command to resume" in (stop.result[0].message or "")


def _grade_until_the_provider_stops(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *flags: str,
) -> tuple[int, Path]:
    """Five sessions graded into ``o.jsonl`` by a first run; then a run on those five, twelve new
    ones and a bad line, selecting two old ones and the new ones with ``--where``, against a
    server that now fails every request: it reuses the two, records the new ones it sent as
    judge errors and stops once ten requests in a row have failed."""
    from research_judge.testing.fake_openai import FakeOpenAIServer

    from support import body_responder, session, write_sessions

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    sessions = [session(f"s-{i}") for i in range(17)]
    for i, s in enumerate(sessions):
        s["metadata"]["tier"] = "full" if i in (2, 3, 4) else "smoke"
    out = tmp_path / "o.jsonl"
    argv = ["--out", str(out), "--quiet", "--provider", "openai", "--model", "gpt-4o-mini"]
    argv += ["--cache-dir", str(tmp_path / "cache"), "--retries", "0", "--down-after", "0"]
    argv += []
    first = write_sessions(tmp_path / "first.jsonl", sessions[:5])
    second = write_sessions(tmp_path / "second.jsonl", [sessions[0]], ["{not json"])
    with second.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(s) + "\n" for s in sessions[1:])
    # One server for both runs: its address is part of the judge that --out's results record.
    with FakeOpenAIServer(body_responder, retry_after=0) as srv:
        assert main(["grade", str(first), *argv, "--base-url", srv.base_url]) == 0
        assert len(read_results(out)) == 5
        capsys.readouterr()  # the first run's own outputs
        srv.fail_status = 503
        code = main(["grade", str(second), *argv, "--base-url", srv.base_url,
                     "--where", "tier=smoke", *flags])  # fmt: skip
    return code, second


def _selected_in(out: Path) -> set[str]:
    return {r.session_id for r in read_results(out)} - {"s-2", "s-3", "s-4"}


def test_a_provider_down_stop_reports_only_the_selected_sessions_and_the_bad_lines(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    summary_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    junit = tmp_path / "grade.xml"
    code, second = _grade_until_the_provider_stops(
        tmp_path, monkeypatch, capsys, "--junit", str(junit)
    )

    assert code == 3
    # The same cases a finished run of this selection reports, plus the stop: not s-2..s-4,
    # which --out holds from the first run but --where leaves out.
    found = {c.name: c for c in cases(junit)}
    selected = _selected_in(tmp_path / "o.jsonl")
    assert {"s-0", "s-1"} <= selected
    assert set(found) == selected | {f"{second}:2", "provider"}
    bad = found[f"{second}:2"].result[0]
    assert isinstance(bad, Error) and bad.type == "input"
    # The first run's summary comes first; this run's opens with the stop.
    summary = summary_file.read_text(encoding="utf-8")
    stop = summary.split("### research-judge grade: stopped\n\nprovider down: ", 1)[1]
    assert "## research-judge report" in stop
    assert "s-0" in stop and not {"s-2", "s-3", "s-4"} & set(stop.split())
    bad_line = f"::error file={escape_property(str(second))},line=2,"
    assert any(line.startswith(bad_line) for line in capsys.readouterr().out.splitlines())


def test_a_provider_down_stop_still_prints_the_json_of_what_was_graded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, _ = _grade_until_the_provider_stops(tmp_path, monkeypatch, capsys, "--json")

    assert code == 3
    captured = capsys.readouterr()
    # Stdout is the JSON alone: the annotations go to stderr.
    payload = json.loads(captured.out)
    assert "::error title=research-judge grade%3A stopped::provider down: " in captured.err
    selected = len(_selected_in(tmp_path / "o.jsonl"))  # s-0, s-1 and the new ones sent
    assert payload["sessions"] == selected
    assert payload["errors"] == selected - 2
    assert payload["input_errors"] == 1
    run = payload["run"]
    assert (run["graded"], run["reused"]) == (selected - 2, 2)
    assert run["stopped"] == "provider_down"
    assert run["stop_reason"].startswith("provider down: ")
    assert "rerun the same command to resume" in run["stop_reason"]


def test_a_max_cost_stop_opens_the_step_summary_with_the_stop(
    tmp_path: Path, summary_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(tmp_path / "r.jsonl")]
    argv += ["--provider", "scripted", "--model", "gpt-4.1-mini", "--quiet"]
    argv += ["--replay", str(FIXTURES / "recordings"), "--max-cost", "0.00001", "--annotations"]

    assert main(argv) == 4

    added = summary_file.read_text(encoding="utf-8").split("earlier step's summary\n", 1)[1]
    assert added.startswith("### research-judge grade: stopped\n\n--max-cost reached: ")
    assert "## research-judge report" in added  # then the report of what was graded
    out = capsys.readouterr().out
    assert "::warning title=research-judge grade%3A stopped::--max-cost reached" in out


def test_a_max_cost_stop_names_its_reason_in_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(tmp_path / "r.jsonl")]
    argv += ["--provider", "scripted", "--model", "gpt-4.1-mini", "--quiet", "--json"]
    argv += ["--replay", str(FIXTURES / "recordings"), "--max-cost", "0.00001"]

    assert main(argv) == 4

    run = json.loads(capsys.readouterr().out)["run"]
    assert run["stopped"] == "budget"
    assert run["stop_reason"].startswith("--max-cost $1e-05 reached; ")
    assert run["stop_reason"].endswith(" session(s) not sent")
