"""Running an agent on tasks and checking what it returned against each task's expectations."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .report import TaskReport, TaskResult
from .tasks import Task, parse_task, parse_tasks

Agent = Callable[[str], object]
"""Any callable ``agent(input) -> dict``; what it really returns is checked, not trusted."""

_TRAILING = ".! "


def normalise(text: str) -> str:
    """Lowercase, strip, collapse runs of whitespace to one space, drop trailing ``.`` and ``!``.

    Nothing more, on purpose: ``?``, commas, quotes and inner punctuation are kept, because a
    normaliser that forgives too much hides real mistakes ("1,000" is not "1000"). A trailing run
    such as ``"paris. !"`` goes entirely, spaces between the marks included.
    """
    collapsed = " ".join(text.lower().split())
    return collapsed.rstrip(_TRAILING)


@dataclass(frozen=True)
class _AgentResult:
    status: str
    answer: str | None
    tool_calls: int
    tools_used: list[str]


def run_task(agent: Agent, task: Mapping[str, Any] | Task) -> TaskResult:
    """Run ``agent`` on one task and check it; never raises for anything the agent does.

    Reasons come in a fixed order: "not final", "wrong answer", "over budget", then
    "forbidden tool: <name>" per distinct forbidden tool used, sorted by name. If the agent raises,
    the reasons are exactly ``["error: <ExceptionType>"]``; if it returns something that is not a
    well-formed result, exactly ``["malformed result: <what is wrong>"]``. An invalid task raises
    ``InvalidTask`` before the agent is called: that is the caller's mistake, not the agent's.
    """
    checked = parse_task(task)
    started = time.perf_counter()
    try:
        raw = agent(checked.input)
    except Exception as exc:
        # Any agent failure is a result, never a crash of the run. KeyboardInterrupt and
        # SystemExit are not Exceptions: they still stop the run, as the user asked.
        seconds = time.perf_counter() - started
        return TaskResult(
            id=checked.id,
            reasons=[f"error: {type(exc).__name__}"],
            seconds=seconds,
            detail=str(exc),
        )
    seconds = time.perf_counter() - started

    result = _check_shape(raw)
    if isinstance(result, str):
        return TaskResult(id=checked.id, reasons=[f"malformed result: {result}"], seconds=seconds)
    return TaskResult(
        id=checked.id, reasons=_reasons(checked, result), seconds=seconds, answer=result.answer
    )


def run_tasks(
    agent: Agent, tasks: Iterable[Mapping[str, Any] | Task], *, label: str | None = None
) -> TaskReport:
    """Run ``agent`` on every task, in order; one task's failure never stops the others.

    All tasks are validated first (``InvalidTask`` on a bad one or a repeated id), so a typo in
    the last task does not surface after the agent has already spent time on the others.
    ``label`` names the agent in the report (the CLI passes the ``--agent`` spec).
    """
    checked = parse_tasks(tasks)
    if not checked:
        warnings.warn(
            "no tasks to run: the report's pass_rate is 0.0 with n == 0", RuntimeWarning, 2
        )
    return TaskReport(results=[run_task(agent, task) for task in checked], agent=label)


def _reasons(task: Task, result: _AgentResult) -> list[str]:
    reasons: list[str] = []
    if result.status != "final":
        reasons.append("not final")
    # A missing answer never equals an expected string, whatever the status.
    if result.answer is None or normalise(result.answer) != normalise(task.expected):
        reasons.append("wrong answer")
    if task.max_tool_calls is not None and result.tool_calls > task.max_tool_calls:
        reasons.append("over budget")
    forbidden = set(task.forbidden_tools)
    reasons.extend(f"forbidden tool: {name}" for name in sorted(set(result.tools_used) & forbidden))
    return reasons


def _check_shape(raw: object) -> _AgentResult | str:
    """The agent's result, or what is wrong with it. Extra keys are allowed and ignored."""
    if not isinstance(raw, Mapping):
        return f"expected a dict, got {type(raw).__name__}"
    missing = [k for k in ("status", "answer", "tool_calls", "tools_used") if k not in raw]
    if missing:
        return "missing " + ", ".join(repr(k) for k in missing)
    status, answer, tool_calls, tools_used = (
        raw["status"],
        raw["answer"],
        raw["tool_calls"],
        raw["tools_used"],
    )
    problems: list[str] = []
    if not isinstance(status, str):
        problems.append(f"'status' must be a string, got {type(status).__name__}")
    if answer is not None and not isinstance(answer, str):
        problems.append(f"'answer' must be a string or None, got {type(answer).__name__}")
    # bool is an int subclass; True tool calls is a bug in the agent, not a count.
    if isinstance(tool_calls, bool) or not isinstance(tool_calls, int):
        problems.append(f"'tool_calls' must be an int, got {type(tool_calls).__name__}")
    elif tool_calls < 0:
        problems.append(f"'tool_calls' must not be negative, got {tool_calls}")
    if not isinstance(tools_used, list | tuple) or not all(
        isinstance(name, str) for name in tools_used
    ):
        problems.append("'tools_used' must be a list of tool names (strings)")
    if problems:
        return "; ".join(problems)
    return _AgentResult(
        status=status, answer=answer, tool_calls=tool_calls, tools_used=list(tools_used)
    )
