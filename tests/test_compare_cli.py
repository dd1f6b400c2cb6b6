"""`research-judge compare`: output formats and exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_judge.cli import main
from results_support import make_result, write_results


def run_file(path: Path, n_pass: int, n: int = 10) -> Path:
    """A run of ``n`` sessions s0..s{n-1} where the first ``n_pass`` pass."""
    return write_results(
        path, [make_result(f"s{i}", "pass" if i < n_pass else "fail") for i in range(n)]
    )


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    return run_file(tmp_path / "base.jsonl", 8)


def test_identical_runs_exit_0(baseline: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(baseline), str(baseline)]) == 0
    out = capsys.readouterr().out
    assert "pass_rate" in out and "OK: no metric dropped" in out


def test_a_flagged_drop_exits_1_and_json_holds_the_contract_keys(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = run_file(tmp_path / "cur.jsonl", 6)
    assert main(["compare", str(baseline), str(current), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    for key in ("n_common", "only_in_baseline", "only_in_current", "pass_rate", "criteria"):
        assert key in out
    assert out["regressions"] == ["s6", "s7"] and out["fixed"] == []
    assert out["flags"][0]["metric"] == "pass_rate"
    assert out["flags"][0]["severity"] == "critical"
    assert out["pass_rate"]["delta"] == pytest.approx(-0.2)


def test_threshold_flag_changes_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No verdict flips; structure drops by 0.125 (3 of 12 sessions one step down).
    base = write_results(tmp_path / "b.jsonl", [make_result(f"s{i}") for i in range(12)])
    lower = [make_result(f"s{i}", scores=(3, 2, 2 if i < 3 else 3)) for i in range(12)]
    current = write_results(tmp_path / "c.jsonl", lower)
    assert main(["compare", str(base), str(current), "--fail-on", "any"]) == 1
    assert "WARNING" in capsys.readouterr().out
    argv = ["compare", str(base), str(current), "--fail-on", "any", "--threshold", "0.2"]
    assert main(argv) == 0


def test_bad_line_exits_2_naming_file_and_line(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(make_result("s1").to_json_line() + "{not json\n", encoding="utf-8")
    assert main(["compare", str(baseline), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and "not valid JSON" in err


def test_missing_file_exits_2(baseline: Path, tmp_path: Path) -> None:
    assert main(["compare", str(baseline), str(tmp_path / "nope.jsonl")]) == 2


def test_no_common_sessions_exits_2(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = write_results(tmp_path / "other.jsonl", [make_result("zzz")])
    assert main(["compare", str(baseline), str(other)]) == 2
    assert "share no session ids" in capsys.readouterr().err


def test_negative_threshold_exits_2(baseline: Path) -> None:
    assert main(["compare", str(baseline), str(baseline), "--threshold", "-1"]) == 2


def test_help_describes_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    out = capsys.readouterr().out
    for flag in ("--json", "--threshold", "--critical-threshold", "BASELINE.jsonl"):
        assert flag in out
