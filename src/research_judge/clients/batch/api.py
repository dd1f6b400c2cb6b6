"""What the batch engine needs from a provider's batch API (implemented in ``providers``).

Kept free of SDK imports so that loading the engine (and ``grade --help``) loads no SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from research_judge.clients.base import JudgeRequest, JudgeResponse
from research_judge.errors import ApiError, JudgeRefusal


@dataclass(frozen=True)
class BatchStatus:
    """One poll of a batch: its provider status and request counts."""

    status: str
    ended: bool
    total: int
    succeeded: int
    failed: int  # errored, expired or canceled lines


@dataclass(frozen=True)
class LineResult:
    """What one batch line came to: a response, a final error, or a reason to send it again."""

    response: JudgeResponse | None = None
    error: ApiError | JudgeRefusal | None = None
    retry: str | None = None  # failed for a reason that may pass (5xx, expired, canceled)


class BatchAPI(Protocol):
    provider: str
    model: str
    max_requests: int
    max_bytes: int

    def line(self, custom_id: str, request: JudgeRequest) -> tuple[Any, int]:
        """The line for this request and its size in bytes."""
        ...

    async def upload(self, lines: list[Any]) -> str | None:
        """Store the lines at the provider before the batch is created (OpenAI's input file);
        return the upload's id, or None when the API takes the lines with the batch itself."""
        ...

    async def submit(self, lines: list[Any], upload_id: str | None) -> str:
        """Create a batch of these lines (or of the upload); return its provider id."""
        ...

    async def find(self, upload_id: str) -> str | None:
        """The batch created from this upload, if one was (a crash may have hidden it)."""
        ...

    async def poll(self, batch_id: str) -> BatchStatus: ...

    async def results(self, batch_id: str, status: BatchStatus) -> dict[str, Any]:
        """Every line of an ended batch, raw, by ``custom_id``."""
        ...

    def outcome(self, raw: Any | None, request: JudgeRequest) -> LineResult:
        """What a raw result line (None: the batch has no line for it) means for ``request``."""
        ...

    async def aclose(self) -> None: ...
