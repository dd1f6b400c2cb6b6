"""Human labels: one pass/fail verdict per session, optionally with 1-3 scores per criterion.

Two file shapes carry the same keys (contract section 5): a CSV with a header
(``session_id,label`` plus optional ``effectiveness``, ``fluff``, ``structure`` columns) or JSONL
with one object per line. Every problem is reported as ``file:line: what``, naming the bad value,
because a labels file is typed by hand and the person fixing it needs to find the cell.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from .._files import read_text
from ..errors import InputFileError
from ..results.model import SCORE_NAMES
from ..safety import jsonin

HumanVerdict = Literal["pass", "fail"]
REQUIRED_COLUMNS = ("session_id", "label")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


@dataclass(frozen=True)
class HumanLabel:
    """One person's verdict on one session; ``scores`` holds only the criteria they scored."""

    session_id: str
    label: HumanVerdict
    scores: dict[str, int] = field(default_factory=dict)
    line: int = 0
    annotator: str | None = None  # None when the file has no annotator column


@dataclass(frozen=True)
class Labels:
    """The reference label of each labelled session, in file order, keyed by session id.

    With one label per session (no ``annotator`` column) that label is the reference. With
    several annotators, ``annotations`` holds every label (session -> annotator -> label),
    ``items`` each session's majority label, and ``ties`` the sessions whose annotators split
    evenly (no reference label: left out and counted).
    """

    path: str
    items: dict[str, HumanLabel]
    criteria: tuple[str, ...] = ()  # score columns the file has (even if some cells are empty)
    annotations: dict[str, dict[str, HumanLabel]] = field(default_factory=dict)
    ties: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.items)

    @property
    def n_labelled(self) -> int:
        """Sessions with any label, ties included."""
        return len(self.items) + len(self.ties)


def read_labels(path: str | Path | Sequence[str | Path]) -> Labels:
    """Read one labels file, or several (one annotator each, or several in an annotator column).

    A file without an ``annotator`` column read together with others is one annotator, named
    after the file. The same annotator labelling the same session twice, in one file or
    across files, is an error naming both places.
    """
    if isinstance(path, str | Path):
        return _read_one(path)
    paths = [Path(p) for p in path]
    if len(paths) == 1:
        return _read_one(paths[0])
    annotations: dict[str, dict[str, HumanLabel]] = {}
    where: dict[tuple[str, str], str] = {}
    criteria: list[str] = []
    for p in paths:
        one = _read_one(p)
        criteria += [c for c in one.criteria if c not in criteria]
        by_session = one.annotations or {
            sid: {p.stem: replace(h, annotator=p.stem)} for sid, h in one.items.items()
        }
        for sid, by in by_session.items():
            for name, h in by.items():
                first = where.setdefault((sid, name), f"{p}:{h.line}")
                if first != f"{p}:{h.line}":
                    raise InputFileError(
                        p,
                        f"session {sid!r} labelled twice by annotator {name!r} (first at {first})",
                        h.line,
                    )
                annotations.setdefault(sid, {})[name] = h
    return _with_annotators(", ".join(map(str, paths)), annotations, tuple(criteria))


def _with_annotators(
    path: str, annotations: dict[str, dict[str, HumanLabel]], criteria: tuple[str, ...]
) -> Labels:
    from .annotators import reference_labels

    items, ties = reference_labels(annotations)
    return Labels(path, items, criteria, annotations, tuple(ties))


def _read_one(path: str | Path) -> Labels:
    """Read a CSV or JSONL labels file; the first problem raises ``InputFileError`` (file:line).

    The format follows the suffix (``.jsonl``/``.ndjson``/``.json`` are JSONL, anything else
    CSV), so a mislabelled file fails with a message about its content rather than silently.
    """
    p = Path(path)
    # Line ends as written: a quoted \r inside a cell (a hostile session id) is part of it.
    text = read_text(p, "labels", newline="")  # accepts a spreadsheet's byte-order mark
    if not text.strip():
        raise InputFileError(p, "labels file is empty (expected a header: session_id,label)")
    criteria: tuple[str, ...] | None = None
    if p.suffix.lower() in JSONL_SUFFIXES:
        rows = _jsonl_rows(p, text)
    else:
        rows, criteria = _csv_rows(p, text)
    items: dict[str, HumanLabel] = {}
    annotations: dict[str, dict[str, HumanLabel]] = {}
    keys: set[str] = set()
    for line, row in rows:
        keys.update(row)
        label = _parse_row(p, line, row)
        if label.annotator is not None:
            by = annotations.setdefault(label.session_id, {})
            if label.annotator in by:
                first = by[label.annotator].line
                raise InputFileError(
                    p,
                    f"session {label.session_id!r} labelled twice by annotator "
                    f"{label.annotator!r} (first on line {first})",
                    line,
                )
            by[label.annotator] = label
            continue
        if annotations:
            raise InputFileError(p, "annotator is missing on this line", line)
        if label.session_id in items:
            first = items[label.session_id].line
            raise InputFileError(
                p,
                f"duplicate session id {label.session_id!r} (first labelled on line {first})",
                line,
            )
        items[label.session_id] = label
    if criteria is None:
        # A criterion "exists" in a JSONL file when any line carries its key; lines without it
        # (or with null) simply have no human score for it, like an empty CSV cell.
        criteria = tuple(name for name in SCORE_NAMES if name in keys)
    if annotations:
        if items:
            first = min(h.line for h in items.values())
            raise InputFileError(p, "annotator is missing on this line", first)
        return _with_annotators(str(p), annotations, criteria)
    return Labels(path=str(p), items=items, criteria=criteria)


# --- file shapes ---------------------------------------------------------------------------


def _csv_rows(
    path: Path, text: str
) -> tuple[Iterator[tuple[int, dict[str, Any]]], tuple[str, ...]]:
    reader = csv.reader(text.splitlines(keepends=True))
    header = [name.strip() for name in _next_row(path, reader) or []]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if missing:
        raise InputFileError(
            path,
            f"missing column(s) {', '.join(missing)} in header {','.join(header)!r} "
            "(expected at least: session_id,label)",
            1,
        )
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise InputFileError(path, f"column(s) named twice in header: {', '.join(repeated)}", 1)
    criteria = tuple(name for name in SCORE_NAMES if name in header)

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        while (cells := _next_row(path, reader)) is not None:
            line = reader.line_num
            if not any(cell.strip() for cell in cells):
                continue  # blank line, or a row of empty cells a spreadsheet left behind
            if len(cells) != len(header):
                shown = repr(cells)
                shown = shown if len(shown) <= 200 else shown[:200] + "..."
                raise InputFileError(
                    path, f"expected {len(header)} columns, found {len(cells)}: {shown}", line
                )
            yield line, dict(zip(header, cells, strict=True))

    return rows(), criteria


def _next_row(path: Path, reader: Any) -> list[str] | None:
    """The next CSV row, or None at the end; a row the csv module refuses names its line."""
    try:
        return next(reader)  # type: ignore[no-any-return]
    except StopIteration:
        return None
    except csv.Error as exc:
        limit = csv.field_size_limit()
        why = f"a cell longer than {limit:,} characters" if "field limit" in str(exc) else exc
        raise InputFileError(path, f"unreadable CSV row: {why}", reader.line_num) from None


def _jsonl_rows(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = jsonin.loads(raw)
        except jsonin.UnusableJson as exc:
            raise InputFileError(path, str(exc), line) from exc
        if not isinstance(row, dict):
            raise InputFileError(path, f"expected a JSON object, got {type(row).__name__}", line)
        missing = [name for name in REQUIRED_COLUMNS if name not in row]
        if missing:
            raise InputFileError(path, f"missing key(s): {', '.join(missing)}", line)
        yield line, row


# --- one row -----------------------------------------------------------------------------------


def _parse_row(path: Path, line: int, row: Mapping[str, Any]) -> HumanLabel:
    session_id = row["session_id"]
    if not isinstance(session_id, str):
        raise InputFileError(path, f"session_id must be a string, got {session_id!r}", line)
    session_id = unneutralise(session_id.strip())
    if not session_id:
        raise InputFileError(path, "session_id is empty", line)
    try:
        label = parse_verdict(row["label"])
        scores = {
            name: score
            for name in SCORE_NAMES
            if name in row and (score := parse_score(name, row[name])) is not None
        }
    except ValueError as exc:
        raise InputFileError(path, f"session {session_id!r}: {exc}", line) from exc
    annotator = row.get("annotator")
    if annotator is not None:
        if not isinstance(annotator, str) or not annotator.strip():
            raise InputFileError(
                path, f"session {session_id!r}: annotator must be a name, got {annotator!r}", line
            )
        annotator = unneutralise(annotator.strip())
    return HumanLabel(session_id, label, scores, line, annotator)


# A spreadsheet runs a cell starting with one of these as a formula, so files this tool writes
# (``label``, ``validate --suggest``) prefix such a cell with an apostrophe.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(text: str) -> str:
    """The cell a spreadsheet shows as text: ``'`` before a leading formula character."""
    return "'" + text if text[:1] in FORMULA_STARTS else text


def csv_row(cells: Sequence[object]) -> str:
    """One CSV row ending in ``\n``, every cell holding a line break (``\r`` too) quoted.

    ``csv.writer`` quotes a cell for the characters of its own line terminator only, so with
    ``\n`` rows a bare ``\r`` in a session id went out unquoted and a reader split the row there
    (the labels file no longer read back). Rows are written with ``\r\n``, which quotes both,
    and end in ``\n`` as the rest of the file.
    """
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow(cells)
    return buffer.getvalue()[:-2] + "\n"


def unneutralise(text: str) -> str:
    """Undo ``neutralise``: the session id or name as it was before it was written."""
    return text[1:] if text[:1] == "'" and text[1:2] in FORMULA_STARTS and text[1:2] else text


def parse_verdict(value: Any) -> HumanVerdict:
    """``pass`` or ``fail`` in any case, with surrounding spaces allowed; nothing else.

    1/0, true/false and yes/no are refused on purpose: whether 1 means "pass" or "has a problem"
    differs between teams, and guessing wrong would invert every statistic silently.
    """
    text = value.strip().lower() if isinstance(value, str) else None
    if text == "pass":
        return "pass"
    if text == "fail":
        return "fail"
    shown = repr(value) if not isinstance(value, str) or value.strip() else "an empty cell"
    raise ValueError(
        f"label must be 'pass' or 'fail', got {shown}"
        " (1/0, true/false and yes/no are not accepted: write pass or fail)"
    )


def parse_score(criterion: str, value: Any) -> int | None:
    """A human 1-3 score; ``None`` for an empty cell or JSON null (no score for this criterion)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    number: float | None = None
    if isinstance(value, bool):
        number = None  # JSON true/false is not a score, although bool is an int in Python
    elif isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    # "2.0" from a spreadsheet export is a 2; 2.5 or 4 is not a score on a 1-3 scale.
    if number is not None and math.isfinite(number) and number.is_integer() and 1 <= number <= 3:
        return int(number)
    raise ValueError(f"{criterion} must be 1, 2 or 3 (or empty), got {value!r}")
