"""JSON from outside (input lines, judge replies): every way it can fail is one clear ValueError.

``json.loads`` alone lets three things through that later crash a whole batch: nesting deep
enough to exhaust the recursion limit (``RecursionError``), integers past Python's 4,300-digit
conversion limit (a bare ``ValueError``), and ``\\ud800``-style escapes that decode to lone
surrogates, which parse fine and then fail when the text is encoded to be sent or written.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Deeper than any session or reply needs, and shallow enough that a result carrying the value
# (its metadata, say) can still be written and read back: pydantic's JSON parser stops at 200.
MAX_DEPTH = 100

# A backslash-u escape in the surrogate range; only then is the parsed value walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class UnusableJson(ValueError):
    """Why the text is not usable JSON, in words fit for ``file:line: ...`` or a re-ask."""


def loads(text: str, *, allow_surrogates: bool = False) -> Any:
    """The parsed value; ``allow_surrogates`` for our own files that faithfully keep a bad reply."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnusableJson(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise UnusableJson("not usable JSON: nested too deeply") from None
    except ValueError as exc:  # int() refuses more than sys.get_int_max_str_digits() digits
        raise UnusableJson(f"not usable JSON: a number too large ({exc})") from None
    if _too_deep(value, MAX_DEPTH):
        raise UnusableJson(f"not usable JSON: nested too deeply (more than {MAX_DEPTH} levels)")
    if not allow_surrogates and (_SURROGATE_ESCAPE.search(text) or _has_surrogate(text)):
        where = find_surrogate(value)
        if where is not None:
            raise UnusableJson(
                f"{where or 'the value'}: contains a lone surrogate (an unpaired \\ud800-\\udfff "
                "escape), which is not text"
            )
    return value


def _too_deep(value: Any, limit: int) -> bool:
    stack: list[tuple[int, Any]] = [(1, value)]
    while stack:
        depth, item = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((depth + 1, c) for c in children if isinstance(c, dict | list))
    return False


def find_surrogate(value: Any) -> str | None:
    """The dotted path of the first string (key or value) holding a lone surrogate, or None."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return where
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                path = f"{where}.{key}" if where else str(key)
                if _has_surrogate(key):
                    return where or "a key"
                stack.append((path, child))
        elif isinstance(item, list):
            stack.extend((f"{where}.{i}", c) for i, c in reversed(list(enumerate(item))))
    return None


def printable(text: str) -> str:
    """``text`` with any lone surrogate replaced by ``?``, so it can be encoded, sent, hashed."""
    return text.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
