"""The judge over Chat Completions: OpenAI itself and every OpenAI-compatible server.

Servers disagree on structured output, so the way the schema is sent is a ``mode``:

- ``json_schema``: ``response_format={"type": "json_schema", ..., "strict": true}`` (OpenAI, vLLM);
- ``json_object``: ``response_format={"type": "json_object", "schema": ...}`` (llama.cpp style);
- ``tool``: one function tool whose parameters are the schema, forced with ``tool_choice``.

Each call goes through the ``openai`` SDK's low-level ``post("/chat/completions", body=...,
cast_to=httpx2.Response)`` (its auth, errors and transport; not ``create``'s per-request TypedDict
transform nor its typed response) on the SDK's aiohttp transport, with the SDK's own retries off:
the engine retries, using the ``retry_after`` our errors carry. The body is built once here and the
reply is read with our own small pydantic models, because compatible servers vary in everything the
judge does not read. The SDK reads ``OPENAI_ORG_ID`` and ``OPENAI_PROJECT_ID`` itself; the key and
base URL are resolved here so a missing one is a clear configuration error. The proxy
(``_proxy.env_proxy``) and the TLS trust (``httpx2.create_ssl_context``:
``SSL_CERT_FILE``/``SSL_CERT_DIR``, certifi) are read once from the environment when the client is
built.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal, cast

import aiohttp
import httpx2
import openai
from pydantic import BaseModel, ConfigDict, ValidationError
from yarl import URL

from research_judge._version import __version__
from research_judge.clients import _http
from research_judge.clients._http import DEFAULT_TIMEOUT, OpenAIMode
from research_judge.clients._proxy import env_proxy, is_local
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.clients.text_limits import with_text_limits
from research_judge.clients.variant import judge_variant
from research_judge.errors import ApiError, ConfigError, JudgeRefusal, OutputTruncated
from research_judge.safety.settings import redact_url

TokenLimitField = Literal["max_completion_tokens", "max_tokens"]
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_ENV_KEY = "OPENAI_API_KEY"
_ENV_URL = "OPENAI_BASE_URL"
_NO_KEY = "no-key-needed"


class OpenAIClient:
    """A ``JudgeClient`` speaking ``POST {base_url}/chat/completions`` through the openai SDK.

    ``token_limit_field`` names the length cap sent; by default ``max_completion_tokens`` to
    OpenAI's own endpoints (its current models want it) and ``max_tokens`` to every other server
    (llama.cpp's ignores the newer field and generates to the end of its context). Other servers
    also get the schema's free-text caps (``clients.text_limits``), which OpenAI's strict mode
    would refuse.
    ``http_client`` replaces the SDK's aiohttp transport (tests). The SDK client is built on
    the first call in each event loop (an aiohttp session cannot outlive its loop) and closed by
    ``aclose()``; connections are kept alive between calls.
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
        token_limit_field: TokenLimitField | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        _http.check_mode(self.provider, mode)
        self.model = model
        self.mode: OpenAIMode = mode
        self.base_url = _checked_base_url(_http.resolve_base_url(base_url, _ENV_URL))
        openai_itself = _is_openai(self.base_url)
        # Every compatible server reads max_tokens; llama.cpp's silently drops the newer field.
        self.token_limit_field: TokenLimitField = token_limit_field or (
            "max_completion_tokens" if openai_itself else "max_tokens"
        )
        self.text_limits = not openai_itself
        # Local servers (llama.cpp, Ollama, vLLM, serve-fake) mostly want no key: none is needed,
        # and without one no Authorization header is sent (see ``_headers``).
        local = is_local(URL(self.base_url).host or "")
        self._api_key = _http.resolve_api_key(api_key, _ENV_KEY, self.provider, required=not local)
        self.variant = judge_variant(self.provider, self.base_url, mode)
        self.timeout = timeout
        self._proxy = env_proxy(self.base_url + "/chat/completions")
        self._given_http_client = http_client
        uses_tls = any(
            u is not None and URL(u).scheme == "https" for u in (self.base_url, self._proxy)
        )
        self._tls = httpx2.create_ssl_context() if uses_tls else None
        self._sdk: openai.AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIClient(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r})"

    @property
    def sdk(self) -> openai.AsyncOpenAI:
        """The SDK client for the running event loop (the batch engine uses its files and
        batches resources)."""
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._loop is not loop:
            # A client left open in a loop that has ended cannot be closed any more: drop it.
            http_client = self._given_http_client or openai.DefaultAioHttpClient(
                # A redirect means a wrong base URL; following it would turn a POST into a GET.
                follow_redirects=False,
                # The environment was read once, above: proxy, NO_PROXY, TLS trust.
                trust_env=False,
                proxy=self._proxy,
                verify=self._tls if self._tls is not None else True,
                # The engine bounds the requests in flight; the pool must not bound them again.
                limits=httpx2.Limits(max_connections=None, max_keepalive_connections=None),
            )
            self._sdk = openai.AsyncOpenAI(
                # The SDK insists on a key; with none, the placeholder is never sent (_headers).
                api_key=self._api_key or _NO_KEY,
                base_url=self.base_url,
                max_retries=0,
                timeout=self.timeout,
                http_client=http_client,
                default_headers={"User-Agent": f"research-judge/{__version__}"},
            )
            self._loop = loop
        return self._sdk

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        headers = self._headers(request)
        try:
            # The SDK's low-level post: its auth, errors, timeouts and transport, without the
            # per-request TypedDict transform of create() (which only walks our own dict) and
            # without a typed response: the body is read once, by _parse_completion.
            raw = await self.sdk.post(
                "/chat/completions",
                body=self.request_body(request),
                cast_to=httpx2.Response,
                options={"headers": headers} if headers else {},
            )
        except openai.APIStatusError as exc:
            raise self._status_error(exc, request) from None
        except openai.APIConnectionError as exc:
            raise self._connection_error(exc, request) from None
        except openai.APIError as exc:
            detail = _http.redact(exc.message, self._api_key)
            raise ApiError(f"{self.provider} API error: {detail}") from None
        return self.read_completion(raw.content, request)

    def read_completion(
        self, content: bytes | str | dict[str, Any], request: JudgeRequest
    ) -> JudgeResponse:
        """Our response from the body of a chat completion (a direct reply or a batch line)."""
        try:
            if isinstance(content, dict):
                completion = _Completion.model_validate(content)
            else:
                completion = _parse_completion(content)
        except (ValueError, RecursionError):
            raise ApiError(
                f"{self.provider} at {self.base_url} answered session {request.session_id!r} "
                "with a body that is not a chat completion"
            ) from None
        return self._response(completion, request)

    async def aclose(self) -> None:
        if self._sdk is not None:
            sdk, self._sdk, self._loop = self._sdk, None, None
            await sdk.close()

    def _headers(self, request: JudgeRequest) -> dict[str, Any] | None:
        """This request's extra headers: no Authorization at all when there is no key (a local
        server)."""
        headers: dict[str, Any] = {}
        if not self._api_key:
            headers["Authorization"] = openai.Omit()
        return headers or None

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
        if self.text_limits:
            schema = with_text_limits(schema)
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
        # The order create() sends (model, messages, then the SDK's parameters by name): the
        # low-level post sends this dict as it is, and the wire stays what it was.
        head = {"model": body.pop("model"), "messages": body.pop("messages")}
        return head | dict(sorted(body.items()))

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
        if _cut_at_budget(content, completion, request):
            # Servers in tool mode report "tool_calls" even when the cap cut the arguments.
            raise OutputTruncated(
                f"{label}: reply truncated at max_output_tokens (unfinished JSON at the end of "
                f"the {request.max_output_tokens}-token budget)",
                usage,
            )
        return JudgeResponse(content=content, usage=usage, stop_reason=finish)

    def _connection_error(self, exc: openai.APIConnectionError, request: JudgeRequest) -> ApiError:
        # The SDK wraps httpx's exception, which wraps aiohttp's: the innermost says what
        # happened (httpx's mapping calls a dropped connection a connect timeout).
        cause = _root_cause(exc)
        if isinstance(cause, aiohttp.ClientHttpProxyError):
            # The proxy, not the provider, answered (to an https CONNECT): 407 will not heal.
            if cause.status == 407:
                return ApiError(
                    f"{self.provider}: the proxy asked for credentials (HTTP 407); "
                    "check HTTPS_PROXY / HTTP_PROXY",
                    407,
                )
            return _http.connection_error(
                self.provider,
                self.base_url,
                request.session_id,
                "could not connect",
                f"the proxy answered HTTP {cause.status}",
            )
        what: _http.ConnectionFailure
        if isinstance(cause, TimeoutError) or (
            isinstance(exc, openai.APITimeoutError) and cause is exc
        ):
            what, reason = "timed out", ""
        else:
            # Refused, DNS or certificate before anything was sent; otherwise the server went
            # away mid-exchange (disconnected, reset, or a body cut short).
            connecting = isinstance(cause, aiohttp.ClientConnectorError)
            what = "could not connect" if connecting else "lost the connection"
            reason = _http.redact(str(cause), self._api_key)
        return _http.connection_error(
            self.provider, self.base_url, request.session_id, what, reason
        )

    def _status_error(self, exc: openai.APIStatusError, request: JudgeRequest) -> ApiError:
        return status_error(
            self.provider,
            exc.response,
            request.session_id,
            self._api_key,
            refused_mode=(self.mode, self.base_url),
        )


def status_error(
    provider: str,
    response: httpx2.Response,
    session_id: str,
    secret: str,
    *,
    refused_mode: tuple[str, str] | None = None,
) -> ApiError:
    """Our error for an HTTP error answer from an OpenAI-style API. With ``refused_mode``
    (the mode and base URL sent), a refusal of the structured-output parameters is a
    ``RequestFormatError`` that names the mode."""
    status, headers, content = response.status_code, response.headers, response.content
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
    code = error.get("code") if isinstance(error.get("code"), str) else None
    # A context refusal may name the tools or response format too; it is re-planned, not a
    # refused mode.
    if refused_mode is not None and not _http.is_context_error(status, code, detail):
        mode, base_url = refused_mode
        refused = _http.format_rejection(provider, mode, base_url, status, detail)
        if refused is not None:
            return refused
    return _http.error_for_status(
        provider=provider,
        status=status,
        detail=detail,
        headers=headers,
        session_id=session_id,
        secret=secret,
        env_var=_ENV_KEY,
        # OpenAI sends 429 for an exhausted quota too; waiting will not fix that one.
        permanent=error.get("code") == "insufficient_quota",
        code=code,
    )


def _cut_at_budget(content: str, completion: _Completion, request: JudgeRequest) -> bool:
    """Unfinished JSON that used up the output budget: a reply cut short, whatever the server's
    finish reason says. (Invalid JSON well within the budget is the model's own mistake.)"""
    usage = completion.usage
    used = usage.completion_tokens if usage is not None else None
    budget = request.max_output_tokens
    if used is None or used < budget - max(8, budget // 50):
        return False
    try:
        json.loads(content)
    except ValueError:
        return True
    return False


def _is_openai(base_url: str) -> bool:
    """OpenAI's own endpoint or Azure's: they want ``max_completion_tokens``, and their strict
    mode refuses schema keywords such as ``maxLength``."""
    host = (URL(base_url).host or "").lower()
    return host == "api.openai.com" or host.endswith(".openai.azure.com")


def _root_cause(exc: BaseException) -> BaseException:
    """The transport's own exception under the SDK's and httpx's wrappers (or ``exc``)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, aiohttp.ClientError | TimeoutError):
            return seen
        seen = seen.__cause__
    return exc


def _checked_base_url(configured: str | None) -> str:
    """The base URL to call: a full http(s) URL, else a configuration error now, not a
    connection error on every session later."""
    if configured is None:
        return DEFAULT_BASE_URL
    url = URL(configured)
    if url.scheme not in ("http", "https") or not url.host or url.query_string or url.fragment:
        raise ConfigError(
            f"base URL {redact_url(configured)!r} is not an http(s) URL with a host and no query "
            "(e.g. http://127.0.0.1:8000/v1)"
        )
    return configured


def _parse_completion(content: bytes | str) -> _Completion:
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
