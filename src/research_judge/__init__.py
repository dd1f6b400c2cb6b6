"""research-judge: grade research-agent sessions with an LLM judge you can trust.

The public API is what ``__all__`` names; every other module is private. Names are imported on
first use, so ``import research_judge`` stays cheap (no SDK, no scikit-learn until needed).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from ._lazy import lazy_exports
from ._version import __version__

# name -> module that defines it
_EXPORTS = {
    # the Python API (contract section 10)
    "grade": "api",
    "agrade": "api",
    "validate": "api",
    "compare": "api",
    "to_dataframe": "api",
    "write_report": "api",
    # ingest and the judge
    "Session": "sessions.model",
    "Reference": "sessions.model",
    "iter_sessions": "sessions.model",
    "Judge": "judge.grader",
    "JudgeSettings": "judge.settings",
    "VerdictPolicy": "judge.policy",
    "load_policy": "judge.policy",
    "PromptSet": "judge.prompts",
    # clients
    "JudgeClient": "clients.base",
    "JudgeRequest": "clients.base",
    "JudgeResponse": "clients.base",
    "make_client": "clients",
    "ClientSettings": "clients.chain",
    "build_client": "clients.chain",
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
    # errors
    "ResearchJudgeError": "errors",
    "UserError": "errors",
    "JudgeError": "errors",
    "ApiError": "errors",
    "InvalidSessionsError": "errors",
    "MaxCostReached": "errors",
    "ProviderDownError": "errors",
}

# Spelled out for linters and readers; a test checks it matches _EXPORTS.
__all__ = [
    "ApiError",
    "ClientSettings",
    "InvalidSessionsError",
    "Judge",
    "JudgeClient",
    "JudgeError",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeSettings",
    "MaxCostReached",
    "PromptSet",
    "ProviderDownError",
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
    "agrade",
    "build_client",
    "compare",
    "compare_runs",
    "grade",
    "grade_file",
    "iter_sessions",
    "load_policy",
    "make_client",
    "read_labels",
    "read_results",
    "to_dataframe",
    "validate",
    "validate_run",
    "write_report",
]


__getattr__ = lazy_exports(__name__, {name: f"research_judge.{m}" for name, m in _EXPORTS.items()})


class _Package(types.ModuleType):
    """``research_judge.validate`` and ``.compare`` are API functions named like subpackages.

    Importing a submodule sets it as an attribute of its package, which would replace the
    function; this package keeps its functions (the subpackages stay importable by full name).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


_SHADOWED = frozenset({"validate", "compare"})
sys.modules[__name__].__class__ = _Package


if TYPE_CHECKING:
    from .api import agrade, compare, grade, to_dataframe, validate, write_report
    from .clients import RecordingClient, ReplayClient, ScriptedClient, make_client
    from .clients.base import JudgeClient, JudgeRequest, JudgeResponse
    from .clients.chain import ClientSettings, build_client
    from .compare import compare_runs
    from .engine import RunOptions, Selection, grade_file
    from .errors import (
        ApiError,
        InvalidSessionsError,
        JudgeError,
        MaxCostReached,
        ProviderDownError,
        ResearchJudgeError,
        UserError,
    )
    from .judge.grader import Judge
    from .judge.policy import VerdictPolicy, load_policy
    from .judge.prompts import PromptSet
    from .judge.settings import JudgeSettings
    from .results.model import Result, read_results
    from .sessions.model import Reference, Session, iter_sessions
    from .validate import read_labels, validate_run
