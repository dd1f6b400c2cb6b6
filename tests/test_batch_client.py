"""BatchClient's rounds against an in-memory batch API: splitting at the provider's limits,
identical requests sharing a line, the state written before anything else, failures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from research_judge.clients.base import JudgeRequest, JudgeResponse, Message
from research_judge.clients.batch import BatchClient, BatchState
from research_judge.clients.batch.api import BatchStatus, LineResult
from research_judge.errors import ApiError, InputFileError


def request(n: int, *, size: int = 10) -> JudgeRequest:
    return JudgeRequest("scoring", "sys", (Message("user", f"{n}:" + "x" * size),), "s", {})


class MemoryBatches:
    """Answers every line with its own user text; ends each batch at its first poll."""

    provider = "memory"
    model = "m"

    def __init__(self, *, max_requests: int = 1000, max_bytes: int = 10**9) -> None:
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.batches: list[list[dict[str, Any]]] = []
        self.fail_submit: ApiError | None = None
        self.uploads: dict[str, list[Any]] = {}
        self.made_from: dict[str, str] = {}  # upload id -> batch id
        self.uses_uploads = False

    def line(self, custom_id: str, request: JudgeRequest) -> tuple[Any, int]:
        item = {"custom_id": custom_id, "text": request.messages[0].content}
        return item, len(json.dumps(item))

    async def upload(self, lines: list[Any]) -> str | None:
        if not self.uses_uploads:
            return None
        upload_id = f"u{len(self.uploads) + 1}"
        self.uploads[upload_id] = lines
        return upload_id

    async def submit(self, lines: list[Any], upload_id: str | None) -> str:
        if self.fail_submit is not None:
            raise self.fail_submit
        self.batches.append(self.uploads[upload_id] if upload_id else lines)
        batch_id = f"b{len(self.batches)}"
        if upload_id:
            self.made_from[upload_id] = batch_id
        return batch_id

    async def find(self, upload_id: str) -> str | None:
        return self.made_from.get(upload_id)

    async def poll(self, batch_id: str) -> BatchStatus:
        lines = self.batches[int(batch_id[1:]) - 1]
        return BatchStatus("ended", True, len(lines), len(lines), 0)

    async def results(self, batch_id: str, status: BatchStatus) -> dict[str, Any]:
        return {line["custom_id"]: line["text"] for line in self.batches[int(batch_id[1:]) - 1]}

    def outcome(self, raw: Any | None, request: JudgeRequest) -> LineResult:
        return LineResult(JudgeResponse(str(raw)))

    async def aclose(self) -> None:
        return None


async def run_all(client: BatchClient, requests: list[JudgeRequest]) -> list[JudgeResponse]:
    try:
        return list(await asyncio.gather(*(client.complete(r) for r in requests)))
    finally:
        await client.aclose()


def client(api: MemoryBatches, tmp_path: Path) -> BatchClient:
    return BatchClient(
        api, BatchState.beside(tmp_path / "o.jsonl"), poll_interval=0.01, settle=0.01
    )


async def test_a_round_is_split_at_the_request_and_byte_limits(tmp_path: Path) -> None:
    api = MemoryBatches(max_requests=4)
    replies = await run_all(client(api, tmp_path), [request(n) for n in range(10)])
    assert [r.content for r in replies] == [f"{n}:" + "x" * 10 for n in range(10)]
    assert [len(b) for b in api.batches] == [4, 4, 2]

    by_bytes = MemoryBatches(max_bytes=3 * len(json.dumps({"custom_id": "k" * 64, "text": "0:xx"})))
    await run_all(client(by_bytes, tmp_path / "b"), [request(n, size=2) for n in range(7)])
    assert [len(b) for b in by_bytes.batches] == [3, 3, 1]


async def test_identical_requests_share_one_line(tmp_path: Path) -> None:
    api = MemoryBatches()
    replies = await run_all(client(api, tmp_path), [request(1), request(1), request(2)])
    assert [len(b) for b in api.batches] == [2]
    assert replies[0] == replies[1]


async def test_every_batch_is_recorded_beside_out_and_found_again_by_its_keys(
    tmp_path: Path,
) -> None:
    api = MemoryBatches(max_requests=2)
    await run_all(client(api, tmp_path), [request(n) for n in range(3)])
    state = BatchState.beside(tmp_path / "o.jsonl")
    assert [r.batch_id for r in state.records] == ["b1", "b2"]
    key = request(2).key("memory", "m")
    holder = state.holder(key)
    assert holder is not None and holder.batch_id == "b2"
    # A rerun polls that batch again instead of sending the request.
    again = MemoryBatches()
    again.batches = api.batches
    replies = await run_all(client(again, tmp_path), [request(2)])
    assert replies[0].content.startswith("2:") and len(again.batches) == 2


async def test_a_refused_submission_fails_its_calls_with_the_providers_error(
    tmp_path: Path,
) -> None:
    api = MemoryBatches()
    api.fail_submit = ApiError("openai API answered HTTP 400: bad file", 400)
    with pytest.raises(ApiError, match="bad file"):
        await run_all(client(api, tmp_path), [request(1)])
    assert not (tmp_path / "o.jsonl.batches").exists()


def test_an_unreadable_batch_record_stops_the_run_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "o.jsonl.batches"
    folder.mkdir()
    (folder / "000001-b1.json").write_text("{not json")
    with pytest.raises(InputFileError, match=r"000001-b1\.json"):
        BatchState.beside(tmp_path / "o.jsonl")


@pytest.mark.parametrize("batch_was_made", [False, True])
async def test_an_upload_whose_batch_went_unrecorded_is_found_or_made_on_the_next_run(
    tmp_path: Path, batch_was_made: bool
) -> None:
    api = MemoryBatches()
    api.uses_uploads = True
    api.fail_submit = ApiError("the run died here", 500)  # after the upload, before the batch
    with pytest.raises(ApiError):
        await run_all(client(api, tmp_path), [request(1), request(2)])
    [intent] = BatchState.beside(tmp_path / "o.jsonl").intents()
    assert intent.upload_id == "u1" and api.batches == []
    api.fail_submit = None
    if batch_was_made:  # the provider had created it; only our record was missing
        await api.submit([], "u1")
    replies = await run_all(client(api, tmp_path), [request(1), request(2)])
    assert [r.content[:2] for r in replies] == ["1:", "2:"]
    assert list(api.uploads) == ["u1"] and len(api.batches) == 1  # nothing uploaded or sent twice
    assert BatchState.beside(tmp_path / "o.jsonl").intents() == []


def test_batch_progress_prints_a_line_when_a_batch_changes_state_not_per_reply() -> None:
    import io

    from research_judge.clients.batch import BatchCounters
    from research_judge.engine.batch_progress import BatchProgress

    stream = io.StringIO()
    progress = BatchProgress(stream)
    counters = BatchCounters(submitted=1, in_progress=1, requests_left=1500)
    counters.statuses["b1"] = "in_progress"
    progress(counters)
    counters.requests_left = 1499  # one reply: no new line
    progress(counters)
    counters.in_progress, counters.ended, counters.failed_lines = 0, 1, 3
    counters.statuses["b1"] = "completed"
    progress(counters)
    lines = stream.getvalue().splitlines()
    assert lines == [
        "batches: 1 submitted, 1 in progress, 0 ended | failed lines 0 (expired 0) "
        "| requests left 1.5k",
        "batches: 1 submitted, 0 in progress, 1 ended | failed lines 3 (expired 0) "
        "| requests left 1.5k",
    ]
    quiet = io.StringIO()
    BatchProgress(quiet, enabled=False)(counters)
    assert quiet.getvalue() == ""


async def test_an_unreadable_results_file_fails_the_calls_instead_of_leaving_them_waiting(
    tmp_path: Path,
) -> None:
    class Garbled(MemoryBatches):
        async def results(self, batch_id: str, status: BatchStatus) -> dict[str, Any]:
            return dict(json.loads("{not json"))

    with pytest.raises(ApiError, match="internal error reading batch b1"):
        await asyncio.wait_for(run_all(client(Garbled(), tmp_path), [request(1)]), timeout=10)
