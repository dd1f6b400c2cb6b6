"""A fake provider on 127.0.0.1 for the batch engine and the Anthropic client: real HTTP, real SDKs.

    with FakeBatchServer(responder, polls_to_finish=2) as srv:
        OpenAIClient("gpt-4o-mini", api_key="sk-test", base_url=srv.openai_base_url)
        AnthropicClient("claude-x", api_key="sk-test", base_url=srv.anthropic_base_url)

It speaks, in the providers' wire shapes:

- OpenAI: ``POST /v1/chat/completions``, ``POST /v1/files`` (multipart, purpose ``batch``),
  ``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches`` (list),
  ``GET /v1/batches/{id}``,
  ``POST /v1/batches/{id}/cancel``;
- Anthropic: ``POST /v1/messages``, ``POST /v1/messages/batches``,
  ``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``.

``responder(body)`` returns the reply text for one request body (a chat completion body or the
``params`` of a Message Batch request; the same function answers direct calls). A batch moves on
by one status at each poll (OpenAI ``validating`` -> ``in_progress`` -> ``finalizing`` ->
``completed``; Anthropic ``in_progress`` -> ``ended``) and finishes at the ``polls_to_finish``-th
poll. ``fail_line(custom_id, body)`` may return an HTTP status to fail that line (it lands in
OpenAI's error file, or as an Anthropic ``errored`` result); ``expire_batches`` ends that many
batches (the first ones created) as expired, every request unanswered. ``fail_status`` answers
every direct call with that HTTP status (and ``Retry-After`` when ``retry_after`` is set);
``refuse_batches`` answers every upload or batch creation with that status.
Batches live in the server, not the client, so a client killed while a batch is out can pick it
up again; ``stats`` counts every request received per ``custom_id`` so a test can prove nothing
was sent twice.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeAlias

from aiohttp import web

from research_judge.cost.tokens import estimate_tokens
from research_judge.testing._server_thread import Closer, ServerThread
from research_judge.testing.fake_openai import FakeReply, chat_completion, text_of

ReplyValue: TypeAlias = str | FakeReply
BatchResponder: TypeAlias = Callable[[dict[str, Any]], ReplyValue | Awaitable[ReplyValue]]
LineFailure: TypeAlias = Callable[[str, dict[str, Any]], int | None]


@dataclass
class BatchServerStats:
    """Counters, updated by the server thread; read them when the client is done."""

    chat_requests: int = 0  # direct POST /v1/chat/completions
    message_requests: int = 0  # direct POST /v1/messages
    files_uploaded: int = 0
    batches_created: int = 0
    polls: int = 0
    # Every batched request received, by custom_id (a count above 1 means it was sent twice).
    batched: Counter[str] = field(default_factory=Counter)
    failed_lines: int = 0
    expired_requests: int = 0


@dataclass
class _Batch:
    id: str
    provider: str  # "openai" or "anthropic"
    requests: list[tuple[str, dict[str, Any]]]
    created: float
    input_file_id: str = ""
    polls: int = 0
    status: str = "validating"
    expire: bool = False
    cancelled: bool = False
    # Filled when the batch ends: OpenAI output/error file ids, Anthropic result lines.
    output_file_id: str | None = None
    error_file_id: str | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


class FakeBatchServer(ServerThread):
    """Context manager running the fake provider; see the module docstring."""

    def __init__(
        self,
        responder: BatchResponder | None = None,
        *,
        polls_to_finish: int = 2,
        fail_line: LineFailure | None = None,
        expire_batches: int = 0,
        fail_status: int | None = None,
        retry_after: float | None = None,
        refuse_batches: int | None = None,
    ) -> None:
        super().__init__("the fake batch server", "fake-batches")
        self.responder: BatchResponder = responder or (lambda body: "{}")
        self.polls_to_finish = max(1, polls_to_finish)
        self.fail_line = fail_line
        self.expire_batches = expire_batches
        self.fail_status = fail_status
        self.retry_after = retry_after
        self.refuse_batches = refuse_batches
        self.stats = BatchServerStats()
        self.batches: dict[str, _Batch] = {}
        self.files: dict[str, bytes] = {}
        self._ids = itertools.count(1)

    @property
    def origin(self) -> str:
        if self._port is None:
            raise RuntimeError("the fake batch server is not running")
        return f"http://127.0.0.1:{self._port}"

    @property
    def openai_base_url(self) -> str:
        return self.origin + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.origin  # the anthropic SDK adds /v1 itself

    # --- the server thread ---------------------------------------------------------------

    async def _open(self) -> tuple[int, Closer]:
        app = web.Application(client_max_size=300 * 1024 * 1024)
        app.add_routes(
            [
                web.post("/v1/chat/completions", self._chat),
                web.post("/v1/files", self._upload),
                web.get("/v1/files/{id}/content", self._file_content),
                web.post("/v1/batches", self._openai_create),
                web.get("/v1/batches", self._openai_list),
                web.get("/v1/batches/{id}", self._openai_retrieve),
                web.post("/v1/batches/{id}/cancel", self._openai_cancel),
                web.post("/v1/messages", self._message),
                web.post("/v1/messages/batches", self._anthropic_create),
                web.get("/v1/messages/batches/{id}", self._anthropic_retrieve),
                web.get("/v1/messages/batches/{id}/results", self._anthropic_results),
            ]
        )
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        server = site._server
        assert server is not None and isinstance(server, asyncio.Server)
        return server.sockets[0].getsockname()[1], runner.cleanup

    # --- direct calls --------------------------------------------------------------------

    async def _chat(self, request: web.Request) -> web.Response:
        self.stats.chat_requests += 1
        body = await request.json()
        if self.fail_status is not None:
            return self._failure(_error_body(self.fail_status))
        return web.json_response(await self._openai_completion(body))

    async def _message(self, request: web.Request) -> web.Response:
        self.stats.message_requests += 1
        body = await request.json()
        if self.fail_status is not None:
            kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}
            error = {"type": kind.get(self.fail_status, "api_error"), "message": "simulated"}
            return self._failure({"type": "error", "error": error})
        return web.json_response(await self._anthropic_message(body))

    def _failure(self, body: dict[str, Any]) -> web.Response:
        """``fail_status`` for a direct call, with ``Retry-After`` when ``retry_after`` is set."""
        headers = {} if self.retry_after is None else {"retry-after": f"{self.retry_after:g}"}
        assert self.fail_status is not None
        return web.json_response(body, status=self.fail_status, headers=headers)

    async def _reply(self, body: dict[str, Any]) -> FakeReply:
        reply = self.responder(body)
        if inspect.isawaitable(reply):
            reply = await reply
        return reply if isinstance(reply, FakeReply) else FakeReply(content=reply)

    async def _openai_completion(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = await self._reply(body)
        prompt = sum(estimate_tokens(text_of(m.get("content"))) for m in body.get("messages", []))
        completion = estimate_tokens(reply.content or reply.refusal or "")
        return chat_completion(body, reply, next(self._ids), prompt, 0, completion)

    async def _anthropic_message(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = await self._reply(body)
        number = next(self._ids)
        stop = {"stop": "end_turn", "length": "max_tokens"}.get(reply.finish_reason, "end_turn")
        if reply.refusal is not None:
            content: list[dict[str, Any]] = [{"type": "text", "text": reply.refusal}]
            stop = "refusal"
        elif isinstance(choice := body.get("tool_choice"), dict) and choice.get("type") == "tool":
            try:
                arguments = json.loads(reply.content or "")
            except ValueError:
                arguments = {"unparsable": reply.content}
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{number}",
                    "name": choice["name"],
                    "input": arguments,
                }
            ]
            stop = "tool_use" if stop == "end_turn" else stop
        else:
            content = [{"type": "text", "text": reply.content or ""}]
        system = "".join(text_of(block.get("text")) for block in body.get("system") or [])
        prompt = estimate_tokens(system) + sum(
            estimate_tokens(text_of(m.get("content"))) for m in body.get("messages", [])
        )
        return {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": str(body.get("model", "fake-model")),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt,
                "output_tokens": estimate_tokens(reply.content or ""),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    # --- OpenAI Files and Batches --------------------------------------------------------

    async def _upload(self, request: web.Request) -> web.Response:
        if self.refuse_batches is not None:
            return _openai_error(self.refuse_batches, "simulated refusal of the batch API")
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return _openai_error(400, "expected a multipart upload with purpose=batch and a file")
        data = upload.file.read()
        file_id = f"file-fake-{next(self._ids)}"
        self.files[file_id] = data
        self.stats.files_uploaded += 1
        return web.json_response(_file_object(file_id, len(data), upload.filename))

    async def _file_content(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["id"])
        if data is None:
            return _openai_error(404, "no such file")
        return web.Response(body=data, content_type="application/octet-stream")

    async def _openai_create(self, request: web.Request) -> web.Response:
        body = await request.json()
        file_id = body.get("input_file_id", "")
        data = self.files.get(file_id)
        if data is None:
            return _openai_error(400, f"no input file {file_id!r}")
        if body.get("endpoint") != "/v1/chat/completions":
            return _openai_error(400, "this fake batches /v1/chat/completions only")
        requests: list[tuple[str, dict[str, Any]]] = []
        for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            item = json.loads(line)
            if item.get("method") != "POST" or item.get("url") != "/v1/chat/completions":
                return _openai_error(400, f"line {number}: method/url must be POST the endpoint")
            requests.append((str(item["custom_id"]), item["body"]))
        ids = [custom_id for custom_id, _ in requests]
        if len(set(ids)) != len(ids):
            return _openai_error(400, "duplicate custom_id in the input file")
        batch = self._new_batch("openai", requests)
        batch.input_file_id = file_id
        return web.json_response(self._openai_batch(batch))

    async def _openai_list(self, request: web.Request) -> web.Response:
        # Newest first, one page (the fake never holds more than a test creates).
        batches = [self._openai_batch(b) for b in self.batches.values() if b.provider == "openai"]
        batches.reverse()
        return web.json_response(
            {
                "object": "list",
                "data": batches,
                "first_id": batches[0]["id"] if batches else None,
                "last_id": batches[-1]["id"] if batches else None,
                "has_more": False,
            }
        )

    async def _openai_retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.provider != "openai":
            return _openai_error(404, "no such batch")
        self.stats.polls += 1
        await self._advance(batch, ("validating", "in_progress", "finalizing"))
        return web.json_response(self._openai_batch(batch))

    async def _openai_cancel(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.provider != "openai":
            return _openai_error(404, "no such batch")
        batch.cancelled = True
        batch.status = "cancelling"
        return web.json_response(self._openai_batch(batch))

    def _openai_batch(self, batch: _Batch) -> dict[str, Any]:
        counts = batch.counts
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "created_at": int(batch.created),
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "request_counts": {
                "total": len(batch.requests),
                "completed": counts["succeeded"],
                "failed": counts["errored"] + counts["expired"],
            },
        }

    # --- Anthropic Message Batches -------------------------------------------------------

    async def _anthropic_create(self, request: web.Request) -> web.Response:
        if self.refuse_batches is not None:
            return _anthropic_error(self.refuse_batches, "simulated refusal of the batch API")
        body = await request.json()
        items = body.get("requests") or []
        requests = [(str(item["custom_id"]), item["params"]) for item in items]
        ids = [custom_id for custom_id, _ in requests]
        if not requests or len(set(ids)) != len(ids):
            return _anthropic_error(400, "requests must be non-empty with unique custom_ids")
        batch = self._new_batch("anthropic", requests)
        batch.status = "in_progress"
        return web.json_response(self._anthropic_batch(batch))

    async def _anthropic_retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.provider != "anthropic":
            return _anthropic_error(404, "no such batch")
        self.stats.polls += 1
        await self._advance(batch, ("in_progress",))
        return web.json_response(self._anthropic_batch(batch))

    async def _anthropic_results(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.status != "ended":
            return _anthropic_error(404, "no results for this batch (yet)")
        text = "".join(json.dumps(line) + "\n" for line in batch.results)
        return web.Response(text=text, content_type="application/binary")

    def _anthropic_batch(self, batch: _Batch) -> dict[str, Any]:
        now = datetime.fromtimestamp(batch.created, UTC)
        counts = batch.counts
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "created_at": now.isoformat(),
            "expires_at": (now + timedelta(hours=24)).isoformat(),
            "ended_at": datetime.now(UTC).isoformat() if ended else None,
            "results_url": f"{self.origin}/v1/messages/batches/{batch.id}/results"
            if ended
            else None,
            "request_counts": {
                "processing": 0 if ended else len(batch.requests),
                "succeeded": counts["succeeded"],
                "errored": counts["errored"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
        }

    # --- shared --------------------------------------------------------------------------

    def _new_batch(self, provider: str, requests: list[tuple[str, dict[str, Any]]]) -> _Batch:
        prefix = "batch_fake_" if provider == "openai" else "msgbatch_fake_"
        batch = _Batch(f"{prefix}{next(self._ids)}", provider, requests, time.time())
        batch.expire = self.stats.batches_created < self.expire_batches
        self.stats.batches_created += 1
        self.stats.batched.update(custom_id for custom_id, _ in requests)
        self.batches[batch.id] = batch
        return batch

    async def _advance(self, batch: _Batch, steps: tuple[str, ...]) -> None:
        """One poll: the next status, and the results once the batch is due to end."""
        if batch.status in ("completed", "expired", "cancelled", "ended", "failed"):
            return
        batch.polls += 1
        if batch.polls < self.polls_to_finish and not batch.cancelled:
            batch.status = steps[min(batch.polls, len(steps) - 1)]
            return
        if batch.provider == "openai":
            await self._finish_openai(batch)
        else:
            await self._finish_anthropic(batch)

    async def _finish_openai(self, batch: _Batch) -> None:
        output: list[str] = []
        errors: list[str] = []
        for number, (custom_id, body) in enumerate(batch.requests):
            line_id = f"batch_req_{batch.id}_{number}"
            if batch.expire or batch.cancelled:
                kind = "expired" if batch.expire else "canceled"
                batch.counts[kind] += 1
                self.stats.expired_requests += batch.expire
                code = "batch_expired" if batch.expire else "batch_cancelled"
                error = {"code": code, "message": f"This request was not run: batch {kind}."}
                errors.append(_line(line_id, custom_id, None, error))
                continue
            status = self.fail_line(custom_id, body) if self.fail_line else None
            if status is not None:
                batch.counts["errored"] += 1
                self.stats.failed_lines += 1
                reply = {"status_code": status, "request_id": line_id, "body": _error_body(status)}
                errors.append(_line(line_id, custom_id, reply, None))
                continue
            completion = await self._openai_completion(body)
            batch.counts["succeeded"] += 1
            reply = {"status_code": 200, "request_id": line_id, "body": completion}
            output.append(_line(line_id, custom_id, reply, None))
        if output:
            batch.output_file_id = self._store_file("".join(output))
        if errors:
            batch.error_file_id = self._store_file("".join(errors))
        batch.status = (
            "expired" if batch.expire else "cancelled" if batch.cancelled else "completed"
        )

    async def _finish_anthropic(self, batch: _Batch) -> None:
        for custom_id, params in batch.requests:
            result: dict[str, Any]
            if batch.expire:
                result = {"type": "expired"}
                self.stats.expired_requests += 1
            elif batch.cancelled:
                result = {"type": "canceled"}
            elif (
                status := self.fail_line(custom_id, params) if self.fail_line else None
            ) is not None:
                self.stats.failed_lines += 1
                kind = "api_error" if status >= 500 else "invalid_request_error"
                error = {"type": kind, "message": f"simulated failure (HTTP {status})"}
                result = {"type": "errored", "error": {"type": "error", "error": error}}
            else:
                result = {"type": "succeeded", "message": await self._anthropic_message(params)}
            batch.counts[result["type"]] += 1
            batch.results.append({"custom_id": custom_id, "result": result})
        batch.status = "ended"

    def _store_file(self, text: str) -> str:
        file_id = f"file-fake-{next(self._ids)}"
        self.files[file_id] = text.encode("utf-8")
        return file_id


def _line(
    line_id: str, custom_id: str, response: dict[str, Any] | None, error: dict[str, Any] | None
) -> str:
    return (
        json.dumps({"id": line_id, "custom_id": custom_id, "response": response, "error": error})
        + "\n"
    )


def _error_body(status: int) -> dict[str, Any]:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": f"simulated failure (HTTP {status})", "type": kind, "code": None}}


def _file_object(file_id: str, size: int, filename: str) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": "batch",
        "status": "processed",
    }


def _openai_error(status: int, message: str) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return web.json_response(body, status=status)


def _anthropic_error(status: int, message: str) -> web.Response:
    kinds = {404: "not_found_error", 401: "authentication_error", 403: "permission_error"}
    kind = kinds.get(status, "invalid_request_error")
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return web.json_response(body, status=status)
