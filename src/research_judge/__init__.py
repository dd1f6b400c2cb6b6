"""research-judge: grade research-agent sessions with an LLM judge you can trust.

The public API is what ``__all__`` names; every other module is private. Names are imported on
first use, so ``import research_judge`` stays cheap (no SDK, no scikit-learn until needed).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> module that defines it
_EXPORTS = {
    # ingest and the judge
    "Session": "sessions.model",
    "Reference": "sessions.model",
    "iter_sessions": "sessions.model",
    "Judge": "judge.grader",
    "JudgeSettings": "judge.grader",
    "VerdictPolicy": "judge.policy",
    "load_policy": "judge.policy",
    "PromptSet": "judge.prompts",
    # clients
    "JudgeClient": "clients.base",
    "JudgeRequest": "clients.base",
    "JudgeResponse": "clients.base",
    "make_client": "clients",
    "ScriptedClient": "clients",
    "RecordingClient": "clients",
    "ReplayClient": "clients",
    # many sessions, results
    "grade_file": "engine",
    "RunOptions": "engine",
    "Selection": "engine",
    "Result": "results.model",
    "read_results": "results.model",
    # downstream
    "read_labels": "validate",
    "validate_run": "validate",
    "compare_runs": "compare",
    "write_report": "report",
    # errors
    "ResearchJudgeError": "errors",
    "UserError": "errors",
    "JudgeError": "errors",
    "ApiError": "errors",
}

# Spelled out for linters and readers; a test checks it matches _EXPORTS.
__all__ = [
    "ApiError",
    "Judge",
    "JudgeClient",
    "JudgeError",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeSettings",
    "PromptSet",
    "RecordingClient",
    "Reference",
    "ReplayClient",
    "ResearchJudgeError",
    "Result",
    "RunOptions",
    "ScriptedClient",
    "Selection",
    "Session",
    "UserError",
    "VerdictPolicy",
    "__version__",
    "compare_runs",
    "grade_file",
    "iter_sessions",
    "load_policy",
    "make_client",
    "read_labels",
    "read_results",
    "validate_run",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'research_judge' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"research_judge.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


if TYPE_CHECKING:
    from .clients import RecordingClient, ReplayClient, ScriptedClient, make_client
    from .clients.base import JudgeClient, JudgeRequest, JudgeResponse
    from .compare import compare_runs
    from .engine import RunOptions, Selection, grade_file
    from .errors import ApiError, JudgeError, ResearchJudgeError, UserError
    from .judge.grader import Judge, JudgeSettings
    from .judge.policy import VerdictPolicy, load_policy
    from .judge.prompts import PromptSet
    from .report import write_report
    from .results.model import Result, read_results
    from .sessions.model import Reference, Session, iter_sessions
    from .validate import read_labels, validate_run
