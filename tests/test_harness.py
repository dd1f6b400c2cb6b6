"""The task harness, read against contract section 7 and the worked example of its seed."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from research_judge.errors import ConfigError, InputFileError
from research_judge.harness import (
    InvalidTask,
    Task,
    TaskReport,
    TaskResult,
    fixes,
    format_report,
    load_agent,
    normalise,
    read_report,
    read_tasks,
    regressions,
    report_json,
    run_task,
    run_tasks,
)

REPO = Path(__file__).resolve().parents[1]
FIXTURE_TASKS = REPO / "fixtures" / "tasks" / "tasks.jsonl"


def result(
    answer: str | None = "5",
    *,
    status: str = "final",
    tool_calls: int = 1,
    tools_used: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "status": status,
        "answer": answer,
        "tool_calls": tool_calls,
        "tools_used": ["calculator"] if tools_used is None else tools_used,
    }


def returns(value: object) -> Callable[[str], object]:
    return lambda _input: value


def task(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "t", "input": "What is 2 + 3?", "expected": "5"}
    base.update(overrides)
    return base


@pytest.fixture
def fixture_agents(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_agent prepends the app dir
    return (
        load_agent("fixtures.tasks.agents:v1", app_dir=REPO),
        load_agent("fixtures.tasks.agents:v2", app_dir=REPO),
    )


# --- the worked example ---------------------------------------------------------------------


def test_worked_example_one_pass_one_forbidden_tool_one_crash() -> None:
    tasks = [
        {"id": "add-1", "input": "What is 2 + 3?", "expected": "5", "max_tool_calls": 2},
        {
            "id": "cap",
            "input": "Capital of France?",
            "expected": "Paris",
            "forbidden_tools": ["rm"],
        },
        {"id": "boom", "input": "Crash please", "expected": "anything"},
    ]

    def agent(text: str) -> dict[str, Any]:
        if text.startswith("What"):
            return result("5", tool_calls=1, tools_used=["calculator"])
        if text.startswith("Capital"):
            return result("Paris", tool_calls=2, tools_used=["search", "rm"])
        scripted: dict[str, dict[str, Any]] = {}
        return scripted[text]  # an unscripted input: KeyError, as in the seed

    report = run_tasks(agent, tasks)

    assert report.pass_rate == pytest.approx(1 / 3)
    assert [r.id for r in report.results] == ["add-1", "cap", "boom"]
    assert [r.reasons for r in report.results] == [[], ["forbidden tool: rm"], ["error: KeyError"]]
    assert [r.passed for r in report.results] == [True, False, False]


# --- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Paris.", " paris "),
        ("A  b!", "a b"),
        ("Jane\tAusten\n", "jane austen"),
        ("Wow!!!", "wow"),
        ("Paris. !", "paris"),  # the whole trailing run of . ! and spaces goes
        ("Done...", "done"),
    ],
)
def test_normalise_makes_equal(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("paris?", "paris"),
        ("e.g", "eg"),
        ("e.g.", "e g"),
        ("1,000", "1000"),
        ('"Paris"', "paris"),
        ("Paris, France", "paris france"),
        ("!paris", "paris"),  # only trailing marks go
        ("3.5", "35"),
    ],
)
def test_normalise_keeps_apart(a: str, b: str) -> None:
    assert normalise(a) != normalise(b)


def test_normalise_exact_output() -> None:
    assert normalise("  The   Answer IS 42!. ") == "the answer is 42"
    assert normalise("e.g. this") == "e.g. this"
    assert normalise("!!!") == ""


# --- each check and the order of reasons ------------------------------------------------------


def test_every_reason_at_once_in_contract_order() -> None:
    agent = returns(
        result("six", status="max_steps", tool_calls=3, tools_used=["shell", "rm", "shell", "x"])
    )
    t = task(max_tool_calls=2, forbidden_tools=["sudo", "shell", "rm"])

    assert run_task(agent, t).reasons == [
        "not final",
        "wrong answer",
        "over budget",
        "forbidden tool: rm",
        "forbidden tool: shell",
    ]


def test_forbidden_tools_are_distinct_and_sorted_by_name() -> None:
    used = ["zap", "rm", "zap", "rm", "search"]
    res = run_task(returns(result(tools_used=used)), task(forbidden_tools=["zap", "rm"]))
    assert res.reasons == ["forbidden tool: rm", "forbidden tool: zap"]


def test_allowed_tools_and_unused_forbidden_tools_do_not_fail() -> None:
    res = run_task(returns(result(tools_used=["search"])), task(forbidden_tools=["rm"]))
    assert res.passed and res.reasons == []


@pytest.mark.parametrize(
    ("budget", "calls", "over"),
    [(2, 2, False), (2, 3, True), (0, 0, False), (0, 1, True), (None, 1000, False)],
)
def test_budget_edge(budget: int | None, calls: int, over: bool) -> None:
    t = task() if budget is None else task(max_tool_calls=budget)
    res = run_task(returns(result(tool_calls=calls)), t)
    assert res.reasons == (["over budget"] if over else [])


def test_not_final_with_right_answer_is_only_not_final() -> None:
    assert run_task(returns(result("5", status="running")), task()).reasons == ["not final"]


def test_final_without_answer_is_a_wrong_answer() -> None:
    assert run_task(returns(result(None)), task()).reasons == ["wrong answer"]
    assert run_task(returns(result(None)), task(expected="")).reasons == ["wrong answer"]


def test_answer_compared_after_normalising_both_sides() -> None:
    res = run_task(returns(result("  PARIS.")), task(expected="Paris!"))
    assert res.passed
    assert res.answer == "  PARIS."  # the raw answer is kept for the reader
    assert run_task(returns(result("paris?")), task(expected="Paris")).reasons == ["wrong answer"]


def test_agent_gets_the_task_input() -> None:
    seen: list[str] = []

    def agent(text: str) -> dict[str, Any]:
        seen.append(text)
        return result()

    run_task(agent, task(input="exact input text"))
    assert seen == ["exact input text"]


# --- exceptions ---------------------------------------------------------------------------------


class AgentBroke(RuntimeError):
    pass


def test_exception_replaces_every_other_reason_and_keeps_the_message() -> None:
    def agent(_text: str) -> dict[str, Any]:
        raise AgentBroke("tool server down")

    res = run_task(agent, task(max_tool_calls=0, forbidden_tools=["rm"]))
    assert res.reasons == ["error: AgentBroke"]
    assert res.detail == "tool server down"
    assert not res.passed


def test_one_exception_never_aborts_the_others() -> None:
    calls: list[str] = []

    def agent(text: str) -> dict[str, Any]:
        calls.append(text)
        if text == "b":
            raise ZeroDivisionError("oops")
        return result(text)

    tasks = [task(id=x, input=x, expected=x) for x in ("a", "b", "c")]
    report = run_tasks(agent, tasks)

    assert calls == ["a", "b", "c"]
    assert [r.reasons for r in report.results] == [[], ["error: ZeroDivisionError"], []]
    assert report.pass_rate == pytest.approx(2 / 3)


def test_keyboard_interrupt_is_not_swallowed() -> None:
    def agent(_text: str) -> dict[str, Any]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_task(agent, task())


# --- malformed agent results ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("returned", "problem"),
    [
        (["final", "5"], "expected a dict, got list"),
        (None, "expected a dict, got NoneType"),
        ("5", "expected a dict, got str"),
        ({"status": "final", "answer": "5"}, "missing 'tool_calls', 'tools_used'"),
        ({**result(), "tool_calls": True}, "'tool_calls' must be an int, got bool"),
        ({**result(), "tool_calls": "1"}, "'tool_calls' must be an int, got str"),
        ({**result(), "tool_calls": 1.0}, "'tool_calls' must be an int, got float"),
        ({**result(), "tool_calls": -1}, "'tool_calls' must not be negative, got -1"),
        ({**result(), "tools_used": "rm"}, "'tools_used' must be a list of tool names (strings)"),
        (
            {**result(), "tools_used": ["rm", 3]},
            "'tools_used' must be a list of tool names (strings)",
        ),
        ({**result(), "answer": 5}, "'answer' must be a string or None, got int"),
        ({**result(), "status": None}, "'status' must be a string, got NoneType"),
        (
            {**result(), "status": 1, "tool_calls": None},
            "'status' must be a string, got int; 'tool_calls' must be an int, got NoneType",
        ),
    ],
)
def test_malformed_result_fails_with_one_reason_saying_what(returned: object, problem: str) -> None:
    res = run_task(returns(returned), task(forbidden_tools=["rm"]))
    assert res.reasons == [f"malformed result: {problem}"]
    assert not res.passed


def test_extra_keys_in_agent_result_are_allowed() -> None:
    res = run_task(returns({**result(), "trace": ["..."], "cost": 0.1}), task())
    assert res.passed


def test_tools_used_may_be_a_tuple() -> None:
    res = run_task(returns(result(tools_used=("rm",))), task(forbidden_tools=["rm"]))  # type: ignore[arg-type]
    assert res.reasons == ["forbidden tool: rm"]


# --- results and reports -------------------------------------------------------------------------


def test_seconds_is_the_wall_time_of_the_agent_call() -> None:
    def slow(_text: str) -> dict[str, Any]:
        time.sleep(0.05)
        return result()

    res = run_task(slow, task())
    assert isinstance(res.seconds, float)
    assert 0.05 <= res.seconds < 5


def test_results_and_reports_are_frozen() -> None:
    res = run_task(returns(result()), task())
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.id = "other"  # type: ignore[misc]
    report = TaskReport(results=[res])
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.results = []  # type: ignore[misc]


def test_report_counts() -> None:
    report = TaskReport(
        results=[TaskResult("a"), TaskResult("b", ["wrong answer"]), TaskResult("c")]
    )
    assert (report.n, report.n_passed, report.pass_rate) == (3, 2, pytest.approx(2 / 3))


def test_empty_run_has_pass_rate_zero_with_n_zero_and_warns() -> None:
    with pytest.warns(RuntimeWarning, match="no tasks"):
        report = run_tasks(returns(result()), [])
    assert report.n == 0
    assert report.pass_rate == 0.0
    assert isinstance(report.pass_rate, float)


def test_report_round_trips_through_json() -> None:
    scripted = {"a": result("a")}
    report = run_tasks(
        lambda t: scripted[t],
        [task(id=x, input=x, expected=x) for x in ("a", "b")],
        label="pkg.mod:agent",
    )
    again = TaskReport.from_dict(json.loads(report.to_json()))
    assert again == report
    assert again.results[1].reasons == ["error: KeyError"]
    assert again.results[1].detail == "'b'"


def test_from_dict_ignores_comparison_keys_but_refuses_nonsense() -> None:
    data = TaskReport(results=[TaskResult("a")]).to_dict()
    extended = {**data, "regressions": ["a"], "fixes": [], "input_errors": []}
    assert TaskReport.from_dict(extended).results == [TaskResult("a")]

    bad_passed = {"results": [{"id": "a", "passed": True, "reasons": ["wrong answer"]}]}
    with pytest.raises(ValueError, match="'passed' disagrees"):
        TaskReport.from_dict(bad_passed)
    duplicated = {"results": [{"id": "a", "reasons": []}, {"id": "a", "reasons": []}]}
    with pytest.raises(ValueError, match="duplicate task id 'a'"):
        TaskReport.from_dict(duplicated)
    with pytest.raises(ValueError, match="results"):
        TaskReport.from_dict({"n": 3})
    with pytest.raises(ValueError):
        TaskReport.from_dict([1, 2])


def test_read_report_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"old\.json:1: not valid JSON"):
        read_report(path)
    path.write_text('{"results": [{"id": 1}]}', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"old\.json: not a task report: results\.0\.id"):
        read_report(path)
    with pytest.raises(InputFileError, match="cannot read report"):
        read_report(tmp_path / "missing.json")


# --- regressions and fixes -----------------------------------------------------------------------


def test_stable_pass_rate_hides_one_regression_and_one_fix(fixture_agents: tuple[Any, Any]) -> None:
    v1, v2 = fixture_agents
    tasks = read_tasks(FIXTURE_TASKS).tasks
    old, new = run_tasks(v1, tasks), run_tasks(v2, tasks)

    assert old.pass_rate == new.pass_rate == 0.5
    assert regressions(old, new) == ["multiply"]
    assert fixes(old, new) == ["author"]
    assert regressions(new, old) == ["author"]
    assert regressions(old, old) == [] and fixes(old, old) == []


def test_fixture_agents_show_every_kind_of_reason(fixture_agents: tuple[Any, Any]) -> None:
    tasks = read_tasks(FIXTURE_TASKS).tasks
    reasons = {
        reason.split(":")[0]
        for agent in fixture_agents
        for res in run_tasks(agent, tasks).results
        for reason in res.reasons
    }
    expected = {"not final", "wrong answer", "over budget", "forbidden tool", "error"}
    assert expected | {"malformed result"} == reasons


def test_regressions_follow_new_task_order_and_ignore_unshared_ids() -> None:
    old = TaskReport([TaskResult("a"), TaskResult("b"), TaskResult("c"), TaskResult("gone")])
    new = TaskReport(
        [
            TaskResult("c", ["wrong answer"]),
            TaskResult("new", ["not final"]),
            TaskResult("a", ["over budget"]),
            TaskResult("b"),
        ]
    )
    assert regressions(old, new) == ["c", "a"]
    assert fixes(new, old) == ["a", "c"]  # in the second report's order


# --- validating tasks ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "t", "input": "x"}, "missing field 'expected'"),
        (task(expected=5), "'expected': Input should be a valid string (got 5)"),
        (task(max_tool_calls=-1), "'max_tool_calls': Input should be greater than or equal to 0"),
        (task(max_tool_calls=True), "'max_tool_calls'"),
        (task(max_tool_calls="3"), "'max_tool_calls'"),
        (task(forbidden_tools="rm"), "'forbidden_tools'"),
        (task(forbiden_tools=["rm"]), "unknown field 'forbiden_tools'"),
        (task(id=""), "'id'"),
    ],
)
def test_invalid_task_dict_raises_before_the_agent_runs(bad: dict[str, Any], message: str) -> None:
    called: list[str] = []

    def agent(text: str) -> dict[str, Any]:
        called.append(text)
        return result()

    with pytest.raises(InvalidTask) as info:
        run_task(agent, bad)
    assert str(info.value).startswith(f"task {bad['id']!r}: ")
    assert message in str(info.value)
    assert called == []


def test_invalid_task_without_an_id_is_named_by_position_only() -> None:
    with pytest.raises(InvalidTask) as info:
        run_task(returns(result()), {"input": "x", "expected": "5"})
    assert str(info.value) == "task: missing field 'id'"


@pytest.mark.parametrize("names", [("rm",), {"rm"}, ["rm"]])
def test_forbidden_tools_may_be_any_collection_from_python(names: object) -> None:
    res = run_task(returns(result(tools_used=["rm", "search"])), task(forbidden_tools=names))
    assert res.reasons == ["forbidden tool: rm"]


def test_duplicate_ids_refused_before_any_task_runs() -> None:
    called: list[str] = []

    def agent(text: str) -> dict[str, Any]:
        called.append(text)
        return result()

    with pytest.raises(InvalidTask, match="duplicate task id 'a'"):
        run_tasks(agent, [task(id="a"), task(id="b"), task(id="a")])
    assert called == []


def test_task_objects_are_accepted_as_is() -> None:
    t = Task(id="t", input="q", expected="5", max_tool_calls=1, forbidden_tools=("rm",))
    assert run_task(returns(result(tools_used=["rm"])), t).reasons == ["forbidden tool: rm"]


def test_read_tasks_reports_each_bad_line_and_keeps_the_good(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    lines = [
        json.dumps(task(id="ok-1")),
        "",
        "{not json",
        json.dumps({"id": "no-expected", "input": "x"}),
        json.dumps(task(id="ok-1", input="again")),
        json.dumps(["a", "list"]),
        json.dumps(task(id="typed", max_tool_calls="2")),
        json.dumps(task(id="ok-2", forbidden_tools=["rm"])),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    read = read_tasks(path)

    assert [t.id for t in read.tasks] == ["ok-1", "ok-2"]
    assert read.tasks[1].forbidden_tools == ("rm",)
    messages = [str(p) for p in read.problems]
    assert [p.line for p in read.problems] == [3, 4, 5, 6, 7]
    assert messages[0].startswith(f"{path}:3: not valid JSON")
    assert messages[1] == f"{path}:4: missing field 'expected'"
    assert messages[2] == f"{path}:5: duplicate task id 'ok-1' (first on line 1)"
    assert messages[3] == f"{path}:6: a task must be a JSON object, got array"
    assert messages[4].startswith(f"{path}:7: 'max_tool_calls': ")


def test_read_tasks_refuses_an_empty_or_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"empty\.jsonl: no tasks in file"):
        read_tasks(empty)
    with pytest.raises(InputFileError, match="cannot read task file"):
        read_tasks(tmp_path / "absent.jsonl")


def test_fixture_task_file_is_clean() -> None:
    read = read_tasks(FIXTURE_TASKS)
    assert read.problems == []
    assert len(read.tasks) == 8


# --- the table -----------------------------------------------------------------------------------


def test_format_report_rows_and_pass_rate() -> None:
    report = TaskReport(
        [TaskResult("alpha", [], 0.25), TaskResult("b", ["wrong answer", "over budget"], 1.5)]
    )
    lines = format_report(report).splitlines()
    assert lines[0].split() == ["id", "result", "seconds", "reasons"]
    assert lines[1].split() == ["alpha", "PASS", "0.250", "-"]
    assert lines[2].split(None, 3) == ["b", "FAIL", "1.500", "wrong answer; over budget"]
    assert lines[-1] == "pass rate: 1/2 (50.0%)"
    assert "regressions" not in format_report(report)


def test_format_report_against_a_baseline() -> None:
    old = TaskReport([TaskResult("a"), TaskResult("b", ["not final"]), TaskResult("old")])
    new = TaskReport([TaskResult("a", ["wrong answer"]), TaskResult("b"), TaskResult("fresh")])
    text = format_report(new, baseline=old)
    assert "baseline pass rate: 2/3 (66.7%) (change +0.0 points)" in text
    assert "regressions (1): a" in text
    assert "fixes (1): b" in text
    assert "only in baseline (1): old" in text
    assert "not in baseline (1): fresh" in text
    same = format_report(old, baseline=old)
    assert "regressions (0): none" in same and "only in baseline" not in same


def test_report_json_against_a_baseline_lists_the_unshared_ids() -> None:
    old = TaskReport([TaskResult("gone"), TaskResult("a"), TaskResult("b", ["not final"])], "v1")
    new = TaskReport([TaskResult("b"), TaskResult("fresh", ["wrong answer"]), TaskResult("a")])
    data = report_json(new, baseline=old, input_errors=["t.jsonl:3: bad"])
    assert data["baseline"] == {"agent": "v1", "n": 3, "n_passed": 2, "pass_rate": 2 / 3}
    assert (data["regressions"], data["fixes"]) == ([], ["b"])
    assert data["only_in_baseline"] == ["gone"]
    assert data["only_in_current"] == ["fresh"]
    assert data["input_errors"] == ["t.jsonl:3: bad"]
    assert "baseline" not in report_json(new) and "only_in_current" not in report_json(new)


def test_format_report_of_nothing() -> None:
    assert "pass rate: 0/0 (no tasks)" in format_report(TaskReport([]))


# --- resolving an agent spec ---------------------------------------------------------------------


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("harness_spec_agent", "harness_spec_broken", "harness_spec_needs_dep"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    (tmp_path / "harness_spec_agent.py").write_text(
        "class Bot:\n"
        "    @staticmethod\n"
        "    def run(text):\n"
        "        return {'status': 'final', 'answer': text, 'tool_calls': 0, 'tools_used': []}\n"
        "VALUE = 3\n",
        encoding="utf-8",
    )
    (tmp_path / "harness_spec_broken.py").write_text("raise RuntimeError('bad config')\n")
    (tmp_path / "harness_spec_needs_dep.py").write_text("import harness_no_such_dependency\n")
    return tmp_path


def test_load_agent_resolves_a_dotted_attribute(agent_dir: Path) -> None:
    agent = load_agent("harness_spec_agent:Bot.run", app_dir=agent_dir)
    assert run_task(agent, task(input="5")).passed


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("harness_spec_agent", "expected 'package.module:function'"),
        ("harness_spec_agent:", "expected 'package.module:function'"),
        (":run", "expected 'package.module:function'"),
        ("a:b:c", "expected 'package.module:function'"),
        ("harness_no_such_module:run", "no module named 'harness_no_such_module'"),
        ("harness_spec_agent:missing", "'harness_spec_agent' has no 'missing'"),
        ("harness_spec_agent:VALUE", "'VALUE' is a int, not a callable"),
        ("harness_spec_broken:run", "importing 'harness_spec_broken' failed: RuntimeError"),
        ("harness_spec_needs_dep:run", "No module named 'harness_no_such_dependency'"),
    ],
)
def test_load_agent_bad_specs_are_config_errors(agent_dir: Path, spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_agent(spec, app_dir=agent_dir)
    text = str(info.value)
    assert text.startswith(f"--agent {spec!r}: ")
    assert message in text
    assert "\n" not in text
