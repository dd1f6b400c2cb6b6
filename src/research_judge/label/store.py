"""The labels file, appended one row at a time and flushed to disk as each label is given.

Each label is one CSV row ``session_id,label,annotator,labelled_at,note`` written with a single
``write`` on a file opened for appending and then ``fsync``-ed, so a crash or ``kill -9`` after
the page said "saved" loses nothing. Undo removes the row this run wrote last, and only while it
is still the file's last row (truncation back to where it started); anything else another
process appended in between is never touched. The file is a plain labels file: ``validate``
reads it as it is, and a spreadsheet opens it safely (cells that would run as a formula start
with an apostrophe, which ``validate`` takes off again).
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import ConfigError, InputFileError
from ..validate.labels import Labels, csv_row, neutralise, read_labels

LABEL_COLUMNS = ("session_id", "label", "annotator", "labelled_at", "note")


@dataclass(frozen=True)
class Written:
    session_id: str
    label: str
    start: int  # file offset where the row begins
    end: int  # file offset just after it
    row: bytes


class LabelStore:
    def __init__(self, path: str | Path, annotator: str) -> None:
        self.path = Path(path)
        self.annotator = annotator
        self.header = self._open()
        self._written: list[Written] = []

    def _open(self) -> list[str]:
        if not self.path.exists():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return self._open()  # created meanwhile: read it as an existing file
            except OSError as exc:
                raise ConfigError(f"{self.path}: cannot create: {exc.strerror or exc}") from exc
            with os.fdopen(fd, "wb") as handle:
                handle.write(_csv_line(list(LABEL_COLUMNS)))
                handle.flush()
                os.fsync(handle.fileno())
            return list(LABEL_COLUMNS)
        with self.path.open(encoding="utf-8-sig", newline="") as handle:
            header = [c.strip() for c in next(csv.reader(handle), [])]
        missing = [c for c in ("session_id", "label", "annotator") if c not in header]
        if missing:
            raise InputFileError(
                self.path,
                f"has no {', '.join(missing)} column (header {','.join(header)!r}); label into "
                f"a new file, or one with the columns {','.join(LABEL_COLUMNS)}",
                1,
            )
        return header

    def existing(self) -> Labels:
        """Everything the file holds (every annotator's labels), validated as ``validate`` does."""
        return read_labels(self.path)

    def done(self) -> set[str]:
        """Sessions this annotator has labelled in the file, from this run or an earlier one."""
        labels = self.existing()
        return {sid for sid, by in labels.annotations.items() if self.annotator in by}

    def append(self, session_id: str, label: str, note: str = "") -> Written:
        cells = {
            "session_id": neutralise(session_id),
            "label": label,
            "annotator": neutralise(self.annotator),
            "labelled_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "note": neutralise(" ".join(note.split())),
        }
        row = _csv_line([cells.get(column, "") for column in self.header])
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
            if end and not _ends_with_newline(fd, end):
                row = b"\n" + row  # a row typed in by hand without its line end
            os.write(fd, row)  # one write on an O_APPEND file: the row lands whole, at the end
            os.fsync(fd)
        finally:
            os.close(fd)
        written = Written(session_id, label, end, end + len(row), row)
        self._written.append(written)
        return written

    @property
    def can_undo(self) -> bool:
        return bool(self._written)

    def undo(self) -> Written:
        """Remove the last row this run wrote; refused once anything follows it in the file."""
        if not self._written:
            raise ConfigError("nothing to undo in this run")
        last = self._written[-1]
        with self.path.open("r+b") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(last.start)
            if size != last.end or handle.read(len(last.row)) != last.row:
                raise ConfigError(
                    f"cannot undo {last.session_id}: {self.path} changed after that label was "
                    "saved (another row follows it); edit the file by hand"
                )
            handle.truncate(last.start)
            handle.flush()
            os.fsync(handle.fileno())
        self._written.pop()
        return last


def _ends_with_newline(fd: int, end: int) -> bool:
    return os.pread(fd, 1, end - 1) == b"\n"


def _csv_line(cells: list[str]) -> bytes:
    return csv_row(cells).encode("utf-8")
