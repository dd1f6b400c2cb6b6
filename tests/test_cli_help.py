"""Every verb and every flag explains itself."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from research_judge.cli import build_parser, main


def _parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_every_flag_of_every_verb_has_help() -> None:
    missing = [
        f"{prog} {action.option_strings or action.dest}"
        for prog, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert missing == []


@pytest.mark.parametrize(
    "verb",
    [["grade"], ["validate"], ["compare"], ["report"], ["stability"], ["tasks"], ["tasks", "run"]],
)
def test_help_exits_zero(verb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*verb, "--help"])
    assert exit_info.value.code == 0
    assert "usage: research-judge" in capsys.readouterr().out


@pytest.mark.parametrize("verb", ["grade", "validate", "compare", "report", "stability", "tasks"])
def test_help_loads_no_network_statistics_or_model_library(verb: str) -> None:
    code = (
        "import sys\n"
        "from research_judge.cli import main\n"
        "try:\n"
        f"    main([{verb!r}, '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('aiohttp', 'anthropic', 'openai', 'numpy', 'scipy', 'sklearn',\n"
        "         'pydantic', 'jinja2', 'tenacity', 'asyncio')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
