"""Hostile inputs, kept as fixtures: each is something a careless user or an attacker produced.

Built in code (some are megabytes) so nothing large is committed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SESSIONS = FIXTURES / "sessions.jsonl"
RECORDINGS = FIXTURES / "recordings"
# Grades the bundled sessions from the bundled recordings: no network, no key.
REPLAY = [
    "--provider",
    "scripted",
    "--model",
    "authored-lenient-judge",
    "--replay",
    str(RECORDINGS),
]

DEEP = 100_000  # nesting depth that overflows a recursive parser
HUGE_DIGITS = 5_000  # past Python's int-from-string limit (4300 digits)


def deeply_nested() -> str:
    return "[" * DEEP + "]" * DEEP


def huge_int() -> str:
    return "9" * HUGE_DIGITS


def hostile_session_lines(good: dict[str, Any]) -> dict[str, str]:
    """Session lines that once stopped a whole batch, by what is wrong with each."""
    text = json.dumps(good)
    return {
        "lone surrogate in the question": text.replace(
            json.dumps(good["question"]), json.dumps(good["question"])[:-1] + '\\ud800"'
        ),
        "lone surrogate in a reference": text.replace('"content": "', '"content": "\\udfff', 1),
        "nested 10^5 deep": text[:-1] + ', "extra": ' + deeply_nested() + "}",
        "a 5,000-digit integer": text[:-1] + ', "extra": ' + huge_int() + "}",
        "nested 10^5 deep in metadata": text.replace(
            '"metadata": {', '"metadata": {"deep": ' + deeply_nested() + ", ", 1
        ),
    }


def hostile_replies(valid: str) -> dict[str, str]:
    """Judge replies that once became internal errors instead of re-asks."""
    return {
        "nested 10^5 deep": deeply_nested(),
        "a 5,000-digit integer": '{"scores": ' + huge_int() + "}",
        "a lone surrogate": valid.replace('"reasoning": "', '"reasoning": "\\ud800', 1),
        # As a provider SDK hands it over after decoding its own JSON (Anthropic's tool input).
        "a raw lone surrogate": valid.replace('"reasoning": "', '"reasoning": "\ud800', 1),
    }
