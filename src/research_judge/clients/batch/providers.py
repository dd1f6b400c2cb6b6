"""The two provider batch APIs behind one small interface, on the providers' own SDKs.

- OpenAI: upload a JSONL file (``files.create``, purpose ``batch``), ``batches.create`` on
  ``/v1/chat/completions``, poll ``batches.retrieve``, read the output and error files
  (``files.content``); lines are matched by ``custom_id``.
- Anthropic: ``messages.batches.create``, poll ``processing_status``, stream
  ``messages.batches.results``; each result is succeeded / errored / canceled / expired.

Each line's body is the direct client's own request body and each reply is read by the direct
client's own reader, so a batch answer is exactly what a direct call would have returned. These
control calls (upload, create, poll, download) use the SDK's own retries: the engine's
per-request retries do not cover them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Literal, TypeVar

import anthropic
import openai
from anthropic.types.messages import MessageBatchResult

from research_judge.clients import _http
from research_judge.clients.anthropic import AnthropicClient
from research_judge.clients.base import JudgeRequest
from research_judge.clients.batch.api import BatchAPI, BatchStatus, LineResult
from research_judge.clients.openai import OpenAIClient, status_error
from research_judge.errors import ApiError, ContextLengthError, JudgeRefusal, TransientApiError

CONTROL_RETRIES = 5
"""SDK retries for each control call (with the SDKs' backoff and Retry-After)."""

FIND_DEPTH = 1000
"""How many of the latest batches are searched for one created from a given upload."""

T = TypeVar("T")
ClientT = TypeVar("ClientT", OpenAIClient, AnthropicClient)


def _jsonl_line(item: dict[str, Any]) -> bytes:
    """One batch line as the providers count it against their byte limits."""
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


class _ProviderBatches(Generic[ClientT]):
    """What a batch API keeps of the direct client it was made from: that client's identity
    (so cache and record keys match a direct run's) and its connection, closed with it."""

    client: ClientT

    def __init__(self, client: ClientT) -> None:
        self.client = client
        self.provider = client.provider
        self.model = client.model
        self.variant = client.variant  # endpoint and mode: keys match a direct run's

    async def aclose(self) -> None:
        await self.client.aclose()


class OpenAIBatches(_ProviderBatches[OpenAIClient]):
    """The OpenAI Batch API over ``/v1/chat/completions``."""

    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024
    endpoint: Literal["/v1/chat/completions"] = "/v1/chat/completions"

    def _sdk(self) -> openai.AsyncOpenAI:
        return self.client.sdk.with_options(max_retries=CONTROL_RETRIES)

    def line(self, custom_id: str, request: JudgeRequest) -> tuple[Any, int]:
        item = {
            "custom_id": custom_id,
            "method": "POST",
            "url": self.endpoint,
            "body": self.client.request_body(request),
        }
        data = _jsonl_line(item)
        return data, len(data)

    async def upload(self, lines: list[Any]) -> str | None:
        sdk = self._sdk()
        upload = await self._call(
            lambda: sdk.files.create(
                file=("research-judge-batch.jsonl", b"".join(lines), "application/jsonl"),
                purpose="batch",
            )
        )
        return upload.id

    async def submit(self, lines: list[Any], upload_id: str | None) -> str:
        assert upload_id is not None, "OpenAI batches are created from an uploaded file"
        sdk = self._sdk()
        batch = await self._call(
            lambda: sdk.batches.create(
                input_file_id=upload_id,
                endpoint=self.endpoint,
                completion_window="24h",
                metadata={"created_by": "research-judge"},
            )
        )
        return batch.id

    async def find(self, upload_id: str) -> str | None:
        sdk = self._sdk()
        page = await self._call(lambda: sdk.batches.list(limit=100))
        seen = 0
        # Newest first; a batch created from our upload is among the latest few.
        async for batch in page:
            if batch.input_file_id == upload_id:
                return batch.id
            seen += 1
            if seen >= FIND_DEPTH:
                break
        return None

    async def poll(self, batch_id: str) -> BatchStatus:
        sdk = self._sdk()
        batch = await self._call(lambda: sdk.batches.retrieve(batch_id))
        counts = batch.request_counts
        total = counts.total if counts else 0
        done = counts.completed if counts else 0
        failed = counts.failed if counts else 0
        ended = batch.status in ("completed", "expired", "cancelled", "failed")
        if batch.status == "failed":
            # The input was refused as a whole (validation): no line will ever run.
            reasons = (
                "; ".join(e.message or "" for e in (batch.errors.data or ()))
                if batch.errors
                else ""
            )
            raise ApiError(f"openai refused batch {batch_id}: {reasons or 'no reason given'}")
        return BatchStatus(batch.status, ended, total, done, failed)

    async def results(self, batch_id: str, status: BatchStatus) -> dict[str, Any]:
        sdk = self._sdk()
        batch = await self._call(lambda: sdk.batches.retrieve(batch_id))
        lines: dict[str, Any] = {}
        # Errors first, so a custom_id found in both files keeps its answer.
        for file_id in (batch.error_file_id, batch.output_file_id):
            if not file_id:
                continue
            content = await self._download(sdk, file_id)
            for text in content.splitlines():
                if text.strip():
                    item = json.loads(text)
                    lines[str(item.get("custom_id"))] = item
        return lines

    async def _download(self, sdk: openai.AsyncOpenAI, file_id: str) -> bytes:
        content = await self._call(lambda: sdk.files.content(file_id))
        return content.content

    def outcome(self, raw: Any | None, request: JudgeRequest) -> LineResult:
        if raw is None:
            return LineResult(retry="the batch returned no line for this request")
        response = raw.get("response") or {}
        error = raw.get("error") or {}
        status = response.get("status_code")
        if status == 200:
            try:
                return LineResult(self.client.read_completion(response.get("body") or {}, request))
            except (JudgeRefusal, ApiError) as exc:
                return LineResult(error=exc)
        if error.get("code") in ("batch_expired", "batch_cancelled") or status is None:
            return LineResult(retry=str(error.get("message") or error.get("code") or "not run"))
        body = response.get("body") or {}
        inner = body.get("error", body) if isinstance(body, dict) else {}
        message = inner.get("message") if isinstance(inner, dict) else None
        mapped = _http.error_for_status(
            provider=self.provider,
            status=int(status),
            detail=str(message or body),
            headers={},
            session_id=request.session_id,
            secret=None,
            env_var="OPENAI_API_KEY",
            permanent=isinstance(inner, dict) and inner.get("code") == "insufficient_quota",
            code=_code(inner),
        )
        if isinstance(mapped, TransientApiError):
            return LineResult(retry=str(mapped))
        return LineResult(error=mapped)

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except openai.APIStatusError as exc:
            raise status_error(self.provider, exc.response, "", _secret(self.client)) from None
        except openai.APIConnectionError:
            raise TransientApiError(
                f"{self.provider} batch API unreachable at {self.client.base_url}"
            ) from None


class AnthropicBatches(_ProviderBatches[AnthropicClient]):
    """Anthropic Message Batches."""

    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def _sdk(self) -> anthropic.AsyncAnthropic:
        return self.client.sdk.with_options(max_retries=CONTROL_RETRIES)

    def line(self, custom_id: str, request: JudgeRequest) -> tuple[Any, int]:
        item = {"custom_id": custom_id, "params": self.client.request_body(request)}
        # The SDK takes the dict and serialises it again; the size is measured on the same form.
        return item, len(_jsonl_line(item))

    async def upload(self, lines: list[Any]) -> str | None:
        return None  # the requests travel with the create call

    async def submit(self, lines: list[Any], upload_id: str | None) -> str:
        sdk = self._sdk()
        batch = await self._call(lambda: sdk.messages.batches.create(requests=lines))
        return batch.id

    async def find(self, upload_id: str) -> str | None:
        return None

    async def poll(self, batch_id: str) -> BatchStatus:
        sdk = self._sdk()
        batch = await self._call(lambda: sdk.messages.batches.retrieve(batch_id))
        c = batch.request_counts
        total = c.processing + c.succeeded + c.errored + c.canceled + c.expired
        failed = c.errored + c.canceled + c.expired
        ended = batch.processing_status == "ended"
        return BatchStatus(batch.processing_status, ended, total, c.succeeded, failed)

    async def results(self, batch_id: str, status: BatchStatus) -> dict[str, Any]:
        sdk = self._sdk()
        lines: dict[str, Any] = {}
        stream = await self._call(lambda: sdk.messages.batches.results(batch_id))
        async for item in stream:
            lines[item.custom_id] = item.result
        return lines

    def outcome(self, raw: Any | None, request: JudgeRequest) -> LineResult:
        if raw is None:
            return LineResult(retry="the batch returned no result for this request")
        result: MessageBatchResult = raw
        if result.type == "succeeded":
            try:
                return LineResult(self.client.read_message(result.message, request))
            except (JudgeRefusal, ApiError) as exc:
                return LineResult(error=exc)
        if result.type != "errored":
            return LineResult(retry=f"the request was {result.type} before it ran")
        error = result.error.error
        where = f"{self.provider} batch line for session {request.session_id!r}"
        detail = f"{where}: {error.type}: {error.message}"
        if error.type in ("api_error", "overloaded_error", "rate_limit_error", "timeout_error"):
            return LineResult(retry=detail)
        if _http.is_context_error(400, None, error.message):
            return LineResult(error=ContextLengthError(_http.redact(detail, None), 400))
        return LineResult(error=ApiError(_http.redact(detail, None)))

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except anthropic.APIStatusError as exc:
            raise _http.error_for_status(
                provider=self.provider,
                status=exc.status_code,
                detail=exc.message,
                headers=exc.response.headers,
                session_id="",
                secret=_secret(self.client),
                env_var="ANTHROPIC_API_KEY",
            ) from None
        except anthropic.APIConnectionError:
            raise TransientApiError(
                f"{self.provider} batch API unreachable at {self.client.base_url}"
            ) from None


def _code(inner: object) -> str | None:
    code = inner.get("code") if isinstance(inner, dict) else None
    return code if isinstance(code, str) else None


def _secret(client: OpenAIClient | AnthropicClient) -> str:
    return client._api_key  # redaction only; never shown


def batch_api(client: object) -> BatchAPI:
    """The batch API for a direct provider client."""
    if isinstance(client, OpenAIClient):
        return OpenAIBatches(client)
    if isinstance(client, AnthropicClient):
        return AnthropicBatches(client)
    raise TypeError(f"no batch API for {type(client).__name__}")
