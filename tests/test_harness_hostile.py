"""Hostile agents (issue 10): nothing an agent does stops, hangs or crashes the harness.

Each case is one failed task with reasons exactly ``["error: <ExceptionType>"]``; the other tasks
still run; only ``KeyboardInterrupt`` stops the run.
"""

from __future__ import annotations

import json
import math
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.errors import ConfigError
from research_judge.harness import run_task, run_tasks


def good(text: str) -> dict[str, Any]:
    return {"status": "final", "answer": text, "tool_calls": 0, "tools_used": []}


def task(id: str, **extra: Any) -> dict[str, Any]:
    return {"id": id, "input": id, "expected": id, **extra}


class Quit(BaseException):
    """An agent's own BaseException subclass: not an Exception, still only a failed task."""


class RaisingMapping(dict[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise LookupError(f"no {key} today")


class RaisingContains(dict[str, Any]):
    def __contains__(self, key: object) -> bool:
        raise RuntimeError("contains broke")


class RaisingLower(str):
    def lower(self) -> str:
        raise UnicodeError("no lowercase for you")


class HostileMessage(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ broke too")


def exits(_text: str) -> dict[str, Any]:
    sys.exit(0)


def quits(_text: str) -> dict[str, Any]:
    raise Quit


def bad_getitem(text: str) -> dict[str, Any]:
    return RaisingMapping(good(text))


def bad_contains(text: str) -> dict[str, Any]:
    return RaisingContains(good(text))


def bad_lower(text: str) -> dict[str, Any]:
    return {**good(text), "answer": RaisingLower(text)}


def bad_message(_text: str) -> dict[str, Any]:
    raise HostileMessage


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["inline", "in-thread"])
@pytest.mark.parametrize(
    ("agent", "kind"),
    [
        (exits, "SystemExit"),
        (quits, "Quit"),
        (bad_getitem, "LookupError"),
        (bad_contains, "RuntimeError"),
        (bad_lower, "UnicodeError"),
        (bad_message, "HostileMessage"),
    ],
)
def test_hostile_agent_is_one_failed_task_and_the_others_run(
    agent: Callable[[str], dict[str, Any]], kind: str, timeout: float | None
) -> None:
    def mixed(text: str) -> dict[str, Any]:
        return agent(text) if text == "b" else good(text)

    report = run_tasks(mixed, [task("a"), task("b"), task("c")], timeout=timeout)

    assert [r.reasons for r in report.results] == [[], [f"error: {kind}"], []]
    assert report.n_passed == 2


def test_the_message_of_an_exception_with_a_hostile_str_is_replaced() -> None:
    res = run_task(bad_message, task("a"))
    assert res.reasons == ["error: HostileMessage"]
    assert res.detail == "<HostileMessage whose message could not be read>"


def test_system_exit_keeps_its_code_in_the_detail() -> None:
    def exits_3(_text: str) -> dict[str, Any]:
        sys.exit(3)

    res = run_task(exits_3, task("a"))
    assert res.reasons == ["error: SystemExit"]
    assert res.detail == "3"


def test_a_str_subclass_answer_is_reported_as_a_plain_str() -> None:
    class Shouty(str):
        def __str__(self) -> str:
            return "SHOUT"

    res = run_task(lambda text: {**good(text), "answer": Shouty("a")}, task("a"))
    assert res.passed
    assert type(res.answer) is str and res.answer == "a"


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Released at teardown, so a hung agent's abandoned thread ends with the test."""
    event = threading.Event()
    yield event
    event.set()


def test_a_hung_agent_times_out_and_the_run_goes_on(release: threading.Event) -> None:
    seen: list[str] = []

    def hangs_on_b(text: str) -> dict[str, Any]:
        seen.append(text)
        if text == "b":
            release.wait()
        return good(text)

    report = run_tasks(hangs_on_b, [task("a"), task("b"), task("c")], timeout=0.2)

    assert seen == ["a", "b", "c"]
    assert [r.reasons for r in report.results] == [[], ["error: TimeoutError"], []]
    hung = report.results[1]
    assert hung.seconds >= 0.2
    assert hung.detail == "the agent did not return within 0.2 s; it was abandoned"


def test_keyboard_interrupt_in_the_agent_thread_still_stops_the_run() -> None:
    def interrupted(_text: str) -> dict[str, Any]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tasks(interrupted, [task("a"), task("b")], timeout=5)


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, True, "5"])
def test_timeout_must_be_finite_and_positive(bad: object) -> None:
    with pytest.raises(ConfigError, match="timeout must be"):
        run_tasks(good, [task("a")], timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="timeout must be"):
        run_task(good, task("a"), timeout=bad)  # type: ignore[arg-type]


# --- the command line ----------------------------------------------------------------------------

AGENTS = """
import sys, threading

RELEASE = threading.Event()


def agent(text):
    print("chatter on stdout from", text)
    if text == "exit":
        sys.exit(0)
    if text == "hang":
        RELEASE.wait()
    return {"status": "final", "answer": text, "tool_calls": 0, "tools_used": []}
"""


@pytest.fixture
def cli_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "hostile_cli_agent.py").write_text(AGENTS, encoding="utf-8")
    tasks = tmp_path / "tasks.jsonl"
    lines = [task(x) for x in ("first", "exit", "hang", "last")]
    tasks.write_text("".join(json.dumps(t) + "\n" for t in lines), encoding="utf-8")
    yield tasks
    module = sys.modules.pop("hostile_cli_agent", None)
    if module is not None:
        module.RELEASE.set()


def test_cli_sys_exit_and_hang_are_failed_tasks_and_stdout_stays_json(
    cli_agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tasks", "run", str(cli_agent), "--agent", "hostile_cli_agent:agent"]
    argv += ["--app-dir", str(cli_agent.parent), "--task-timeout", "0.3", "--json"]

    code = main(argv)
    captured = capsys.readouterr()

    data = json.loads(captured.out)  # the agent's prints went to stderr
    reasons = {r["id"]: r["reasons"] for r in data["results"]}
    assert reasons == {
        "first": [],
        "exit": ["error: SystemExit"],
        "hang": ["error: TimeoutError"],
        "last": [],
    }
    assert "chatter on stdout from last" in captured.err
    assert code == 1  # failed tasks, no baseline: the run fails, and the others still ran


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf"])
def test_cli_bad_task_timeout_is_a_usage_error_before_the_agent_runs(
    cli_agent: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    argv = ["tasks", "run", str(cli_agent), "--agent", "hostile_cli_agent:agent"]
    argv += ["--app-dir", str(cli_agent.parent), f"--task-timeout={bad}"]

    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "--task-timeout must be a finite number of seconds above 0" in captured.err
    assert "chatter" not in captured.err


def test_the_timeout_benchmark_runs() -> None:
    import subprocess

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "harness_timeout.py"
    done = subprocess.run(
        [sys.executable, str(script), "--tasks", "50", "--repeat", "1"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "overhead" in done.stdout
