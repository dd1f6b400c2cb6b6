"""What a task is, checked once at the boundary: from a Python dict or from a JSONL task file.

A task file is JSONL, one task per line. Bad lines are collected (file, line, what is wrong) rather
than raised, so the good tasks still run and the caller decides the exit status.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    ValidationError,
    model_validator,
)

from .._files import read_text
from ..errors import InputFileError, UserError
from .calls import CallsMatch, ToolCall


class InvalidTask(UserError):
    """A task (a dict handed to ``run_task`` / ``run_tasks``) that breaks the task schema."""


@dataclass(frozen=True)
class Task:
    """One validated task. ``None`` (or empty) optional fields are not checked.

    ``expected_calls`` / ``calls_match``: the tool calls the agent must make (see ``calls``);
    ``tier``: a difficulty tier to report pass rates by (any name, e.g. basic/advanced);
    ``max_seconds``: a time budget, "over time" when the task took longer.
    """

    id: str
    input: str
    expected: str
    max_tool_calls: int | None = None
    forbidden_tools: tuple[str, ...] = ()
    expected_calls: tuple[ToolCall, ...] | None = None
    calls_match: CallsMatch = "exact"
    tier: str | None = None
    max_seconds: float | None = None


class _TaskModel(BaseModel):
    # Strict: a task file is hand-written, and "expected": 5 or "max_tool_calls": "3" is far more
    # likely a slip than an intent. Unknown keys are refused because a misspelt
    # "forbiden_tools" would otherwise silently switch a safety check off.
    model_config = ConfigDict(extra="forbid", strict=True)

    id: Annotated[str, StringConstraints(min_length=1)]
    input: str
    expected: str
    max_tool_calls: Annotated[int, Field(ge=0)] | None = None
    # The container alone is lax so a Python caller may pass a tuple or a set of names; a JSON
    # file can only give an array anyway, and a bare string (or a non-string name) is still refused.
    forbidden_tools: Annotated[list[Annotated[str, Strict()]], Field(strict=False)] = Field(
        default_factory=list
    )
    expected_calls: list[_CallModel] | None = None
    calls_match: CallsMatch | None = None
    tier: Annotated[str, StringConstraints(min_length=1)] | None = None
    max_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _match_needs_calls(self) -> _TaskModel:
        if self.calls_match is not None and self.expected_calls is None:
            raise ValueError("'calls_match' needs 'expected_calls' to match against")
        return self


class _CallModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tool: Annotated[str, StringConstraints(min_length=1)]
    args: dict[str, Any] | None = None


def parse_task(raw: Mapping[str, Any] | Task) -> Task:
    """Validate one task given as a dict (or pass a ``Task`` through); raise ``InvalidTask``."""
    if isinstance(raw, Task):
        return raw
    problem = _task_problem(raw)
    if isinstance(problem, str):
        label = raw.get("id") if isinstance(raw, Mapping) else None
        where = f"task {label!r}" if isinstance(label, str) else "task"
        raise InvalidTask(f"{where}: {problem}")
    return problem


def parse_tasks(raws: Iterable[Mapping[str, Any] | Task]) -> list[Task]:
    """Validate a whole task list before anything runs; duplicate ids are refused.

    Ids must be unique because regressions and fixes are matched by id across runs.
    """
    tasks = [parse_task(raw) for raw in raws]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise InvalidTask(f"duplicate task id {task.id!r}")
        seen.add(task.id)
    return tasks


@dataclass(frozen=True)
class TaskFile:
    """What reading a task file gave: the good tasks, in file order, and one error per bad line."""

    path: str
    tasks: list[Task]
    problems: list[InputFileError]


def read_tasks(path: str | Path) -> TaskFile:
    """Read a JSONL task file. Bad lines become ``problems``; an unreadable file raises.

    Blank lines are skipped; line numbers are the file's physical lines. A file with no task at
    all (empty, or only blank lines) raises ``InputFileError``: there is nothing to measure.
    """
    p = Path(path)
    text = read_text(p, "task file")
    tasks: list[Task] = []
    problems: list[InputFileError] = []
    first_line_of: dict[str, int] = {}
    saw_content = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        saw_content = True
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(InputFileError(p, f"not valid JSON ({exc.msg})", number))
            continue
        parsed = _task_problem(raw)
        if isinstance(parsed, str):
            problems.append(InputFileError(p, parsed, number))
            continue
        if parsed.id in first_line_of:
            first = first_line_of[parsed.id]
            message = f"duplicate task id {parsed.id!r} (first on line {first})"
            problems.append(InputFileError(p, message, number))
            continue
        first_line_of[parsed.id] = number
        tasks.append(parsed)
    if not saw_content:
        raise InputFileError(p, "no tasks in file")
    return TaskFile(path=str(p), tasks=tasks, problems=problems)


def _task_problem(raw: object) -> Task | str:
    """The validated task, or a one-line description of everything wrong with it."""
    if not isinstance(raw, Mapping):
        return f"a task must be a JSON object, got {_json_type(raw)}"
    try:
        model = _TaskModel.model_validate(dict(raw))
    except ValidationError as exc:
        return "; ".join(_describe(err) for err in exc.errors())
    calls = None
    if model.expected_calls is not None:
        calls = tuple(ToolCall(c.tool, c.args) for c in model.expected_calls)
    return Task(
        id=model.id,
        input=model.input,
        expected=model.expected,
        max_tool_calls=model.max_tool_calls,
        forbidden_tools=tuple(model.forbidden_tools),
        expected_calls=calls,
        calls_match=model.calls_match or "exact",
        tier=model.tier,
        max_seconds=model.max_seconds,
    )


def _describe(err: Mapping[str, Any]) -> str:
    loc = ".".join(str(part) for part in err.get("loc", ()))
    kind = err.get("type")
    if kind == "missing":
        return f"missing field {loc!r}"
    if kind == "extra_forbidden":
        return f"unknown field {loc!r}"
    return f"{loc!r}: {err.get('msg', 'invalid')} (got {_shown(err.get('input'))})"


def _shown(value: object) -> str:
    """A short JSON rendering of the offending value, so the author can find it on the line."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _json_type(value: object) -> str:
    """Name a value's type the way a JSON author thinks of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__
