"""`research-judge tasks run` end to end, through ``research_judge.cli.main``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.harness import TaskReport

REPO = Path(__file__).resolve().parents[1]
TASKS = str(REPO / "fixtures" / "tasks" / "tasks.jsonl")
V1 = "fixtures.tasks.agents:v1"
V2 = "fixtures.tasks.agents:v2"


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    # The agent spec is resolved from the current directory, as a user at the repo root would.
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sys, "path", list(sys.path))


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(["tasks", "run", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def saved_baseline(capsys: pytest.CaptureFixture[str], tmp_path: Path, agent: str) -> Path:
    """Run ``agent`` on the fixture tasks with --json and save the report, as a user would."""
    code, data = run_json(capsys, TASKS, "--agent", agent)
    assert code == 1  # half the fixture tasks fail, by design
    path = tmp_path / f"{agent.rpartition(':')[2]}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_table_lists_every_task_in_order_with_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tasks", "run", TASKS, "--agent", V1])
    out = capsys.readouterr().out
    rows = out.splitlines()

    assert code == 1  # 4 of 8 failed and no baseline: a CI run fails, as pytest's would
    assert rows[0].split() == ["id", "result", "seconds", "reasons"]
    ids = ["add-small", "capital-france", "multiply", "author", "count-logs", "survey"]
    ids += ["exchange-rate", "largest-planet"]
    assert [row.split()[0] for row in rows[1:9]] == ids
    by_id = {row.split()[0]: row for row in rows[1:9]}
    assert by_id["add-small"].split()[1] == "PASS"
    assert by_id["count-logs"].split()[1] == "FAIL"
    assert by_id["count-logs"].endswith("forbidden tool: rm; forbidden tool: shell")
    assert by_id["exchange-rate"].endswith("error: KeyError")
    assert "pass rate: 4/8 (50.0%)" in rows
    assert "regressions" not in out


def test_json_report_is_a_baseline_and_a_regression_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, data = run_json(capsys, TASKS, "--agent", V1)
    assert code == 1
    assert data["pass_rate"] == 0.5 and data["n"] == 8 and data["agent"] == V1
    assert "regressions" not in data
    baseline = tmp_path / "v1.json"
    baseline.write_text(json.dumps(data), encoding="utf-8")

    code = main(["tasks", "run", TASKS, "--agent", V2, "--baseline", str(baseline)])
    out = capsys.readouterr().out

    assert code == 1
    assert "pass rate: 4/8 (50.0%)" in out
    assert "baseline pass rate: 4/8 (50.0%) (change +0.0 points)" in out
    assert "regressions (1): multiply" in out
    assert "fixes (1): author" in out


def test_json_with_baseline_carries_the_comparison_and_serves_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first = saved_baseline(capsys, tmp_path, V1)

    code, v2 = run_json(capsys, TASKS, "--agent", V2, "--baseline", str(first))
    assert code == 1
    assert v2["regressions"] == ["multiply"]
    assert v2["fixes"] == ["author"]
    assert v2["only_in_baseline"] == [] and v2["only_in_current"] == []
    assert v2["baseline"] == {"agent": V1, "n": 8, "n_passed": 4, "pass_rate": 0.5}
    assert TaskReport.from_dict(v2).n == 8

    # The comparison output, saved, is itself a valid baseline: v2 against v2 is clean.
    second = tmp_path / "v2.json"
    second.write_text(json.dumps(v2), encoding="utf-8")
    code, again = run_json(capsys, TASKS, "--agent", V2, "--baseline", str(second))
    assert code == 0
    assert again["regressions"] == [] and again["fixes"] == []


def test_fixes_alone_exit_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    baseline = saved_baseline(capsys, tmp_path, V2)
    # Against v2, v1 regresses "author"; drop that task so only the fix of "multiply" remains.
    lines = Path(TASKS).read_text(encoding="utf-8").splitlines()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(x for x in lines if '"author"' not in x) + "\n", encoding="utf-8")

    code = main(["tasks", "run", str(tasks), "--agent", V1, "--baseline", str(baseline)])
    out = capsys.readouterr().out
    assert code == 0
    assert "regressions (0): none" in out
    assert "fixes (1): multiply" in out
    assert "only in baseline (1): author" in out


def test_without_a_baseline_any_failed_task_exits_1_and_says_which(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = Path(TASKS).read_text(encoding="utf-8").splitlines()
    passing = tmp_path / "passing.jsonl"
    passing.write_text(
        "\n".join(x for x in lines if '"add-small"' in x or '"capital-france"' in x) + "\n",
        encoding="utf-8",
    )
    assert main(["tasks", "run", str(passing), "--agent", V1]) == 0
    assert "failing" not in capsys.readouterr().err

    assert main(["tasks", "run", TASKS, "--agent", V1]) == 1
    err = capsys.readouterr().err
    assert "failing: 4 of 8 task(s) failed: author, count-logs, survey, exchange-rate" in err


def test_with_a_baseline_known_failures_are_allowed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baseline = saved_baseline(capsys, tmp_path, V1)
    # v1 against itself: the same 4 tasks fail, none regressed.
    assert main(["tasks", "run", TASKS, "--agent", V1, "--baseline", str(baseline)]) == 0


@pytest.mark.parametrize(
    ("bar", "code"), [("0.5", 0), ("0.51", 1), ("0", 0)], ids=["at", "above", "zero"]
)
def test_min_pass_rate_is_a_gate_of_its_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bar: str, code: int
) -> None:
    baseline = saved_baseline(capsys, tmp_path, V1)  # pass rate 4/8, nothing regresses
    argv = ["tasks", "run", TASKS, "--agent", V1, "--baseline", str(baseline)]
    assert main([*argv, "--min-pass-rate", bar]) == code
    if code:
        assert "pass rate 0.500 is below --min-pass-rate 0.51" in capsys.readouterr().err


@pytest.mark.parametrize("bar", ["1.5", "-0.1", "nan", "half"])
def test_min_pass_rate_outside_0_to_1_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], bar: str
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["tasks", "run", TASKS, "--agent", V1, "--min-pass-rate", bar])
    assert exc.value.code == 2
    assert "--min-pass-rate" in capsys.readouterr().err


def test_bad_task_lines_are_reported_and_good_tasks_still_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        '{"id": "add-small", "input": "What is 2 + 3?", "expected": "5"}\n'
        "not json at all\n"
        '{"id": "x", "input": "What is 2 + 3?"}\n'
        '{"id": "add-small", "input": "What is 2 + 3?", "expected": "5"}\n'
        '{"id": "y", "input": "What is 2 + 3?", "expected": "5", "max_tool_calls": "one"}\n'
        '{"id": "largest-planet", "input": "Which planet in the solar system is the largest?",'
        ' "expected": "Jupiter"}\n',
        encoding="utf-8",
    )

    code = main(["tasks", "run", str(tasks), "--agent", V1])
    captured = capsys.readouterr()

    assert code == 2
    err = captured.err.splitlines()
    assert err[0].startswith(f"{tasks}:2: not valid JSON")
    assert err[1] == f"{tasks}:3: missing field 'expected'"
    assert err[2] == f"{tasks}:4: duplicate task id 'add-small' (first on line 1)"
    assert err[3].startswith(f"{tasks}:5: 'max_tool_calls': ")
    assert len(err) == 4
    rows = [row.split()[:2] for row in captured.out.splitlines()[1:3]]
    assert rows == [["add-small", "PASS"], ["largest-planet", "PASS"]]
    assert "pass rate: 2/2 (100.0%)" in captured.out


def test_bad_input_outranks_a_regression(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baseline = saved_baseline(capsys, tmp_path, V1)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(Path(TASKS).read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")

    code, data = run_json(capsys, str(tasks), "--agent", V2, "--baseline", str(baseline))

    assert code == 2
    assert data["regressions"] == ["multiply"]
    assert data["input_errors"] == [
        f"{tasks}:9: not valid JSON (Expecting property name enclosed in double quotes)"
    ]


def test_only_bad_lines_still_prints_an_empty_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("[]\n", encoding="utf-8")
    code = main(["tasks", "run", str(tasks), "--agent", V1])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip() == f"{tasks}:1: a task must be a JSON object, got array"
    assert "pass rate: 0/0 (no tasks)" in captured.out


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("fixtures.tasks.agents", "expected 'package.module:function'"),
        ("fixtures.tasks.nope:v1", "no module named 'fixtures.tasks.nope'"),
        ("fixtures.tasks.agents:v9", "'fixtures.tasks.agents' has no 'v9'"),
    ],
)
def test_bad_agent_spec_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    code = main(["tasks", "run", TASKS, "--agent", spec])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"research-judge tasks: error: --agent {spec!r}: ")
    assert message in lines[0]


@pytest.mark.parametrize("content", ["{", '{"results": "no"}'])
def test_bad_baseline_names_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str
) -> None:
    baseline = tmp_path / "old.json"
    baseline.write_text(content, encoding="utf-8")
    code = main(["tasks", "run", TASKS, "--agent", V1, "--baseline", str(baseline)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"research-judge tasks: error: {baseline}" in err


def test_missing_task_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["tasks", "run", str(tmp_path / "none.jsonl"), "--agent", V1])
    assert code == 2
    assert "none.jsonl: cannot read task file" in capsys.readouterr().err


def test_app_dir_and_agent_prints_kept_out_of_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "cli_tasks_chatty_agent", raising=False)
    (tmp_path / "cli_tasks_chatty_agent.py").write_text(
        "def agent(text):\n"
        "    print('thinking about', text)\n"
        "    return {'status': 'final', 'answer': '5', 'tool_calls': 1, 'tools_used': []}\n",
        encoding="utf-8",
    )
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "input": "2 + 3", "expected": "5"}\n', encoding="utf-8")

    argv = [str(tasks), "--agent", "cli_tasks_chatty_agent:agent", "--app-dir", str(tmp_path)]
    code = main(["tasks", "run", *argv, "--json"])
    captured = capsys.readouterr()

    assert code == 0
    assert json.loads(captured.out)["pass_rate"] == 1.0
    assert "thinking about 2 + 3" in captured.err


def test_help_describes_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["tasks", "run", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--agent MODULE:FUNCTION", "--app-dir DIR", "--json", "--baseline OLD.json"):
        assert flag in text
    assert "TASKS.jsonl" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    assert "tasks run an agent on tasks with known answers and find regressions" in top


def test_tasks_needs_an_action(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["tasks"])
    assert info.value.code == 2
