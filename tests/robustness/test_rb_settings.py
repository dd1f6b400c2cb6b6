"""Every setting is checked before anything is sent: a bad one is a config error (exit 2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.testing.fake_openai import FakeOpenAIServer

from support import body_responder, session, write_sessions

SECRET = "sk-test-DO-NOT-STORE-0123456789abcdef"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeOpenAIServer(body_responder) as srv:
        yield srv


def grade(srv: FakeOpenAIServer, tmp_path: Path, *extra: str, base_url: str = "") -> int:
    src = write_sessions(tmp_path / "s.jsonl", [session("s-1"), session("s-2")])
    return main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--provider", "openai",
                 "--model", "gpt-4o-mini", "--base-url", base_url or srv.base_url,
                 "--no-cache", "--quiet", *extra])  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--timeout", "0"], "--timeout must be positive"),
        (["--timeout", "-1"], "--timeout must be positive"),
        (["--timeout", "nan"], "--timeout must be a finite number"),
        (["--timeout", "inf"], "--timeout must be a finite number"),
        (["--max-cost", "nan"], "--max-cost must be a finite number"),
        (["--max-cost", "-5"], "--max-cost must be positive"),
        (["--max-cost", "0"], "--max-cost must be positive"),
        (["--down-after", "nan"], "--down-after must be a finite number"),
        (["--temperature", "2.5"], "temperature must be within 0..2, got 2.5"),
        (["--temperature", "-0.1"], "temperature must be within 0..2, got -0.1"),
        (["--temperature", "nan"], "temperature must be within 0..2, got nan"),
    ],
)
def test_a_setting_that_would_switch_a_safeguard_off_is_refused_before_sending(
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    needle: str,
) -> None:
    assert grade(server, tmp_path, *flags) == 2
    assert needle in capsys.readouterr().err
    assert server.stats.requests == 0
    assert not (tmp_path / "o.jsonl").exists()


def test_a_base_url_with_credentials_is_a_config_error_naming_why(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.base_url.replace("http://", "http://user:hunter2@")
    assert grade(server, tmp_path, base_url=url) == 2
    err = capsys.readouterr().err
    assert "user name or password" in err and "hunter2" not in err
    assert server.stats.requests == 0


def test_credentials_in_the_base_url_variable_are_refused_too(
    server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url.replace("http://", "http://u:p@"))
    src = write_sessions(tmp_path / "s.jsonl", [session("s-1")])
    code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--provider", "openai",
                 "--model", "gpt-4o-mini", "--no-cache", "--quiet"])  # fmt: skip
    assert code == 2
    assert "OPENAI_BASE_URL must not carry a user name or password" in capsys.readouterr().err
    assert server.stats.requests == 0


@pytest.mark.parametrize("price", ["Infinity", "NaN", "-1"])
def test_a_price_table_with_an_impossible_price_is_refused_before_sending(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], price: str
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(
        '{"models": {"gpt-4o-mini": {"input": ' + price + ', "output": 1.0}}}', encoding="utf-8"
    )
    assert grade(server, tmp_path, "--prices", str(prices)) == 2
    assert str(prices) in capsys.readouterr().err
    assert server.stats.requests == 0


def test_the_library_refuses_a_temperature_out_of_range_before_sending(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    import research_judge as rj
    from research_judge.errors import ConfigError

    with pytest.raises(ConfigError, match=r"temperature must be within 0\.\.2, got 5"):
        rj.grade([session("s-1")], model="gpt-4o-mini", base_url=server.base_url,
                 cache=False, temperature=5)  # fmt: skip
    assert server.stats.requests == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/v1?api-key=K123secret",
        "http://127.0.0.1:9/v1?api-version=1&key=K123secret",
        "http://127.0.0.1:9/v1#K123secret",
        "ftp://127.0.0.1:9/v1?token=K123secret",
        "http://127.0.0.1:x/v1?api-key=K123secret",
    ],
)
def test_a_key_anywhere_in_a_base_url_is_never_echoed(
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    url: str,
) -> None:
    assert grade(server, tmp_path, base_url=url) == 2
    err = capsys.readouterr().err
    assert "error" in err and "K123secret" not in err
    monkeypatch.setenv("OPENAI_BASE_URL", url)  # the environment's URL is shown the same way
    src = write_sessions(tmp_path / "s.jsonl", [session("s-1")])
    assert main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--provider", "openai",
                 "--model", "gpt-4o-mini", "--no-cache", "--quiet"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "error" in err and "K123secret" not in err
    assert server.stats.requests == 0


def test_redaction_keeps_what_helps_and_hides_every_query_value() -> None:
    from research_judge.clients._http import redact
    from research_judge.safety.settings import redact_url

    assert (
        redact_url("https://u:p@h:1/v1?api-key=K1&flag#frag")
        == "https://***@h:1/v1?api-key=***&***#***"
    )
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    said = redact("GET http://proxy.local/v1?access_token=T0K3N failed", None)
    assert "T0K3N" not in said and "http://proxy.local/v1?access_token=***" in said
