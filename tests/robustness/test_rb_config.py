"""A config file found in the working directory (a checked-out pull request) cannot say where
keys or data go; whatever a config file sets is said on stderr when the verb starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.testing.fake_openai import FakeOpenAIServer

from support import body_responder, session, write_sessions

TRUSTED_ONLY = ["base-url", "store", "prompts", "record", "replay", "cache-dir", "prices", "force"]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-ci-secret-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("RESEARCH_JUDGE_CONFIG", raising=False)
    write_sessions(tmp_path / "s.jsonl", [session("s-1")])
    return tmp_path


@pytest.fixture
def attacker() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(body_responder) as srv:
        yield srv


def grade(*extra: str) -> int:
    return main(["grade", "s.jsonl", "--out", "o.jsonl", "--provider", "openai",
                 "--model", "gpt-4o-mini", "--no-cache", "--quiet",
                 *extra])  # fmt: skip


def test_a_discovered_base_url_is_refused_and_the_key_goes_nowhere(
    workdir: Path, attacker: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = workdir / "research-judge.toml"
    toml.write_text(f'[grade]\nbase-url = "{attacker.base_url}"\n')
    assert grade() == 2
    err = capsys.readouterr().err
    assert f"{toml}: [grade]: 'base-url' says where keys or data go" in err
    assert f"--config {toml} or RESEARCH_JUDGE_CONFIG={toml}" in err  # how to allow it
    assert attacker.stats.requests == 0 and attacker.stats.with_authorization == 0
    assert not (workdir / "o.jsonl").exists()


@pytest.mark.parametrize("key", TRUSTED_ONLY)
def test_every_key_that_says_where_keys_or_data_go_is_refused_from_a_found_file(
    workdir: Path, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    value = "true" if key == "force" else '"/"'
    (workdir / "research-judge.toml").write_text(f"[grade]\n{key} = {value}\n")
    assert grade() == 2
    assert f"'{key}' says where keys or data go" in capsys.readouterr().err


def test_pyproject_tables_and_other_verbs_are_held_to_the_same_rule(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "pyproject.toml").write_text(
        '[tool.research-judge.grade]\nstore = "/"\nrecord = "rec"\n'
    )
    assert grade() == 2
    err = capsys.readouterr().err
    assert "[tool.research-judge.grade]: 'store' says where keys or data go" in err
    (workdir / "pyproject.toml").unlink()
    # A table of another verb than the one running is checked too: the file is refused whole.
    (workdir / "research-judge.toml").write_text('[report]\nprices = "p.json"\n')
    assert grade() == 2
    assert "[report]: 'prices' says where keys or data go" in capsys.readouterr().err


def test_a_named_file_may_set_them_by_flag_or_environment(
    workdir: Path,
    attacker: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    toml = workdir / "ci.toml"
    toml.write_text(f'[grade]\nbase-url = "{attacker.base_url}"\nconcurrency = 2\n')
    assert grade("--config", str(toml)) == 0
    assert f"config: {toml} sets base-url, concurrency" in capsys.readouterr().err
    assert attacker.stats.requests == 2  # the user chose this server: counting and scoring
    (workdir / "o.jsonl").unlink()
    monkeypatch.setenv("RESEARCH_JUDGE_CONFIG", str(toml))
    assert grade() == 0
    assert attacker.stats.requests == 4


def test_what_a_found_file_sets_is_said_at_start(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = workdir / "research-judge.toml"
    toml.write_text('[grade]\nmodel = "gpt-4o-mini"\nconcurrency = 3\n[policy]\nmin_fluff = 1\n')
    assert main(["grade", "s.jsonl", "--out", "o.jsonl", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"config: {toml} sets model, concurrency, [policy]"
