"""The deterministic task harness (contract section 7): run a scripted agent on tasks with known
answers, say why each task failed, and find regressions between two runs.

    from research_judge.harness import run_tasks, regressions, format_report
    old, new = run_tasks(v1, tasks), run_tasks(v2, tasks)
    print(format_report(new, baseline=old))
"""

from __future__ import annotations

from .loading import load_agent
from .render import format_report, report_json
from .report import TaskReport, TaskResult, fixes, read_report, regressions
from .running import Agent, normalise, run_task, run_tasks
from .tasks import InvalidTask, Task, TaskFile, parse_task, read_tasks

__all__ = [
    "Agent",
    "InvalidTask",
    "Task",
    "TaskFile",
    "TaskReport",
    "TaskResult",
    "fixes",
    "format_report",
    "load_agent",
    "normalise",
    "parse_task",
    "read_report",
    "read_tasks",
    "regressions",
    "report_json",
    "run_task",
    "run_tasks",
]
