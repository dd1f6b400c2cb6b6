"""One aiohttp session that POSTs JSON to one URL: TLS trust, proxies, keep-alive, event loop.

Kept apart from the protocol so ``openai.py`` is about Chat Completions only. What the openai
SDK's transport did for us is done the same way here:

- TLS trust comes from ``httpx2.create_ssl_context()``, the function the SDK's transports use (the
  OS trust store where ``truststore`` applies, ``SSL_CERT_FILE``/``SSL_CERT_DIR``, certifi);
- the proxy comes from the environment (``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` minus
  ``NO_PROXY``), read once: aiohttp's ``trust_env`` reads it again on every request, which took
  a third of the client's CPU in ``benchmarks/run.py``. A server on this machine is always called
  directly, since a proxy's loopback is not ours.
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import urllib.request

import aiohttp
import httpx2
from multidict import CIMultiDictProxy
from yarl import URL

from research_judge.clients._http import redact
from research_judge.errors import ConfigError


class JsonPoster:
    """``await poster.post(body_bytes)`` -> (status, headers, body); ``await poster.aclose()``.

    The session is opened on the first post, in the running event loop, and reopened if a later
    post runs in another loop (a session cannot outlive its loop). The connector has no cap of
    its own: the engine bounds the requests in flight.
    """

    def __init__(self, url: str, headers: dict[str, str], timeout: float) -> None:
        self.url = url
        self.proxy = env_proxy(url)
        self._headers = headers
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        uses_tls = any(u is not None and URL(u).scheme == "https" for u in (url, self.proxy))
        self._ssl: ssl.SSLContext | None = httpx2.create_ssl_context() if uses_tls else None
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def post(
        self, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int, CIMultiDictProxy[str], bytes]:
        """``headers`` add to the session's for this request only."""
        async with self._open().post(
            # A redirect means a wrong base URL; following it would turn the POST into a GET.
            self.url,
            data=body,
            headers=headers,
            proxy=self.proxy,
            allow_redirects=False,
        ) as reply:
            return reply.status, reply.headers, await reply.read()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = self._loop = None

    def _open(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop:
            # A session left open in a loop that has ended cannot be closed any more: drop it.
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                connector=aiohttp.TCPConnector(limit=0, ssl=self._ssl or True),
                timeout=self._timeout,
            )
            self._loop = loop
        return self._session


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url``, or None to go direct."""
    target = URL(url)
    host = target.host
    if host is None or is_local(host) or urllib.request.proxy_bypass(host):
        return None
    proxies = urllib.request.getproxies()
    proxy = proxies.get(target.scheme) or proxies.get("all")
    if not proxy:
        return None
    if "://" not in proxy:
        proxy = f"http://{proxy}"  # a bare host:port, as curl and httpx read it
    if URL(proxy).scheme not in ("http", "https"):
        # aiohttp would refuse it on every request; say so once, before any is sent.
        shown = redact(proxy, None)
        raise ConfigError(f"proxy {shown!r} from the environment is not an http(s) proxy")
    return proxy


def is_local(host: str) -> bool:
    """This machine: ``localhost``, a loopback address, or 0.0.0.0/:: as servers print them."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified
