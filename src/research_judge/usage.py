"""Token counts of one judge call, as the provider reported them.

It sits at the bottom of the package with ``errors``: a failed call still reports what it used
(``errors.ApiError.usage``), prices turn it into dollars (``cost.prices``), and every client
returns it (``clients.base.JudgeResponse``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.output_tokens + other.output_tokens,
        )
