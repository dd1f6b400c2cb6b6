"""Which provider batches hold which requests: one small JSON file per batch, beside ``--out``.

For ``--out results.jsonl`` the folder is ``results.jsonl.batches/``. A batch's file is written
(temp file + rename) as soon as the provider has accepted the batch and before anything else
happens, and never changed afterwards; so after a crash, a kill -9 or a reboot, the same command
finds every batch still out and waits for it instead of sending its requests again.

A request is named in a batch by its content key (``JudgeRequest.key``), which is also the
batch line's ``custom_id``: the same command renders the same requests, so their keys find them.
When a request went into several batches (a failed line sent again), the latest one counts.

OpenAI batches are made from an uploaded file, so the upload is recorded first (an "intent",
``batch_id`` empty) and replaced by the batch's record once it exists: a crash between the two
leaves the intent, and the next run looks for the batch made from that file (or makes it) instead
of sending the requests again. Anthropic takes the requests with the create call itself; a crash
in the few milliseconds between its answer and our record is the one window left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from research_judge._files import write_atomically
from research_judge.errors import ConfigError, InputFileError

FORMAT = 1


class BatchRecord(BaseModel):
    """One provider batch as written to disk."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    format: int = FORMAT
    sequence: int
    provider: str
    model: str
    batch_id: str  # "" for an upload not yet known to have become a batch
    created_at: float
    custom_ids: tuple[str, ...]
    upload_id: str | None = None  # OpenAI's input file


@dataclass
class BatchState:
    """The batch folder of one results file: load once, add records as batches are created."""

    directory: Path
    records: list[BatchRecord]

    def __post_init__(self) -> None:
        # A key hashes the provider and the model too, so one index serves every record.
        self._holder: dict[str, BatchRecord] = {}
        for record in self.records:
            if record.batch_id:
                self._index(record)

    def _index(self, record: BatchRecord) -> None:
        for key in record.custom_ids:
            self._holder[key] = record  # records come in sequence: the latest wins

    def intents(self) -> list[BatchRecord]:
        """Uploads whose batch is not recorded (a run stopped between the two)."""
        latest = {r.upload_id: r for r in self.records if r.upload_id}
        return [r for r in latest.values() if not r.batch_id]

    @classmethod
    def beside(cls, out_path: str | Path) -> BatchState:
        return cls.load(Path(f"{out_path}.batches"))

    @classmethod
    def load(cls, directory: Path) -> BatchState:
        records: list[BatchRecord] = []
        if directory.is_dir():
            for path in sorted(directory.glob("*.json")):
                try:
                    records.append(BatchRecord.model_validate_json(path.read_bytes()))
                except (OSError, ValidationError) as exc:
                    # Never guess: a batch we cannot read may hold requests we must not resend.
                    raise InputFileError(path, f"unreadable batch record: {exc}") from exc
        records.sort(key=lambda record: record.sequence)
        return cls(directory, records)

    def holder(self, key: str) -> BatchRecord | None:
        """The latest batch holding the request ``key``."""
        return self._holder.get(key)

    def add(
        self,
        provider: str,
        model: str,
        batch_id: str,
        custom_ids: list[str] | tuple[str, ...],
        upload_id: str | None = None,
    ) -> BatchRecord:
        """Record a batch the provider has just accepted, or (``batch_id`` empty) an upload
        about to become one; atomically, before returning."""
        sequence = (self.records[-1].sequence + 1) if self.records else 1
        record = BatchRecord(
            sequence=sequence,
            provider=provider,
            model=model,
            batch_id=batch_id,
            created_at=time.time(),
            custom_ids=tuple(custom_ids),
            upload_id=upload_id,
        )
        name = batch_id or f"upload-{upload_id}"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_atomically(
                self.directory / f"{sequence:06d}-{_safe(name)}.json",
                record.model_dump_json(),
                private=True,  # as before: a batch record is the user's own business
            )
        except OSError as exc:
            raise ConfigError(
                f"cannot record batch {name} in {self.directory}: {exc}; if the batch was "
                "created it is running at the provider: note its id before running again"
            ) from exc
        self.records.append(record)
        if batch_id:
            self._index(record)
        return record


def _safe(batch_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in batch_id)[:100]
