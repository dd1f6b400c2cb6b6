"""A misspelt flag or verb gets a suggestion, and is reported before any missing option."""

from __future__ import annotations

import pytest

from research_judge.cli import main


def usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_a_misspelt_flag_names_the_flag_it_resembles(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(capsys, ["grade", "s.jsonl", "--out", "r.jsonl", "--concurency", "4"])
    assert "unrecognized argument: --concurency; did you mean --concurrency?" in err
    assert err.startswith("usage: research-judge grade")


def test_a_misspelt_required_flag_is_not_reported_as_missing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # argparse alone said "the following arguments are required: --model".
    err = usage_error(capsys, ["grade", "s.jsonl", "--out", "r.jsonl", "--modle", "gpt-x"])
    suggestion = err.splitlines()[-1]
    assert "unrecognized argument: --modle; did you mean" in suggestion
    assert "--model" in suggestion.split("did you mean")[1]
    assert "required" not in err


def test_flag_values_are_not_read_as_flags(capsys: pytest.CaptureFixture[str]) -> None:
    # The value of --where starts with dashes; only the real flag after it is checked.
    err = usage_error(capsys, ["grade", "s.jsonl", "--where", "--x", "--thresold", "1"])
    assert "unrecognized argument: --thresold" in err
    assert "--x" not in err.splitlines()[-1]


def test_a_misspelt_verb_and_action_get_suggestions(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unknown verb 'grdae'; did you mean 'grade'?" in usage_error(capsys, ["grdae", "x"])
    err = usage_error(capsys, ["tasks", "rnu", "t.jsonl"])
    assert "unknown action 'rnu'; did you mean 'run'?" in err


def test_flags_of_the_nested_action_are_known(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(capsys, ["tasks", "run", "t.jsonl", "--agent", "m:f", "--min-pass-rte", "1"])
    assert "did you mean --min-pass-rate?" in err


def test_an_unambiguous_prefix_and_flag_equals_value_still_work(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # argparse accepts both; the check must not get in their way (the run then fails on the
    # missing file, past parsing).
    code = main(["compare", "missing-a.jsonl", "missing-b.jsonl", "--thresh=0.1"])
    assert code == 2
    assert "unrecognized" not in capsys.readouterr().err


def test_nothing_close_is_left_to_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(capsys, ["compare", "a", "b", "--zzzzzz"])
    assert "unrecognized argument: --zzzzzz" in err and "did you mean" not in err
