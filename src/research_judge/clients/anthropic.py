"""The judge over Anthropic's Messages API.

Two ways to get JSON back, chosen by ``mode``:

- ``tool`` (default): one strict tool whose ``input_schema`` is the schema, forced with
  ``tool_choice``; the content is the tool input re-serialised as JSON;
- ``native``: ``output_config={"format": {"type": "json_schema", "schema": ...}}``; the content is
  the reply text.

The static instructions go first as a system block marked ``cache_control: ephemeral`` so they are
the cached prompt prefix across sessions. This SDK version has no ``temperature`` parameter, so
the request's temperature is not sent (it still takes part in the request key).
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message as AnthropicMessage

from research_judge.clients import _http
from research_judge.clients._http import DEFAULT_TIMEOUT, AnthropicMode
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.clients.variant import judge_variant
from research_judge.errors import ApiError, JudgeRefusal, OutputTruncated

_ENV_KEY = "ANTHROPIC_API_KEY"
_ENV_URL = "ANTHROPIC_BASE_URL"


class AnthropicClient:
    """A ``JudgeClient`` speaking ``/v1/messages``."""

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        mode: AnthropicMode = "tool",
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        _http.check_mode(self.provider, mode)
        self.model = model
        self.mode: AnthropicMode = mode
        self._api_key = _http.resolve_api_key(api_key, _ENV_KEY, self.provider)
        self._client = anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=_http.resolve_base_url(base_url, _ENV_URL),
            max_retries=0,
            timeout=timeout,
            # aiohttp as the transport (the SDK's own option), as for OpenAI, where at batch scale
            # it halves the client CPU per call against httpx (benchmarks/README.md).
            http_client=http_client or anthropic.DefaultAioHttpClient(),
        )
        self.base_url = str(self._client.base_url)
        self.variant = judge_variant(self.provider, self.base_url, mode)

    @property
    def sdk(self) -> anthropic.AsyncAnthropic:
        """The SDK client (the batch engine uses its Message Batches resource)."""
        return self._client

    def __repr__(self) -> str:  # never shows the key
        return (
            f"AnthropicClient(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r})"
        )

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        try:
            message = await self._client.messages.create(**self.request_body(request))
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc, request) from None
        except anthropic.APIConnectionError as exc:
            timed_out = isinstance(exc, anthropic.APITimeoutError)
            what: _http.ConnectionFailure = "timed out" if timed_out else "could not connect"
            # The SDK's own message is generic; its cause says refused, DNS or certificate.
            reason = _http.redact(str(exc.__cause__ or ""), self._api_key)
            raise _http.connection_error(
                self.provider, self.base_url, request.session_id, what, reason
            ) from None
        except anthropic.APIError as exc:
            message_text = _http.redact(exc.message, self._api_key)
            raise ApiError(f"{self.provider} API error: {message_text}") from None
        return self.read_message(message, request)

    async def aclose(self) -> None:
        await self._client.close()

    def request_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The JSON body of ``POST /v1/messages`` for this request, passed to ``messages.create``
        as its keyword arguments."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "system": [
                {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        if self.mode == "tool":
            body["tools"] = [
                {
                    "name": request.schema_name,
                    "description": f"Submit the {request.call} reply as the tool input.",
                    "input_schema": request.schema,
                    "strict": True,
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": request.schema_name}
        else:
            body["output_config"] = {"format": {"type": "json_schema", "schema": request.schema}}
        return body

    def read_message(self, message: AnthropicMessage, request: JudgeRequest) -> JudgeResponse:
        """Our response from a Message (a direct reply or a batch result)."""
        label = f"session {request.session_id!r} ({request.call})"
        stop = message.stop_reason
        usage = _usage(message)  # billed whatever the reply says: counted on every path
        if stop == "max_tokens":
            raise OutputTruncated(f"{label}: reply truncated at max_output_tokens", usage)
        if stop == "refusal":
            raise JudgeRefusal(f"{label}: the model refused to answer", usage)
        if self.mode == "tool":
            for block in message.content:
                if block.type == "tool_use" and block.name == request.schema_name:
                    content = json.dumps(block.input, ensure_ascii=False)
                    return JudgeResponse(content, usage, stop)
            raise JudgeRefusal(
                f"{label}: the model did not call the {request.schema_name} tool", usage
            )
        text = "".join(block.text for block in message.content if block.type == "text")
        if not text:
            raise JudgeRefusal(f"{label}: the reply was empty", usage)
        return JudgeResponse(text, usage, stop)

    def _status_error(self, exc: anthropic.APIStatusError, request: JudgeRequest) -> ApiError:
        return _http.error_for_status(
            provider=self.provider,
            status=exc.status_code,
            detail=exc.api_message or exc.message,
            headers=exc.response.headers,
            session_id=request.session_id,
            secret=self._api_key,
            env_var=_ENV_KEY,
        )


def _usage(message: AnthropicMessage) -> Usage:
    usage = message.usage
    written = usage.cache_creation_input_tokens or 0
    read = usage.cache_read_input_tokens or 0
    # Anthropic's input_tokens excludes both cache figures; ours is the whole prompt, as OpenAI's.
    return Usage(
        input_tokens=usage.input_tokens + written + read,
        cached_input_tokens=read,
        output_tokens=usage.output_tokens,
    )
