"""One rule for every value from a log that is printed: it stays inside its own line and starts
nothing.

Session ids, tool names, questions and reasons come from files the user did not write. Printed
raw, ``x\\n::warning::...`` starts a GitHub Actions workflow command of its own (``::add-mask::``
hides text, ``::stop-commands::TOKEN`` silences every annotation after it), and ``##[command]``
is the runner's older form, read anywhere in a line. So, for plain text on stdout and stderr and
as the base of the Markdown, HTML and JUnit escaping:

- control characters (C0, DEL, C1), line and paragraph separators and the bidirectional
  overrides are shown as escapes (``\\n``, ``\\x1b``, ``\\u2028``), so a value is one line and
  cannot rewrite the terminal or reorder what is shown;
- ``##[`` is broken to ``#\\#[`` wherever it is;
- a value that would begin a line with ``::`` (after blanks) starts with ``\\`` instead.

``inline`` is the rule (``inline_lines`` keeps the line breaks of multi-line text and applies it to
every line); ``github.command`` percent-encodes an annotation's own payload as the
runner specifies, on top of it.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, line/paragraph separators, bidi embeddings/overrides/isolates/marks.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_LEGACY_COMMAND = "##["


def inline(value: object) -> str:
    """``value`` as one inert line of plain text (see the module's rule)."""
    text = _UNSAFE.sub(_escape, "" if value is None else str(value))
    text = text.replace(_LEGACY_COMMAND, "#\\#[")
    if text.lstrip().startswith("::"):
        text = "\\" + text.lstrip()
    return text


def inline_lines(value: object) -> str:
    """Multi-line text (an evidence quote, a JUnit failure's body): the line breaks stay, every
    line follows ``inline``."""
    text = "" if value is None else str(value)
    return "\n".join(inline(line) for line in text.replace("\r\n", "\n").split("\n"))


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


# Inside a JSON string these can be written as \uXXXX escapes without changing the value; C0
# controls are escaped by json.dumps already, and outside strings JSON holds none of them.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def inert_json(text: str) -> str:
    """Serialised JSON (``json.dumps``) made inert for a terminal and a CI log, losslessly.

    ``--json`` output is data: the ids in it must come back exactly, so ``inline`` cannot be
    used. JSON needs less: ``json.dumps`` escapes line breaks, and no line of its output starts
    with ``::``; what remains is ``##[`` (the runner's older command form, read anywhere in a
    line) and the controls ``ensure_ascii=False`` leaves raw. Both are rewritten as JSON escapes
    (``#\\u0023[``, ``\\u009b``), which parse back to the same string. They can only occur
    inside strings, so the structure is untouched.
    """
    text = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.replace(_LEGACY_COMMAND, "#\\u0023[")
