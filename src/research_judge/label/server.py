"""The labelling page's server: the standard library's HTTP server on 127.0.0.1 only.

Every request must name this server as its Host (a web page elsewhere cannot reach it through
DNS rebinding), and every API request must carry the run's token in an ``X-Label-Token`` header.
The token is in the page this server hands out, which another site cannot read; a cross-site
form or ``fetch`` cannot set that header without a CORS preflight this server never answers.
State-changing requests must also be JSON, and a browser's ``Origin``, when sent, this server's.
"""

from __future__ import annotations

import hmac
import json
import secrets
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import ConfigError
from .page import content_security_policy, render_page
from .run import LabelRun, UnknownSession

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024  # a label, a session id and a note


class LabelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, run: LabelRun, *, port: int = 0, token: str | None = None) -> None:
        self.run = run
        self.token = token or secrets.token_urlsafe(32)
        super().__init__((HOST, port), _Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"


class _Handler(BaseHTTPRequestHandler):
    server: LabelServer
    server_version = "research-judge-label"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        return  # the terminal shows the progress lines, not one line per request

    # --- checks ------------------------------------------------------------------------------

    def _host_ok(self) -> bool:
        allowed = {f"{HOST}:{self.server.port}", f"localhost:{self.server.port}"}
        return self.headers.get("Host", "") in allowed

    def _token_ok(self) -> bool:
        given = self.headers.get("X-Label-Token", "")
        return hmac.compare_digest(given.encode(), self.server.token.encode())

    def _origin_ok(self) -> bool:
        origin = self.headers.get("Origin")
        allowed = {f"http://{HOST}:{self.server.port}", f"http://localhost:{self.server.port}"}
        return origin is None or origin in allowed

    # --- verbs -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self._host_ok():
            return self._error(HTTPStatus.FORBIDDEN, "unexpected Host header")
        if self.path == "/":
            return self._page()
        if self.path == "/api/state":
            if not self._token_ok():
                return self._error(HTTPStatus.FORBIDDEN, "missing or wrong token")
            return self._json(HTTPStatus.OK, self.server.run.state())
        return self._error(HTTPStatus.NOT_FOUND, "not found")

    def do_POST(self) -> None:
        if not self._host_ok() or not self._origin_ok():
            return self._error(HTTPStatus.FORBIDDEN, "request from another site refused")
        if not self._token_ok():
            return self._error(HTTPStatus.FORBIDDEN, "missing or wrong token")
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            return self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON")
        body = self._body()
        if body is None:
            return self._error(HTTPStatus.BAD_REQUEST, "the body must be one JSON object")
        run = self.server.run
        try:
            if self.path == "/api/label":
                run.label(_text(body, "session_id"), _text(body, "label"), _text(body, "note", ""))
            elif self.path == "/api/skip":
                run.skip(_text(body, "session_id"))
            elif self.path == "/api/undo":
                run.undo()
            else:
                return self._error(HTTPStatus.NOT_FOUND, "not found")
        except BadRequest as exc:
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        except UnknownSession as exc:
            return self._error(HTTPStatus.NOT_FOUND, str(exc))
        except ConfigError as exc:
            return self._error(HTTPStatus.CONFLICT, str(exc))
        self._json(HTTPStatus.OK, run.state())

    def do_PUT(self) -> None:
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, "not allowed")

    do_DELETE = do_PATCH = do_OPTIONS = do_PUT

    # --- responses ---------------------------------------------------------------------------

    def _body(self) -> dict[str, Any] | None:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            return None
        if not 0 < length <= MAX_BODY:
            return None
        try:
            data = json.loads(self.rfile.read(length))
        except (ValueError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) else None

    def _page(self) -> None:
        nonce = secrets.token_urlsafe(16)
        run = self.server.run
        page = render_page(
            token=self.server.token,
            nonce=nonce,
            annotator=run.store.annotator,
            labels_path=str(run.store.path),
        )
        self._send(HTTPStatus.OK, page.encode(), "text/html; charset=utf-8", nonce)

    def _json(self, status: HTTPStatus, data: Any) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._json(status, {"error": message})

    def _send(self, status: HTTPStatus, body: bytes, kind: str, nonce: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        if nonce is not None:
            self.send_header("Content-Security-Policy", content_security_policy(nonce))
        self.end_headers()
        self.wfile.write(body)


class BadRequest(ValueError):
    pass


def _text(body: dict[str, Any], key: str, default: str | None = None) -> str:
    value = body.get(key, default)
    if not isinstance(value, str):
        raise BadRequest(f"{key} must be a string")
    return value
