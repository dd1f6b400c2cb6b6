"""Running an agent on tasks and checking what it returned against each task's expectations."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .calls import ToolCall, check_calls
from .guard import check_timeout, describe, guarded_call
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
    calls: list[ToolCall] | None = None  # the optional "calls": [{"tool", "args"}] of the result


def run_task(
    agent: Agent, task: Mapping[str, Any] | Task, *, timeout: float | None = None
) -> TaskResult:
    """Run ``agent`` on one task and check it; never raises for anything the agent does.

    Reasons come in a fixed order: "not final", "wrong answer", "over budget", then
    "forbidden tool: <name>" per distinct forbidden tool used, sorted by name. If the agent raises
    anything (``SystemExit`` and other ``BaseException`` subclasses included), or returns an object
    whose own methods raise while it is checked, the reasons are exactly
    ``["error: <ExceptionType>"]``; if it returns something that is not a well-formed result,
    exactly ``["malformed result: <what is wrong>"]``. With ``timeout`` (seconds) an agent still
    running after it fails with ``["error: TimeoutError"]`` and is abandoned in a daemon thread.
    ``KeyboardInterrupt`` still stops the run. An invalid task raises ``InvalidTask`` before the
    agent is called: that is the caller's mistake, not the agent's.
    """
    checked = parse_task(task)
    limit = check_timeout(timeout)
    # The checks run inside the guard as well: the result is the agent's object, and its
    # __getitem__ or its answer's .lower() are the agent's code too.
    outcome = guarded_call(lambda: _evaluate(agent, checked), limit)
    if outcome.error is not None:
        return TaskResult(
            id=checked.id,
            reasons=[f"error: {type(outcome.error).__name__}"],
            seconds=outcome.seconds,
            detail=describe(outcome.error),
            tier=checked.tier,
        )
    assert outcome.value is not None
    reasons, answer = outcome.value
    malformed = len(reasons) == 1 and reasons[0].startswith("malformed result: ")
    # The one check on wall time, so the one that can differ between two runs of the same agent.
    if checked.max_seconds is not None and outcome.seconds > checked.max_seconds and not malformed:
        reasons = [*reasons, "over time"]
    return TaskResult(
        id=checked.id, reasons=reasons, seconds=outcome.seconds, answer=answer, tier=checked.tier
    )


def run_tasks(
    agent: Agent,
    tasks: Iterable[Mapping[str, Any] | Task],
    *,
    label: str | None = None,
    timeout: float | None = None,
) -> TaskReport:
    """Run ``agent`` on every task, in order; one task's failure never stops the others.

    All tasks are validated first (``InvalidTask`` on a bad one or a repeated id), so a typo in
    the last task does not surface after the agent has already spent time on the others.
    ``label`` names the agent in the report (the CLI passes the ``--agent`` spec); ``timeout``
    bounds each task as in ``run_task``.
    """
    checked = parse_tasks(tasks)
    limit = check_timeout(timeout)
    if not checked:
        warnings.warn(
            "no tasks to run: the report's pass_rate is 0.0 with n == 0", RuntimeWarning, 2
        )
    return TaskReport(
        results=[run_task(agent, task, timeout=limit) for task in checked], agent=label
    )


def _evaluate(agent: Agent, task: Task) -> tuple[list[str], str | None]:
    """Call the agent and check its result: the reasons, and the answer to show (if any)."""
    result = _check_shape(agent(task.input))
    if isinstance(result, str):
        return [f"malformed result: {result}"], None
    expected = task.expected_calls
    if expected and result.calls is None and any(c.args is not None for c in expected):
        problem = "the task expects tool arguments: return them as 'calls' [{tool, args}]"
        return [f"malformed result: {problem}"], None
    return _reasons(task, result), str.__str__(result.answer) if result.answer is not None else None


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
    if task.expected_calls is not None:
        made = result.calls
        if made is None:  # names only: the expectation carries no arguments (checked above)
            made = [ToolCall(name) for name in result.tools_used]
        problem = check_calls(task.expected_calls, made, task.calls_match)
        if problem is not None:
            reasons.append(problem)
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
    calls = _check_calls(raw["calls"], problems) if "calls" in raw else None
    if problems:
        return "; ".join(problems)
    return _AgentResult(
        status=status,
        answer=answer,
        tool_calls=tool_calls,
        tools_used=list(tools_used),
        calls=calls,
    )


def _check_calls(raw: object, problems: list[str]) -> list[ToolCall] | None:
    """The optional ``calls`` of a result: ``[{"tool": name, "args": {...}}]``, args optional."""
    shape = "'calls' must be a list of {tool, args} objects"
    if not isinstance(raw, list | tuple):
        problems.append(shape)
        return None
    calls: list[ToolCall] = []
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("tool"), str):
            problems.append(shape)
            return None
        args = item.get("args", {})
        if args is None:
            args = {}
        if not isinstance(args, Mapping) or not all(isinstance(k, str) for k in args):
            problems.append("'calls' arguments must be objects with string keys")
            return None
        calls.append(ToolCall(str.__str__(item["tool"]), dict(args)))
    return calls
