"""The example GitHub Actions workflow in docs/ci.md: valid YAML, the cheap layer on pull
requests (replay, a seeded sample, --max-cost), the full run nightly, and every research-judge
command in it accepted by the current command line's own parser."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from research_judge.cli import build_parser

DOC = Path(__file__).resolve().parents[1] / "docs" / "ci.md"


def workflow() -> dict[Any, Any]:
    [block] = re.findall(r"```yaml\n(# \.github/workflows/.*?)```", DOC.read_text(), re.S)
    loaded = yaml.safe_load(block)
    assert isinstance(loaded, dict)
    return loaded


def steps() -> list[dict[str, Any]]:
    [job] = workflow()["jobs"].values()
    return list(job["steps"])


def commands(step: dict[str, Any]) -> list[list[str]]:
    lines = str(step.get("run", "")).splitlines()
    return [shlex.split(line) for line in lines if line.strip().startswith("research-judge ")]


def test_the_workflow_runs_on_pull_requests_and_nightly() -> None:
    # PyYAML reads the bare key `on` as the boolean True (YAML 1.1); GitHub reads it as "on".
    triggers = workflow()[True]
    assert "pull_request" in triggers
    assert [s["cron"] for s in triggers["schedule"]] == ["17 3 * * *"]


def test_the_pull_request_layer_is_replay_sample_and_capped_and_nightly_is_full() -> None:
    by_event: dict[str, list[list[str]]] = {}
    for step in steps():
        condition = str(step.get("if", ""))
        event = "pull_request" if "pull_request" in condition else "schedule"
        for argv in commands(step):
            if "schedule" in condition or "pull_request" in condition:
                by_event.setdefault(event, []).append(argv)
            else:
                by_event.setdefault("every", []).append(argv)
    [replay] = [a for a in by_event["every"] if "--replay" in a]
    assert replay[1] == "grade"
    [cheap] = by_event["pull_request"]
    assert cheap[1] == "grade" and {"--sample", "--seed", "--max-cost"} <= set(cheap)
    [full] = by_event["schedule"]
    assert full[1] == "grade" and "--sample" not in full and "--max-cost" in full
    assert any(a[1] == "compare" for a in by_event["every"])  # the gate runs on both


def all_commands() -> list[list[str]]:
    found = [argv for step in steps() for argv in commands(step)]
    assert len(found) == 4
    return found


@pytest.mark.parametrize("argv", all_commands(), ids=lambda a: " ".join(a[1:3]))
def test_every_command_parses_with_the_current_cli(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no config file: the command must stand on its own flags
    args = build_parser().parse_args(argv[1:])  # argparse exits 2 on an unknown or missing flag
    assert args.verb == argv[1]
    if "--junit" in argv:
        assert args.junit == argv[argv.index("--junit") + 1]
