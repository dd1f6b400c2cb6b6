"""``serve-fake`` (and the fake server the tests use) refuses a body over its cap unread: 413."""

from __future__ import annotations

import socket

from research_judge.testing.fake_openai import FakeOpenAIServer

BODY_LIMIT = 64 * 2**20  # the documented default


def exchange(port: int, head: bytes, body: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(head + body)
        answer = b""
        while chunk := conn.recv(65536):  # the server closes after a 413
            answer += chunk
    return answer


def post(length: int) -> bytes:
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        + f"Content-Length: {length}\r\n\r\n".encode()
    )


def test_a_declared_body_over_the_cap_is_refused_before_any_of_it_is_read() -> None:
    with FakeOpenAIServer() as srv:
        port = int(srv.base_url.rsplit(":", 1)[1].split("/")[0])
        # 600 GB declared, nothing sent: the answer comes from the header alone.
        answer = exchange(port, post(600 * 10**9))
    assert answer.startswith(b"HTTP/1.1 413 Content Too Large\r\n")
    assert f"over {BODY_LIMIT:,} bytes".encode() in answer
    assert srv.stats.requests == 0


def test_the_cap_is_a_setting_and_bodies_under_it_are_served() -> None:
    with FakeOpenAIServer(max_body=100) as srv:
        port = int(srv.base_url.rsplit(":", 1)[1].split("/")[0])
        assert exchange(port, post(101), b"x" * 101).startswith(b"HTTP/1.1 413 ")
        small = exchange(port, post(2), b"{}").split(b"\r\n", 1)[0]
    assert not small.startswith(b"HTTP/1.1 413")


def test_serve_fake_has_the_flag() -> None:
    from research_judge.cli import build_parser

    args = build_parser().parse_args(["serve-fake", "--max-body", "1000"])
    assert args.max_body == 1000
    assert build_parser().parse_args(["serve-fake"]).max_body == BODY_LIMIT
