"""Token estimates made before a call, for budgets and cost forecasts.

The exact count needs the provider's tokenizer; tiktoken downloads its encodings on first use,
which cannot happen here, and Anthropic publishes no offline tokenizer at all. So before a call we
estimate, and after it we trust the usage the provider reports.

The heuristic is characters / 4, OpenAI's rule of thumb for English prose. It is usually within
about 10-20% for English text; it tends to *underestimate* code, JSON, URLs, numbers and
non-English text (CJK text can need several times more tokens than it predicts), and overestimates
little. Treat every figure here as a forecast, not a bill.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from .._canonical import canonical_json


class _Text(Protocol):
    @property
    def content(self) -> str: ...


class Rendered(Protocol):
    """What a token estimate reads of a request (``clients.base.JudgeRequest`` is one): cost sits
    below the clients, which take ``estimate_tokens`` from here."""

    @property
    def system(self) -> str: ...
    @property
    def messages(self) -> Sequence[_Text]: ...
    @property
    def schema(self) -> Mapping[str, Any]: ...


CHARS_PER_TOKEN = 4
"""Average characters per token for English prose (the estimate's only parameter)."""

MESSAGE_OVERHEAD_TOKENS = 4
"""Role markers and separators that chat formats wrap around each message."""

# Expected reply sizes. Measured on nothing but the wire format's shape: an object with a short
# quoted evidence string is about 60 tokens; a claim object also quotes the claim and names a
# source; a score object carries a few sentences of reasoning before its evidence and score.
REPLY_ENVELOPE_TOKENS = 10
"""The JSON around the list: ``{"verdicts": [ ... ]}`` or ``{"scores": [ ... ]}``."""
VERDICTS_PER_REFERENCE = 2
"""Each reference gets one ``relevant`` and one ``used`` object."""
TOKENS_PER_REFERENCE_VERDICT = 60
"""One ``relevant``/``used`` object with a short evidence quote."""
TOKENS_PER_CLAIM_VERDICT = 90
"""One ``grounded`` object: claim quote, evidence quote, source id."""
TOKENS_PER_SCORE = 150
"""One criterion: reasoning, evidence quote and score."""

_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


def estimate_tokens(text: str) -> int:
    """ceil(len(text) / 4): zero for empty text, at least one for any other.

    The one definition of the estimate; everything that guesses a token count should call it.
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN)


PLANNING_ASCII_CHARS_PER_TOKEN = 3
"""Planning counts ASCII text at three characters a token (prose averages about four; code,
JSON, URLs and numbers come nearer three)."""
PLANNING_TOKENS_PER_OTHER_CHAR = 2
"""...and every other character as two tokens (CJK text averages about one to one and a half a
character; accented letters are usually part of a longer token)."""


def planning_tokens(text: str) -> int:
    """A token count meant to err on the large side, for fitting requests into a window.

    ``estimate_tokens`` is a forecast of the bill and can be low for code or non-English text;
    a request planned with it could be refused as too long. This count is deliberately
    pessimistic (typically 30-50% above the real count for English prose), and the planner keeps
    a margin on top of it.
    """
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    other = len(text) - ascii_chars
    return (
        math.ceil(ascii_chars / PLANNING_ASCII_CHARS_PER_TOKEN)
        + other * PLANNING_TOKENS_PER_OTHER_CHAR
    )


def planning_request_tokens(request: Rendered) -> int:
    """``estimate_request`` with ``planning_tokens``: what the planner fits into the window."""
    return _request_tokens(request, planning_tokens)


def estimate_request(request: Rendered) -> int:
    """Input tokens of one request: system prompt, every message, and the reply's JSON schema.

    The schema counts because both providers put it in the model's context (OpenAI's strict
    ``json_schema``, Anthropic's tool ``input_schema``).
    """
    return _request_tokens(request, estimate_tokens)


def _request_tokens(request: Rendered, tokens: Callable[[str], int]) -> int:
    """Tokens of a request's system prompt, messages (each with its framing) and schema, as
    ``tokens`` counts text."""
    total = tokens(request.system) + MESSAGE_OVERHEAD_TOKENS
    for message in request.messages:
        total += tokens(message.content) + MESSAGE_OVERHEAD_TOKENS
    total += tokens(canonical_json(request.schema))
    return total


def estimate_output_tokens(
    call: str, n_references: int, n_claims_guess: int, n_criteria: int = 0
) -> int:
    """Rough reply size of one call.

    counting: two verdict objects per reference plus one per claim; it grows with the
    trajectory. scoring: one object per score criterion (``n_criteria``, the judge's
    ``SCORE_NAMES``), whatever the session's size.
    """
    if n_references < 0 or n_claims_guess < 0:
        raise ValueError("n_references and n_claims_guess must be >= 0")
    if call == "counting":
        return (
            REPLY_ENVELOPE_TOKENS
            + VERDICTS_PER_REFERENCE * TOKENS_PER_REFERENCE_VERDICT * n_references
            + TOKENS_PER_CLAIM_VERDICT * n_claims_guess
        )
    if call == "scoring":
        return REPLY_ENVELOPE_TOKENS + TOKENS_PER_SCORE * n_criteria
    raise ValueError(f"unknown call kind {call!r}: expected 'counting' or 'scoring'")


def guess_claim_count(answer: str) -> int:
    """Sentences in the answer, as a stand-in for its claims before the judge has listed them.

    Each line counts its sentence ends, plus one if it does not end in one (a list item or a
    heading). Headings make this lean high; long sentences holding several claims, low.
    """
    count = 0
    for line in answer.splitlines():
        line = line.strip()
        if not line:
            continue
        count += len(_SENTENCE_END.findall(line))
        if line[-1] not in ".!?":
            count += 1
    return count
