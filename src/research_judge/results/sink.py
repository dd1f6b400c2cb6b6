"""Where the engine puts results: a results file (resumable) or a list in memory.

The engine hands over results in input order and never reads them back, so anything with these
five methods will do. ``ResultsFile`` is the CLI's; ``ResultsList`` is the Python API's, which
returns the results instead of writing them.
"""

from __future__ import annotations

from typing import Protocol

from .model import Result
from .output import ExistingResults


class ResultsSink(Protocol):
    def load(self) -> ExistingResults:
        """What an earlier run left (for resume); empty when there is nothing to resume."""
        ...

    def append(self, result: Result) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...

    def finalize(self, input_order: list[str]) -> bool:
        """Leave one result per session in input order; True when that meant rewriting."""
        ...


class ResultsList:
    """Results kept in memory, in the order the engine appends them (input order)."""

    def __init__(self) -> None:
        self.results: list[Result] = []

    def load(self) -> ExistingResults:
        return ExistingResults()

    def append(self, result: Result) -> None:
        self.results.append(result)

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None

    def finalize(self, input_order: list[str]) -> bool:
        return False  # appended in input order, once each: already final
