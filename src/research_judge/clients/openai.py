"""The judge over Chat Completions: OpenAI itself and every OpenAI-compatible server.

Servers disagree on structured output, so the way the schema is sent is a ``mode``:

- ``json_schema``: ``response_format={"type": "json_schema", ..., "strict": true}`` (OpenAI, vLLM);
- ``json_object``: ``response_format={"type": "json_object", "schema": ...}`` (llama.cpp style);
- ``tool``: one function tool whose parameters are the schema, forced with ``tool_choice``.

The reply is returned as text; the caller validates it. The SDK's own retries are off: the engine
retries with tenacity, using the ``retry_after`` our errors carry.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import httpx2
import openai
from pydantic import BaseModel, ConfigDict, ValidationError

from research_judge.clients import _http
from research_judge.clients._http import OpenAIMode
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.errors import ApiError, JudgeRefusal

TokenLimitField = Literal["max_completion_tokens", "max_tokens"]
DEFAULT_TIMEOUT = 300.0
_ENV_KEY = "OPENAI_API_KEY"
_ENV_URL = "OPENAI_BASE_URL"


class OpenAIJudge:
    """A ``JudgeClient`` speaking ``/v1/chat/completions``.

    ``token_limit_field`` names the length cap sent: OpenAI's current models want
    ``max_completion_tokens``; some older compatible servers only read ``max_tokens``.
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        mode: OpenAIMode = "json_schema",
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx2.AsyncClient | None = None,
        token_limit_field: TokenLimitField = "max_completion_tokens",
    ) -> None:
        _http.check_mode(self.provider, mode)
        self.model = model
        self.mode: OpenAIMode = mode
        self.token_limit_field: TokenLimitField = token_limit_field
        self._api_key = _http.resolve_api_key(api_key, _ENV_KEY, self.provider)
        self._client = openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=_http.resolve_base_url(base_url, _ENV_URL),
            max_retries=0,
            timeout=timeout,
            # aiohttp as the transport (the SDK's own option): at batch scale the OpenAI client
            # spends about half the CPU per call it does on httpx (benchmarks/README.md).
            http_client=http_client or openai.DefaultAioHttpClient(),
        )
        self.base_url = str(self._client.base_url)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIJudge(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r})"

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        # ``post`` (the SDK's documented way to send a body it does not model) rather than
        # ``chat.completions.create``: the body is already in wire form, and skipping the SDK's
        # typed transform and response model cut client CPU per call by about 15% at batch scale
        # (benchmarks/README.md). Auth, timeouts and error classes are still the SDK's.
        try:
            raw = await self._client.post(
                "/chat/completions", body=self.request_body(request), cast_to=httpx2.Response
            )
        except openai.APIStatusError as exc:
            raise self._status_error(exc, request) from None
        except openai.APIConnectionError as exc:
            timed_out = isinstance(exc, openai.APITimeoutError)
            raise _http.connection_error(
                self.provider, self.base_url, request.session_id, timed_out
            ) from None
        except openai.APIError as exc:
            message = _http.redact(exc.message, self._api_key)
            raise ApiError(f"{self.provider} API error: {message}") from None
        try:
            completion = _Completion.model_validate_json(raw.content)
        except ValidationError:
            raise ApiError(
                f"{self.provider} at {self.base_url} answered session {request.session_id!r} "
                "with a body that is not a chat completion"
            ) from None
        return self._response(completion, request)

    async def aclose(self) -> None:
        await self._client.close()

    def request_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The JSON body of ``POST /chat/completions`` for this request (public for tests and
        benchmarks)."""
        messages: list[dict[str, str]] = [{"role": "system", "content": request.system}]
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            self.token_limit_field: request.max_output_tokens,
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        name, schema = request.schema_name, request.schema
        if self.mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        elif self.mode == "json_object":
            # "schema" beside json_object is llama.cpp's extension; OpenAI's own types lack it.
            body["response_format"] = {"type": "json_object", "schema": schema}
        else:
            function = {
                "name": name,
                "description": f"Submit the {request.call} reply; arguments follow the schema.",
                "parameters": schema,
                "strict": True,
            }
            body["tools"] = [{"type": "function", "function": function}]
            body["tool_choice"] = {"type": "function", "function": {"name": name}}
        return body

    def _response(self, completion: _Completion, request: JudgeRequest) -> JudgeResponse:
        label = f"session {request.session_id!r} ({request.call})"
        if not completion.choices:
            raise JudgeRefusal(f"{label}: the server returned no choices")
        choice = completion.choices[0]
        finish = choice.finish_reason
        if finish == "length":
            raise JudgeRefusal(f"{label}: reply truncated at max_output_tokens")
        if finish == "content_filter":
            raise JudgeRefusal(f"{label}: reply withheld by the provider's content filter")
        message = choice.message
        if message.refusal:
            raise JudgeRefusal(f"{label}: the model refused: {message.refusal[:300]}")
        content = message.content
        if self.mode == "tool":
            # A server that ignores tool_choice may answer in plain content: the caller judges it.
            for call in message.tool_calls or ():
                function = call.function
                if function is not None and function.name == request.schema_name:
                    content = function.arguments
                    break
        if not content:
            raise JudgeRefusal(f"{label}: the reply was empty")
        return JudgeResponse(content=content, usage=_usage(completion), stop_reason=finish)

    def _status_error(self, exc: openai.APIStatusError, request: JudgeRequest) -> ApiError:
        # The SDK unwraps {"error": {...}}; compatible servers may send other shapes.
        body = exc.body if isinstance(exc.body, dict) else {}
        inner = body.get("error", body)
        error = cast(dict[str, Any], inner) if isinstance(inner, dict) else {"message": inner}
        detail = str(error.get("message") or exc.message)
        return _http.error_for_status(
            provider=self.provider,
            status=exc.status_code,
            detail=detail,
            headers=exc.response.headers,
            session_id=request.session_id,
            secret=self._api_key,
            env_var=_ENV_KEY,
            # OpenAI sends 429 for an exhausted quota too; waiting will not fix that one.
            permanent=error.get("code") == "insufficient_quota",
        )


# Just the parts of a chat completion the judge reads; compatible servers vary in the rest.
class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Function(_Reply):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(_Reply):
    function: _Function | None = None


class _Message(_Reply):
    content: str | None = None
    refusal: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(_Reply):
    message: _Message
    finish_reason: str | None = None


class _TokenDetails(_Reply):
    cached_tokens: int | None = None


class _CompletionUsage(_Reply):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _TokenDetails | None = None


class _Completion(_Reply):
    choices: list[_Choice] = []
    usage: _CompletionUsage | None = None


def _usage(completion: _Completion) -> Usage:
    usage = completion.usage
    if usage is None:  # some compatible servers omit it
        return Usage()
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    # prompt_tokens already includes the cached ones: input_tokens is the whole prompt.
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        cached_input_tokens=cached,
        output_tokens=usage.completion_tokens or 0,
    )
