"""The proxy the environment names for a URL, read once when a client is built.

``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` minus ``NO_PROXY``, as curl reads them (a bare
``host:port`` is an http proxy). A server on this machine is always called directly, since a
proxy's loopback is not ours. Only http(s) proxies are accepted: the SDK's aiohttp transport
cannot use another kind, and saying so once beats failing every request.
"""

from __future__ import annotations

import ipaddress
import urllib.request

from yarl import URL

from research_judge.clients._http import redact
from research_judge.errors import ConfigError


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
