"""Harness depth (issue 16): expected tool calls and arguments, difficulty tiers, time budgets.

New reasons come after the contract's, in this order: "wrong tool", "wrong arguments",
"over time"."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.harness import (
    InvalidTask,
    TaskReport,
    format_report,
    read_tasks,
    run_task,
    run_tasks,
)
from research_judge.harness.calls import ToolCall, check_calls, same_json


def agent_making(*calls: dict[str, Any], answer: str = "5", **extra: Any) -> Any:
    def agent(_text: str) -> dict[str, Any]:
        return {
            "status": "final",
            "answer": answer,
            "tool_calls": len(calls),
            "tools_used": [c["tool"] for c in calls],
            "calls": list(calls),
            **extra,
        }

    return agent


def task(**extra: Any) -> dict[str, Any]:
    return {"id": "t", "input": "What is 2 + 3?", "expected": "5", **extra}


SEARCH_X = {"tool": "search", "args": {"q": "x"}}
SEARCH_Y = {"tool": "search", "args": {"q": "y"}}
CALC = {"tool": "calculator", "args": {"expr": "2+3"}}


@pytest.mark.parametrize(
    ("mode", "made", "reasons"),
    [
        ("exact", [SEARCH_X, CALC], []),
        ("exact", [CALC, SEARCH_X], ["wrong tool"]),  # order matters
        ("exact", [SEARCH_X, CALC, CALC], ["wrong tool"]),  # so does the count
        ("exact", [SEARCH_Y, CALC], ["wrong arguments"]),
        # exact arguments: an extra argument is wrong too
        ("exact", [{"tool": "search", "args": {"q": "x", "n": 3}}, CALC], ["wrong arguments"]),
        ("in_order", [SEARCH_Y, SEARCH_X, {"tool": "open"}, CALC], []),
        ("in_order", [{"tool": "search", "args": {"q": "x", "n": 3}}, CALC], []),
        ("in_order", [CALC, SEARCH_X], ["wrong tool"]),
        ("in_order", [SEARCH_Y, CALC], ["wrong arguments"]),
        ("subset", [CALC, {"tool": "open"}, SEARCH_X], []),
        ("subset", [CALC], ["wrong tool"]),
        ("subset", [CALC, SEARCH_Y], ["wrong arguments"]),
    ],
)
def test_expected_calls_by_mode(mode: str, made: list[dict[str, Any]], reasons: list[str]) -> None:
    t = task(expected_calls=[SEARCH_X, CALC], calls_match=mode)
    assert run_task(agent_making(*made), t).reasons == reasons


def test_exact_is_the_default_match() -> None:
    t = task(expected_calls=[SEARCH_X, CALC])
    assert run_task(agent_making(CALC, SEARCH_X), t).reasons == ["wrong tool"]


def test_subset_gives_each_expected_call_its_own_call() -> None:
    # Greedy would give the first (argument-free) search the q=x call and then fail.
    expected = [ToolCall("search"), ToolCall("search", {"q": "x"})]
    made = [ToolCall("search", {"q": "x"}), ToolCall("search", {"q": "y"})]
    assert check_calls(expected, made, "subset") is None
    assert check_calls(expected, made[:1], "subset") == "wrong tool"


def test_names_only_expectations_use_tools_used() -> None:
    def agent(_text: str) -> dict[str, Any]:
        return {"status": "final", "answer": "5", "tool_calls": 2, "tools_used": ["search", "calc"]}

    t = task(expected_calls=[{"tool": "calc"}], calls_match="subset")
    assert run_task(agent, t).passed
    t = task(expected_calls=[{"tool": "open"}], calls_match="subset")
    assert run_task(agent, t).reasons == ["wrong tool"]


def test_expected_arguments_need_the_calls_of_the_result() -> None:
    def agent(_text: str) -> dict[str, Any]:
        return {"status": "final", "answer": "5", "tool_calls": 1, "tools_used": ["search"]}

    res = run_task(agent, task(expected_calls=[SEARCH_X]))
    assert res.reasons == [
        "malformed result: the task expects tool arguments: return them as 'calls' [{tool, args}]"
    ]


@pytest.mark.parametrize(
    ("calls", "problem"),
    [
        ("search", "'calls' must be a list of {tool, args} objects"),
        ([{"args": {}}], "'calls' must be a list of {tool, args} objects"),
        ([{"tool": "s", "args": ["q"]}], "'calls' arguments must be objects with string keys"),
    ],
)
def test_malformed_calls_are_a_malformed_result(calls: object, problem: str) -> None:
    def agent(_text: str) -> dict[str, Any]:
        return {"status": "final", "answer": "5", "tool_calls": 0, "tools_used": [], "calls": calls}

    assert run_task(agent, task()).reasons == [f"malformed result: {problem}"]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (1, 1.0, True),
        (True, 1, False),
        ("5", 5, False),
        (None, None, True),
        (None, "x", False),
        ({"a": [1, {"b": "c"}]}, {"a": [1, {"b": "c"}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
    ],
)
def test_arguments_compare_as_json_values(a: object, b: object, same: bool) -> None:
    assert same_json(a, b) is same


def test_every_reason_at_once_keeps_the_contract_order_then_the_new_ones() -> None:
    agent = agent_making({"tool": "rm"}, {"tool": "shell"}, answer="6", status="max_steps")
    t = task(
        max_tool_calls=1,
        forbidden_tools=["rm"],
        expected_calls=[{"tool": "calculator"}],
        max_seconds=1e-9,  # any call takes longer than a nanosecond
    )
    assert run_task(agent, t).reasons == [
        "not final",
        "wrong answer",
        "over budget",
        "forbidden tool: rm",
        "wrong tool",
        "over time",
    ]


def test_within_the_time_budget_is_not_over_time() -> None:
    res = run_task(agent_making(), task(max_seconds=3600))
    assert res.passed and res.seconds < 3600


def test_an_error_stays_the_only_reason_even_over_time() -> None:
    def boom(_text: str) -> dict[str, Any]:
        raise ValueError("x")

    assert run_task(boom, task(max_seconds=1e-9)).reasons == ["error: ValueError"]


def test_pass_rates_by_tier_and_each_tasks_duration() -> None:
    tasks = [
        task(id="a", tier="basic"),
        task(id="b", tier="basic", expected="6"),
        task(id="c", tier="challenge"),
        task(id="d"),
    ]
    report = run_tasks(agent_making(), tasks)

    tiers = report.tiers()
    assert list(tiers) == ["basic", "challenge"]
    assert (tiers["basic"].n, tiers["basic"].n_passed, tiers["basic"].pass_rate) == (2, 1, 0.5)
    assert tiers["challenge"].pass_rate == 1.0
    data = report.to_dict()
    assert data["tiers"] == {
        "basic": {"n": 2, "n_passed": 1, "pass_rate": 0.5},
        "challenge": {"n": 1, "n_passed": 1, "pass_rate": 1.0},
    }
    assert [r["tier"] for r in data["results"]] == ["basic", "basic", "challenge", None]
    assert all(isinstance(r["seconds"], float) for r in data["results"])
    assert TaskReport.from_dict(data) == report

    table = format_report(report)
    assert table.splitlines()[0].split() == ["id", "tier", "result", "seconds", "reasons"]
    assert "pass rate by tier: basic 1/2 (50.0%), challenge 1/1 (100.0%)" in table


def test_no_tier_no_tier_column() -> None:
    table = format_report(run_tasks(agent_making(), [task()]))
    assert table.splitlines()[0].split() == ["id", "result", "seconds", "reasons"]
    assert "by tier" not in table


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"calls_match": "exact"}, "'calls_match' needs 'expected_calls'"),
        ({"expected_calls": [], "calls_match": "loose"}, "'calls_match'"),
        ({"expected_calls": [{"tool": ""}]}, "'expected_calls.0.tool'"),
        ({"expected_calls": [{"tool": "s", "argz": {}}]}, "unknown field 'expected_calls.0.argz'"),
        ({"expected_calls": [{"tool": "s", "args": ["q"]}]}, "'expected_calls.0.args'"),
        ({"tier": ""}, "'tier'"),
        ({"max_seconds": 0}, "'max_seconds'"),
        ({"max_seconds": -1}, "'max_seconds'"),
        ({"max_seconds": math.nan}, "'max_seconds'"),
        ({"max_seconds": "5"}, "'max_seconds'"),
    ],
)
def test_bad_new_fields_are_invalid_tasks(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidTask, match=message.replace("(", r"\(").replace(".", r"\.")):
        run_task(agent_making(), task(**extra))


def test_task_file_with_the_new_fields_and_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "depth_agent.py").write_text(
        "def agent(text):\n"
        "    calls = [{'tool': 'search', 'args': {'q': text}}]\n"
        "    return {'status': 'final', 'answer': text, 'tool_calls': 1,\n"
        "            'tools_used': ['search'], 'calls': calls}\n",
        encoding="utf-8",
    )
    lines = [
        {"id": "ok", "input": "a", "expected": "a", "tier": "basic",
         "expected_calls": [{"tool": "search", "args": {"q": "a"}}]},
        {"id": "args", "input": "b", "expected": "b", "tier": "basic",
         "expected_calls": [{"tool": "search", "args": {"q": "z"}}]},
        {"id": "tool", "input": "c", "expected": "c", "tier": "hard",
         "expected_calls": [{"tool": "open"}], "calls_match": "subset", "max_seconds": 60},
    ]  # fmt: skip
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert [t.id for t in read_tasks(path).tasks] == ["ok", "args", "tool"]

    code = main(["tasks", "run", str(path), "--agent", "depth_agent:agent",
                 "--app-dir", str(tmp_path), "--json"])  # fmt: skip

    data = json.loads(capsys.readouterr().out)
    assert code == 1  # two tasks failed and no baseline was given
    assert [r["reasons"] for r in data["results"]] == [[], ["wrong arguments"], ["wrong tool"]]
    assert data["tiers"]["basic"] == {"n": 2, "n_passed": 1, "pass_rate": 0.5}
    assert data["tiers"]["hard"]["n_passed"] == 0
