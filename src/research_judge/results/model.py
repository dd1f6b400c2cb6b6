"""Results files read back: each line a validated ``Result``, or the error naming its line.

One line per input session, in input order. Readers (validate, compare, report, resume) go
through ``read_results`` so every consumer sees the same validated shape. The model itself is
the judge's (``judge.record``); it is re-exported here, where the readers look for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from .._validation import describe_validation_error
from ..errors import InputFileError
from ..judge.record import (
    CITATION_NAMES,
    CRITERIA,
    RATIO_NAMES,
    SCORE_NAMES,
    AnswerStats,
    CitationSummary,
    ClaimCitation,
    ContextInfo,
    CriterionScore,
    EvidenceSummary,
    JudgeInfo,
    NotJudgedClaim,
    PassFail,
    PromptRef,
    Ratios,
    Repeats,
    Result,
    Sample,
    Share,
    UsageInfo,
    VerdictRecord,
)

__all__ = [
    "CITATION_NAMES",
    "CRITERIA",
    "RATIO_NAMES",
    "SCORE_NAMES",
    "AnswerStats",
    "CitationSummary",
    "ClaimCitation",
    "ContextInfo",
    "CriterionScore",
    "EvidenceSummary",
    "JudgeInfo",
    "NotJudgedClaim",
    "PassFail",
    "PromptRef",
    "Ratios",
    "Repeats",
    "Result",
    "Sample",
    "Share",
    "UsageInfo",
    "VerdictRecord",
    "iter_results",
    "read_results",
]


def iter_results(
    path: str | Path, *, missing_ok: bool = False
) -> Iterator[Result | InputFileError]:
    """Yield each line of a results file as a ``Result``, or the error that names its line.

    A torn last line (no trailing newline, not JSON) is what a killed run leaves; it is reported
    like any other bad line so callers can decide whether to repair or refuse. ``missing_ok``:
    a file that does not exist holds no results (a run that wrote none creates none).
    """
    if missing_ok and not Path(path).exists():
        return
    for _, item in _numbered_results(path):
        yield item


def _numbered_results(path: str | Path) -> Iterator[tuple[int, Result | InputFileError]]:
    p = Path(path)
    try:
        handle = p.open("rb")  # decoded line by line: bytes that are not UTF-8 name their line
    except OSError as exc:
        raise InputFileError(p, f"cannot read results: {exc.strerror or exc}") from exc
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, InputFileError(p, f"not valid UTF-8 (byte {exc.start + 1})", number)
                continue
            if not line.strip():
                continue
            try:
                yield number, Result.model_validate_json(line)
            except ValidationError as exc:
                yield number, InputFileError(p, describe_validation_error(exc, limit=1), number)


def read_results(path: str | Path) -> list[Result]:
    """All results of a file; the first bad line raises ``InputFileError`` with file:line.

    Duplicate session ids are refused too: every consumer joins on the id.
    """
    out: list[Result] = []
    seen: set[str] = set()
    for number, item in _numbered_results(path):
        if isinstance(item, InputFileError):
            raise item
        if item.session_id in seen:
            raise InputFileError(path, f"duplicate session id {item.session_id!r}", number)
        seen.add(item.session_id)
        out.append(item)
    return out
