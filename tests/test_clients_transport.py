"""Both network clients send through their SDK's aiohttp transport, keep connections alive, and
``aclose()`` releases everything (aiohttp warns "Unclosed client session" for anything left
open). What the OpenAI client hands that transport: event loops, proxies from the environment
(read once), TLS trust."""

from __future__ import annotations

import asyncio
import gc
import ssl
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anthropic
import pytest
import trustme
from aiohttp import web

from research_judge.clients._proxy import env_proxy
from research_judge.clients.anthropic import AnthropicClient
from research_judge.clients.base import JudgeRequest, Message
from research_judge.clients.openai import OpenAIClient
from research_judge.errors import ApiError, ConfigError, TransientApiError
from research_judge.testing import FakeOpenAIServer

from http_stub import StubServer, json_answer

REQUEST = JudgeRequest(
    call="scoring",
    system="instructions",
    messages=(Message("user", "material"),),
    schema_name="scores",
    schema={"type": "object"},
    session_id="s-1",
)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    proxies = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", *proxies):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield


@contextmanager
def resource_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Every ResourceWarning raised inside the block, however often the same one repeats."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        yield caught


def unclosed(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


async def test_openai_reuses_one_connection_and_aclose_releases_it() -> None:
    with FakeOpenAIServer(lambda body: "{}") as server, resource_warnings() as caught:
        judge = OpenAIClient("fake-model", api_key="sk-test-123456", base_url=server.base_url)
        for _ in range(3):
            await judge.complete(REQUEST)
        await judge.aclose()
        await judge.aclose()  # twice is harmless
        del judge
        gc.collect()
    assert server.stats.completed == 3
    assert server.stats.connections == 1  # keep-alive: one connection for every call
    assert unclosed(caught) == []


async def test_openai_can_be_used_again_after_aclose() -> None:
    # The session belongs to the event loop it was opened in; after aclose a new one is opened.
    with FakeOpenAIServer(lambda body: "{}") as server:
        judge = OpenAIClient("fake-model", api_key="sk-test-123456", base_url=server.base_url)
        await judge.complete(REQUEST)
        await judge.aclose()
        await judge.complete(REQUEST)
        await judge.aclose()
    assert server.stats.completed == 2


async def test_anthropic_uses_the_sdks_aiohttp_client_and_aclose_closes_it() -> None:
    with FakeOpenAIServer(lambda body: "{}") as server, resource_warnings() as caught:
        judge = AnthropicClient("fake-model", api_key="sk-test-123456", base_url=server.base_url)
        # No public accessor: the SDK keeps its HTTP client as ``_client``.
        http_client = judge._client._client
        assert isinstance(http_client, anthropic.DefaultAioHttpClient)
        # The fake server has no /v1/messages: a 404, but still a real round trip.
        with pytest.raises(ApiError, match="HTTP 404"):
            await judge.complete(REQUEST)
        assert not http_client.is_closed
        await judge.aclose()
        del judge
        gc.collect()
    assert server.stats.connections >= 1
    assert http_client.is_closed
    assert unclosed(caught) == []


async def test_openai_judge_works_across_event_loops_without_aclose() -> None:
    # A session belongs to its event loop; a judge used by two asyncio.run calls opens a new one.
    with FakeOpenAIServer(lambda body: "{}") as server:
        judge = OpenAIClient("fake-model", api_key="sk-test-123456", base_url=server.base_url)

        def run_once() -> None:
            asyncio.run(judge.complete(REQUEST))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)  # the first loop's session, dropped
            await asyncio.to_thread(run_once)
            await asyncio.to_thread(run_once)
        await judge.aclose()
    assert server.stats.completed == 2


# --- proxies (the autouse fixture above has cleared every proxy variable) -----------------------


async def test_the_proxy_named_by_the_environment_carries_the_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}
    async with StubServer(json_answer(reply)) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        # The judge's host does not exist: only the proxy can have answered.
        judge = OpenAIClient("m", api_key="sk-test-123456", base_url="http://judge.invalid/v1")
        response = await judge.complete(REQUEST)
        await judge.aclose()
    assert response.content == "{}"
    [sent] = proxy.seen
    assert sent.target == "http://judge.invalid/v1/chat/completions"


OPENAI = "https://api.openai.com/v1/chat/completions"


@pytest.mark.parametrize(
    ("environment", "url", "expected"),
    [
        ({"HTTPS_PROXY": "http://proxy.corp:3128"}, OPENAI, "http://proxy.corp:3128"),
        ({"HTTPS_PROXY": "proxy.corp:3128"}, OPENAI, "http://proxy.corp:3128"),  # as curl reads it
        ({"ALL_PROXY": "http://all.corp:1"}, OPENAI, "http://all.corp:1"),
        ({"HTTP_PROXY": "http://proxy.corp:1"}, OPENAI, None),  # no proxy for https named
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "openai.com"}, OPENAI, None),
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}, OPENAI, None),
        ({"HTTP_PROXY": "http://p:1"}, "http://127.0.0.1:8000/v1/chat/completions", None),
        ({"HTTP_PROXY": "http://p:1"}, "http://localhost:8000/v1/chat/completions", None),
        ({"HTTP_PROXY": "http://p:1"}, "http://0.0.0.0:8000/v1/chat/completions", None),
        ({"HTTP_PROXY": "http://p:1"}, "http://[::1]:8000/v1/chat/completions", None),
        ({"HTTP_PROXY": "http://p:1"}, "http://10.1.2.3:8000/v1/chat/completions", "http://p:1"),
    ],
)
def test_the_proxy_is_read_from_the_environment_as_curl_reads_it(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], url: str, expected: str | None
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert env_proxy(url) == expected


def test_a_proxy_aiohttp_cannot_use_is_a_config_error_that_hides_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks5://alice:hunter2pass@127.0.0.1:1080")
    with pytest.raises(ConfigError, match="not an http") as caught:
        OpenAIClient("m", api_key="sk-test-123456")
    assert "hunter2pass" not in str(caught.value)


async def test_a_proxy_asking_for_credentials_is_final_and_never_shows_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with StubServer(lambda seen: web.Response(status=407)) as proxy:
        port = proxy.origin.rsplit(":", 1)[1].rstrip("/")
        monkeypatch.setenv("HTTPS_PROXY", f"http://alice:hunter2pass@127.0.0.1:{port}")
        judge = OpenAIClient("m", api_key="sk-test-123456", base_url="https://judge.invalid/v1")
        with pytest.raises(ApiError) as caught:
            await judge.complete(REQUEST)
        await judge.aclose()
    assert not isinstance(caught.value, TransientApiError)  # waiting will not fix credentials
    assert caught.value.status == 407
    assert "hunter2pass" not in str(caught.value)
    assert [seen.method for seen in proxy.seen] == ["CONNECT"]


# --- TLS trust ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_server_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, Path]:
    """A server context for 127.0.0.1 signed by a throwaway CA, and that CA's certificate file."""
    authority = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server_context)
    ca_file = tmp_path_factory.mktemp("tls") / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    return server_context, ca_file


async def test_tls_trusts_ssl_cert_file_and_names_a_refused_certificate(
    tls_server_files: tuple[ssl.SSLContext, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    server_context, ca_file = tls_server_files
    reply = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}
    async with StubServer(json_answer(reply), ssl_context=server_context) as server:
        assert server.base_url.startswith("https://127.0.0.1:")
        # Not trusted: the certificate is refused, and the reason says so.
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        untrusted = OpenAIClient("m", api_key="sk-test-123456", base_url=server.base_url)
        with pytest.raises(TransientApiError, match=r"(?i)certificate"):
            await untrusted.complete(REQUEST)
        await untrusted.aclose()
        # Trusted through SSL_CERT_FILE, read when the client is built.
        monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
        trusted = OpenAIClient("m", api_key="sk-test-123456", base_url=server.base_url)
        response = await trusted.complete(REQUEST)
        await trusted.aclose()
    assert response.content == "{}"
    assert len(server.seen) == 1  # the refused handshake never became a request
