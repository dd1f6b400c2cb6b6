"""Reading a whole input file (task file, report, labels, price table) as text, or why not."""

from __future__ import annotations

from pathlib import Path

from .errors import InputFileError


def read_text(path: str | Path, what: str) -> str:
    """The file's text; an unreadable or undecodable file raises ``InputFileError`` naming it.

    ``what`` names the file's role in the message ("cannot read task file: ...").
    """
    try:
        # utf-8-sig: editors on Windows like to start files with a byte-order mark.
        return Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputFileError(path, f"cannot read {what}: {reason}") from exc
