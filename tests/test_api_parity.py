"""The Python API is the CLI's equal for ``grade``.

Every ``grade`` flag is a keyword of ``rj.grade`` with the flag's default. The flags are read from
the parser itself, not from a list kept by hand, so a new flag the API lacks fails here until it
is added or named below as one that only a command line needs, with why.
"""

from __future__ import annotations

import argparse
import inspect
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

import research_judge as rj
from research_judge.cli import build_parser, main
from research_judge.errors import ConfigError
from research_judge.judge.policy import VerdictPolicy
from research_judge.results.model import read_results
from research_judge.testing import FakeOpenAIServer

from support import body_responder, session, write_sessions

CLI_ONLY = {
    "sessions": "a path; the API takes a path or the sessions themselves",
    "out": "the API returns the results instead of writing a file",
    "force": "overwriting a file the API never writes",
    "retry_errors": "resuming a results file: the API grades what it is given",
    "json": "how the CLI prints its summary",
    "quiet": "the CLI's progress line (the API's is progress=True)",
    "junit": "a CI file of the command line",
    "annotations": "CI annotations of the command line",
    "config": "the CLI's config file (the API takes policy=)",
    "dry_run": "the estimate without sending: not in the Python API yet",
    "parquet": "a Parquet copy of the results file (the API returns Results: to_dataframe)",
    "shard": "one of N machines' share of an input file, each to its own --out, then merged",
}
# Flags whose API keyword is another shape of the same setting.
RESHAPED = {
    "no_cache": ("cache", lambda flag: not flag),
    "where": ("where", lambda flag: flag or None),  # KEY=VALUE items; the API's is a mapping
    "model": ("model", lambda flag: flag or ""),  # no model yet: None there, "" here
    **{f.name: ("policy", None) for f in fields(VerdictPolicy)},  # --min-*: one VerdictPolicy
}


def grade_flags() -> dict[str, Any]:
    parser = build_parser()
    [verbs] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    grade = verbs.choices["grade"]
    return {a.dest: a.default for a in grade._actions if a.dest != "help"}


def test_every_grade_flag_is_an_api_keyword_with_its_default() -> None:
    api = inspect.signature(rj.grade).parameters
    missing, differs = [], []
    for dest, default in grade_flags().items():
        if dest in CLI_ONLY:
            continue
        name, shape = RESHAPED.get(dest, (dest, lambda flag: flag))
        if name not in api:
            missing.append(dest)
        elif shape is not None and api[name].default != shape(default):
            differs.append((dest, default, api[name].default))
    assert missing == [] and differs == []


def test_the_exemptions_are_flags_that_exist() -> None:
    flags = grade_flags()
    assert set(CLI_ONLY) <= set(flags) and set(RESHAPED) <= set(flags)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-api")


def without_usage(result: Any) -> dict[str, Any]:
    return {k: v for k, v in result.to_dict().items() if k != "usage"}


def test_a_jury_grades_through_the_api_as_through_the_cli(tmp_path: Path) -> None:
    sessions = [session(f"s-{i}") for i in range(2)]
    src = write_sessions(tmp_path / "s.jsonl", sessions)
    with FakeOpenAIServer(body_responder) as srv:
        options = {"model": "gpt-4o", "base_url": srv.base_url, "cache": False}
        results = rj.grade(sessions, **options, jury="gpt-4o-mini")
        out = tmp_path / "o.jsonl"
        code = main(["grade", str(src), "--out", str(out), "--model", "gpt-4o", "--base-url",
                     srv.base_url, "--no-cache", "--quiet", "--jury", "gpt-4o-mini"])  # fmt: skip
    assert code == 0
    jurors = ["openai/gpt-4o", "openai/gpt-4o-mini"]
    for result in results:
        assert result.repeats is not None
        assert [s.juror for s in result.repeats.samples] == jurors
    # The same results, bar the fake provider's prompt-cache counts (it saw the API's run first).
    assert [without_usage(r) for r in results] == [without_usage(r) for r in read_results(out)]
    with pytest.raises(ConfigError, match="--jury and --repeats"):
        rj.grade(sessions, model="gpt-4o", jury=["gpt-4o-mini"], repeats=3)


def test_where_and_sample_choose_the_sessions_the_cli_chooses(tmp_path: Path) -> None:
    sessions = [
        {**session(f"s-{i}"), "metadata": {"tier": "a" if i % 3 else "b"}} for i in range(9)
    ]
    src = write_sessions(tmp_path / "s.jsonl", sessions)
    with FakeOpenAIServer(body_responder) as srv:
        options = {"model": "gpt-4o", "base_url": srv.base_url, "cache": False}
        results = rj.grade(sessions, **options, where={"tier": "a"}, sample=3, seed=7)
        out = tmp_path / "o.jsonl"
        code = main(["grade", str(src), "--out", str(out), "--model", "gpt-4o", "--base-url",
                     srv.base_url, "--no-cache", "--quiet", "--where", "tier=a", "--sample", "3",
                     "--seed", "7"])  # fmt: skip
    assert code == 0
    ids = [r.session_id for r in results]
    assert len(ids) == 3 and ids == [r.session_id for r in read_results(out)]


def test_a_guessed_window_is_a_warning(tmp_path: Path) -> None:
    with FakeOpenAIServer(body_responder) as srv, pytest.warns(UserWarning, match="window"):
        rj.grade([session("s-1")], model="a-model-no-table-knows", base_url=srv.base_url,
                 cache=False)  # fmt: skip
