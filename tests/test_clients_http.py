"""The shared client helpers: Retry-After parsing, key redaction, status mapping."""

from __future__ import annotations

import email.utils

import pytest

from research_judge.clients._http import (
    error_for_status,
    parse_retry_after,
    redact,
    resolve_api_key,
)
from research_judge.errors import ApiError, ConfigError, RateLimitError, TransientApiError

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "12"}, 12.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "40"}, 0.25),  # the precise one wins
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "-5"}, None),
        ({"retry-after": "whenever"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds_and_milliseconds(
    headers: dict[str, str], expected: float | None
) -> None:
    assert parse_retry_after(headers, now=NOW) == expected


def test_retry_after_as_an_http_date() -> None:
    date = email.utils.formatdate(NOW + 90, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=NOW) == pytest.approx(90.0)
    past = email.utils.formatdate(NOW - 90, usegmt=True)
    assert parse_retry_after({"retry-after": past}, now=NOW) == 0.0


def test_redact_removes_the_key_and_key_shaped_strings() -> None:
    text = "bad key sk-abc123SECRET, also sk-proj-****wxyz and my-key-here"
    cleaned = redact(text, "sk-abc123SECRET")
    assert "SECRET" not in cleaned and "wxyz" not in cleaned
    assert cleaned.startswith("bad key ***")
    assert redact("nothing secret", None) == "nothing secret"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("url='http://alice:hunter2pass@10.0.0.1:3128/'", "url='http://***@10.0.0.1:3128/'"),
        ("socks5://bob@proxy:1080 failed", "socks5://***@proxy:1080 failed"),
        ("https://host/path@v1 is fine", "https://host/path@v1 is fine"),  # no userinfo there
    ],
)
def test_redact_removes_credentials_inside_urls(text: str, expected: str) -> None:
    assert redact(text, None) == expected


@pytest.mark.parametrize("key", [" sk-padded-123456\n", "sk-padded-123456\r\n"])
def test_a_key_read_with_its_newline_is_trimmed(key: str) -> None:
    assert resolve_api_key(key, "OPENAI_API_KEY", "openai") == "sk-padded-123456"


def test_a_key_with_control_characters_inside_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="control characters") as caught:
        resolve_api_key("sk-first\nsk-second", "OPENAI_API_KEY", "openai")
    assert "sk-first" not in str(caught.value)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, RateLimitError),
        (529, RateLimitError),
        (500, TransientApiError),
        (408, TransientApiError),
        (401, ApiError),
        (422, ApiError),
    ],
)
def test_status_mapping(status: int, kind: type[ApiError]) -> None:
    error = error_for_status(
        provider="openai",
        status=status,
        detail="x\n  y",
        headers={"retry-after": "1"},
        session_id="s",
        secret=None,
        env_var="OPENAI_API_KEY",
    )
    assert type(error) is kind
    assert error.status == status
    assert "x y" in str(error)
