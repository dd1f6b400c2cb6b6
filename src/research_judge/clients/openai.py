"""The judge over Chat Completions: OpenAI itself and every OpenAI-compatible server.

Servers disagree on structured output, so the way the schema is sent is a ``mode``:

- ``json_schema``: ``response_format={"type": "json_schema", ..., "strict": true}`` (OpenAI, vLLM);
- ``json_object``: ``response_format={"type": "json_object", "schema": ...}`` (llama.cpp style);
- ``tool``: one function tool whose parameters are the schema, forced with ``tool_choice``.

Each call is one JSON POST over aiohttp (``_transport.JsonPoster``), without the openai SDK's
request layer: at batch scale that layer cost about 0.9 ms of CPU per call, over four times what
aiohttp itself spends on the exchange, and it bought nothing here, since the body, the reply
model and the error mapping are ours anyway (``benchmarks/README.md`` has the figures). The
environment is read as the SDK reads it: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``OPENAI_ORG_ID`` and ``OPENAI_PROJECT_ID``. Nothing is retried here: the engine retries, using
the ``retry_after`` our errors carry.
"""

from __future__ import annotations

import json
import os
from typing import Any, Literal, cast

import aiohttp
from pydantic import BaseModel, ConfigDict, ValidationError
from yarl import URL

from research_judge import __version__
from research_judge.clients import _http
from research_judge.clients._http import DEFAULT_TIMEOUT, OpenAIMode
from research_judge.clients._transport import JsonPoster
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.clients.variant import judge_variant
from research_judge.errors import ApiError, ConfigError, JudgeRefusal, OutputTruncated

TokenLimitField = Literal["max_completion_tokens", "max_tokens"]
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_ENV_KEY = "OPENAI_API_KEY"
_ENV_URL = "OPENAI_BASE_URL"
# Optional headers, read from the environment as the openai SDK reads them.
_ENV_HEADERS = {"OPENAI_ORG_ID": "OpenAI-Organization", "OPENAI_PROJECT_ID": "OpenAI-Project"}


class OpenAIClient:
    """A ``JudgeClient`` speaking ``POST {base_url}/chat/completions``.

    ``token_limit_field`` names the length cap sent: OpenAI's current models want
    ``max_completion_tokens``; some older compatible servers only read ``max_tokens``.
    The HTTP session is opened on the first call and closed by ``aclose()``.
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
        token_limit_field: TokenLimitField = "max_completion_tokens",
    ) -> None:
        _http.check_mode(self.provider, mode)
        self.model = model
        self.mode: OpenAIMode = mode
        self.token_limit_field: TokenLimitField = token_limit_field
        self._api_key = _http.resolve_api_key(api_key, _ENV_KEY, self.provider)
        self.base_url = _checked_base_url(_http.resolve_base_url(base_url, _ENV_URL))
        self.variant = judge_variant(self.provider, self.base_url, mode)
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"research-judge/{__version__}",
        }
        for env_var, header in _ENV_HEADERS.items():
            if value := os.environ.get(env_var):
                headers[header] = value
        url = self.base_url.rstrip("/") + "/chat/completions"
        self._http = JsonPoster(url, headers, timeout)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIClient(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r})"

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        payload = json.dumps(self.request_body(request), separators=(",", ":")).encode()
        try:
            status, headers, content = await self._http.post(payload)
        except aiohttp.ClientHttpProxyError as exc:
            # The proxy, not the provider, answered (to an https CONNECT): 407 will not heal.
            if exc.status == 407:
                raise ApiError(
                    f"{self.provider}: the proxy asked for credentials (HTTP 407); "
                    "check HTTPS_PROXY / HTTP_PROXY",
                    407,
                ) from None
            raise _http.connection_error(
                self.provider,
                self.base_url,
                request.session_id,
                "could not connect",
                f"the proxy answered HTTP {exc.status}",
            ) from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise self._connection_error(exc, request) from None
        if not 200 <= status < 300:
            raise self._status_error(status, headers, content, request)
        try:
            completion = _parse_completion(content)
        except (ValueError, RecursionError):
            raise ApiError(
                f"{self.provider} at {self.base_url} answered session {request.session_id!r} "
                "with a body that is not a chat completion"
            ) from None
        return self._response(completion, request)

    async def aclose(self) -> None:
        await self._http.aclose()

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
        usage = _usage(completion)  # billed whatever the reply says: counted on every path
        if not completion.choices:
            raise JudgeRefusal(f"{label}: the server returned no choices", usage)
        choice = completion.choices[0]
        finish = choice.finish_reason
        if finish == "length":
            raise OutputTruncated(f"{label}: reply truncated at max_output_tokens", usage)
        if finish == "content_filter":
            raise JudgeRefusal(f"{label}: reply withheld by the provider's content filter", usage)
        message = choice.message
        if message.refusal:
            raise JudgeRefusal(f"{label}: the model refused: {message.refusal[:300]}", usage)
        content = message.content
        if self.mode == "tool":
            # A server that ignores tool_choice may answer in plain content: the caller judges it.
            for call in message.tool_calls or ():
                function = call.function
                if function is not None and function.name == request.schema_name:
                    content = function.arguments
                    break
        if not content:
            raise JudgeRefusal(f"{label}: the reply was empty", usage)
        return JudgeResponse(content=content, usage=usage, stop_reason=finish)

    def _connection_error(self, exc: Exception, request: JudgeRequest) -> ApiError:
        what: _http.ConnectionFailure
        if isinstance(exc, TimeoutError):  # ServerTimeoutError too; a total timeout is bare
            what, reason = "timed out", ""
        else:
            # Refused, DNS or certificate before anything was sent; otherwise the server went
            # away mid-exchange (disconnected, reset, or a body cut short).
            connecting = isinstance(exc, aiohttp.ClientConnectorError)
            what = "could not connect" if connecting else "lost the connection"
            reason = _http.redact(str(exc), self._api_key)
        return _http.connection_error(
            self.provider, self.base_url, request.session_id, what, reason
        )

    def _status_error(
        self, status: int, headers: Any, content: bytes, request: JudgeRequest
    ) -> ApiError:
        # OpenAI wraps errors as {"error": {"message", "code"}}; compatible servers send other
        # shapes, or no JSON at all.
        try:
            body: Any = json.loads(content)
        except ValueError:
            body = content.decode("utf-8", "replace")
        inner = body.get("error", body) if isinstance(body, dict) else body
        error = cast(dict[str, Any], inner) if isinstance(inner, dict) else {"message": inner}
        message = error.get("message")
        detail = message if isinstance(message, str) else json.dumps(inner)
        if 300 <= status < 400:
            detail = f"redirected to {headers.get('Location', '?')}; check the base URL"
        return _http.error_for_status(
            provider=self.provider,
            status=status,
            detail=detail,
            headers=headers,
            session_id=request.session_id,
            secret=self._api_key,
            env_var=_ENV_KEY,
            # OpenAI sends 429 for an exhausted quota too; waiting will not fix that one.
            permanent=error.get("code") == "insufficient_quota",
            code=error.get("code") if isinstance(error.get("code"), str) else None,
        )


def _checked_base_url(configured: str | None) -> str:
    """The base URL to call: a full http(s) URL, else a configuration error now, not a
    connection error on every session later."""
    if configured is None:
        return DEFAULT_BASE_URL
    url = URL(configured)
    if url.scheme not in ("http", "https") or not url.host or url.query_string or url.fragment:
        raise ConfigError(
            f"base URL {configured!r} is not an http(s) URL with a host and no query "
            "(e.g. http://127.0.0.1:8000/v1)"
        )
    return configured


def _parse_completion(content: bytes) -> _Completion:
    try:
        return _Completion.model_validate_json(content)
    except ValidationError:
        # pydantic's parser refuses a lone surrogate escape (\ud800) that json.loads reads: the
        # reply is then the judge's bad output, re-asked, not a broken body re-sent on every run.
        return _Completion.model_validate(json.loads(content))


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
