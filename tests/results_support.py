"""Results as the grader writes them, shared by the compare, report and validate tests.

A helper module rather than one test file importing another: a test module is collected on its
own, and tests that borrowed its builders would break when it is renamed or split.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from research_judge.results.model import Result

JUDGE: dict[str, Any] = {
    "provider": "openai",
    "model": "judge-1",
    "prompts": {
        "counting": {"name": "counting", "sha256": "a" * 64},
        "scoring": {"name": "scoring", "sha256": "b" * 64},
    },
    "fingerprint": "f1",
}

# The keys contract section 6 promises in `validate --json`.
VALIDATE_CONTRACT_KEYS = frozenset(
    {
        "n",
        "raw_agreement",
        "cohen_kappa",
        "agreement_on_human_pass",
        "agreement_on_human_fail",
        "confusion",
        "raw_agreement_ci",
        "cohen_kappa_ci",
    }
)


def make_result(
    sid: str,
    verdict: str | None = "pass",
    *,
    ratios: Sequence[float | None] = (0.8, 0.6, 0.9),
    scores: Sequence[int] = (3, 2, 3),
    error: str | None = None,
    judge: dict[str, Any] | None = JUDGE,
    **extra: Any,
) -> Result:
    """A result line as the grader writes it; an error wipes ratios, scores and verdict."""
    data: dict[str, Any] = {"session_id": sid, "judge": judge, **extra}
    if error is None:
        data["verdict"] = verdict
        data["ratios"] = dict(zip(("relevance", "utilization", "grounding"), ratios, strict=True))
        data["scores"] = {
            name: {"score": s, "reasoning": f"{name} reasoning", "evidence": f"{name} quote"}
            for name, s in zip(("effectiveness", "fluff", "structure"), scores, strict=True)
        }
    else:
        data.update(error=error, error_kind="judge_output", verdict=None)
    return Result.model_validate(data)


def write_results(path: Path, results: Iterable[Result]) -> Path:
    """A results JSONL file holding ``results`` in order."""
    path.write_text("".join(r.to_json_line() for r in results), encoding="utf-8")
    return path
