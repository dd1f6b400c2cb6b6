"""Every verb and every flag explains itself."""

from __future__ import annotations

import argparse

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
    "verb", [["grade"], ["validate"], ["compare"], ["report"], ["tasks"], ["tasks", "run"]]
)
def test_help_exits_zero(verb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*verb, "--help"])
    assert exit_info.value.code == 0
    assert "usage: research-judge" in capsys.readouterr().out
