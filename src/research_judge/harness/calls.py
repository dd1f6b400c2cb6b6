"""Expected tool calls: which tools a task wants called, with which arguments, and how strictly.

A task's ``expected_calls`` is a list of ``{"tool": name, "args": {...}}`` (``args`` optional)
and ``calls_match`` says how the agent's calls must line up with it:

- ``exact``: the agent made exactly these calls, in this order, and each call's arguments are
  exactly the expected ones (no extra argument);
- ``in_order``: the expected calls appear in this order among the agent's calls (other calls may
  come before, between and after); an expected call's arguments must be present with these values,
  extra arguments are allowed;
- ``subset``: each expected call is matched by a distinct call of the agent, in any order; the
  arguments as for ``in_order``.

The check gives "wrong tool" when the tool names alone cannot line up, and "wrong arguments" when
the names do but the arguments do not. Values compare as JSON values: ``1`` equals ``1.0``, but
``true`` is not ``1`` and ``"5"`` is not ``5``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

CallsMatch = Literal["exact", "in_order", "subset"]
CALLS_MATCH: tuple[CallsMatch, ...] = ("exact", "in_order", "subset")

WRONG_TOOL = "wrong tool"
WRONG_ARGUMENTS = "wrong arguments"


@dataclass(frozen=True)
class ToolCall:
    """One tool call. ``args is None`` on an expected call: any arguments will do."""

    tool: str
    args: Mapping[str, Any] | None = field(default=None)


def check_calls(
    expected: Sequence[ToolCall], actual: Sequence[ToolCall], mode: CallsMatch
) -> str | None:
    """``None`` when ``actual`` meets the expectation, else the reason it does not."""

    def names(want: ToolCall, got: ToolCall) -> bool:
        return want.tool == got.tool

    def with_args(want: ToolCall, got: ToolCall) -> bool:
        return want.tool == got.tool and _args_match(want.args, got.args, exact=mode == "exact")

    if not _lines_up(expected, actual, mode, names):
        return WRONG_TOOL
    if not _lines_up(expected, actual, mode, with_args):
        return WRONG_ARGUMENTS
    return None


Matches = Callable[[ToolCall, ToolCall], bool]


def _lines_up(
    expected: Sequence[ToolCall], actual: Sequence[ToolCall], mode: CallsMatch, ok: Matches
) -> bool:
    if mode == "exact":
        return len(expected) == len(actual) and all(map(ok, expected, actual))
    if mode == "in_order":
        # Earliest match first is optimal for a subsequence: it leaves the most calls for later.
        position = 0
        for want in expected:
            while position < len(actual) and not ok(want, actual[position]):
                position += 1
            if position == len(actual):
                return False
            position += 1
        return True
    return _distinct_matching(expected, actual, ok)


def _distinct_matching(
    expected: Sequence[ToolCall], actual: Sequence[ToolCall], ok: Matches
) -> bool:
    """Each expected call gets its own actual call (a bipartite matching, Kuhn's algorithm):
    greedy would fail ``[search, search(q=x)]`` against ``[search(q=x), search(q=y)]``."""
    owner: list[int | None] = [None] * len(actual)

    def assign(i: int, seen: set[int]) -> bool:
        for j, got in enumerate(actual):
            if j in seen or not ok(expected[i], got):
                continue
            seen.add(j)
            holder = owner[j]
            if holder is None or assign(holder, seen):
                owner[j] = i
                return True
        return False

    return all(assign(i, set()) for i in range(len(expected)))


def _args_match(
    want: Mapping[str, Any] | None, got: Mapping[str, Any] | None, *, exact: bool
) -> bool:
    if want is None:
        return True
    if got is None:
        return False
    if exact and set(want) != set(got):
        return False
    return all(key in got and same_json(value, got[key]) for key, value in want.items())


def same_json(a: object, b: object) -> bool:
    """Equality of JSON values: numbers by value, but a boolean is never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and str.__eq__(a, b) is True
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(map(same_json, a, b))
    return False
