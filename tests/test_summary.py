"""The closing summary of ``grade``: errors counted, then left out of every number."""

from __future__ import annotations

from typing import Any

import pytest

from research_judge.results.model import Result
from research_judge.results.summary import format_summary, summarize


def graded(sid: str, verdict: str, grounding: float | None, fluff: int) -> Result:
    raw: dict[str, Any] = {
        "session_id": sid,
        "ratios": {"relevance": 1.0, "utilization": 0.5, "grounding": grounding},
        "scores": {
            "effectiveness": {"score": 3},
            "fluff": {"score": fluff},
            "structure": {"score": 2},
        },
        "verdict": verdict,
        "evidence": {"verified": 3, "total": 4},
    }
    return Result.model_validate(raw)


def errored(sid: str, kind: str) -> Result:
    return Result.model_validate({"session_id": sid, "error": "boom", "error_kind": kind})


def test_the_first_errors_text_is_shown_where_the_errors_are_counted() -> None:
    first = Result.model_validate(
        {
            "session_id": "c",
            "error": "openai API answered HTTP 400 for session 'c': reasoning_effort is "
            "required\n::warning::not a command \x1b[31m",
            "error_kind": "api",
        }
    )
    text = format_summary(summarize([graded("a", "pass", 1.0, 3), first, errored("d", "api")]))
    lines = text.splitlines()
    assert lines[0] == "sessions 3: graded 1, errors 2 (api 2)"
    assert lines[1].startswith("first error: c: openai API answered HTTP 400 for session 'c': ")
    assert "reasoning_effort is required ::warning::not a command" in lines[1]
    assert "\x1b" not in text
    assert "first error" not in format_summary(summarize([graded("a", "pass", 1.0, 3)]))


def test_errors_are_counted_by_kind_and_left_out_of_rates_and_means() -> None:
    s = summarize(
        [
            graded("a", "pass", 1.0, 3),
            graded("b", "fail", None, 1),
            errored("c", "api"),
            errored("d", "api"),
            errored("e", "judge_output"),
        ]
    )
    assert (s.sessions, s.graded, s.errors, s.passed) == (5, 2, 3, 1)
    assert s.error_kinds == {"api": 2, "judge_output": 1}
    assert s.pass_rate == 0.5
    assert s.means["grounding"] == 1.0  # the null is left out, not counted as 0
    assert s.means["utilization"] == 0.5
    assert s.means["fluff"] == 2.0  # scores on their own 1-3 scale
    assert s.means["structure"] == 2.0
    assert (s.quotes_verified, s.quotes) == (6, 8)
    assert s.evidence_verified == pytest.approx(6 / 8)
    text = format_summary(s)
    assert "errors 3 (api 2, judge_output 1)" in text
    assert "pass rate 50% (1/2)" in text
    lines = text.splitlines()
    assert "ratios   relevance 1.00  utilization 0.50  grounding 1.00" in lines
    assert "scores   effectiveness 3.00  fluff 2.00  structure 2.00  (1-3)" in lines


def test_nothing_graded_gives_undefined_numbers_not_zeros() -> None:
    s = summarize([errored("x", "api")])
    assert s.pass_rate is None and s.means["grounding"] is None and s.evidence_verified is None
    assert "pass rate n/a" in format_summary(s)
