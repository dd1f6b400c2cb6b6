"""`research-judge validate` through the real argument parser, on files written to disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_judge.cli import main
from results_support import VALIDATE_CONTRACT_KEYS


def write_run(tmp_path: Path, table: tuple[int, int, int, int]) -> tuple[Path, Path]:
    """A results JSONL and a labels CSV realising the 2x2 table [[a, b], [c, d]]."""
    a, b, c, d = table
    cells = [("pass", "pass", a), ("pass", "fail", b), ("fail", "pass", c), ("fail", "fail", d)]
    result_lines, label_lines = [], ["session_id,label,fluff"]
    for human, judge, count in cells:
        for _ in range(count):
            sid = f"s-{len(result_lines)}"
            score = 3 if judge == "pass" else 1
            result_lines.append(
                json.dumps(
                    {
                        "session_id": sid,
                        "verdict": judge,
                        "error": None,
                        "scores": {"fluff": {"score": score, "reasoning": "", "evidence": ""}},
                        "answer_stats": {"words": 100 + 7 * len(result_lines), "chars": 900},
                    }
                )
            )
            label_lines.append(f"{sid},{human},{score if len(label_lines) % 3 else ''}")
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(result_lines) + "\n", encoding="utf-8")
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join(label_lines) + "\n", encoding="utf-8")
    return results, labels


def test_json_output_has_the_contract_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, labels = write_run(tmp_path, (20, 5, 10, 15))
    code = main(["validate", str(results), "--labels", str(labels), "--json", "--bootstrap", "500"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    for key in sorted(VALIDATE_CONTRACT_KEYS | {"warnings"}):
        assert key in report, key
    assert report["n"] == 50
    assert report["cohen_kappa"] == pytest.approx(0.4)
    assert report["raw_agreement"] == pytest.approx(0.7)
    assert report["confusion"]["human_fail"] == {"judge_pass": 10, "judge_fail": 15}
    assert report["bootstrap"] == {"resamples": 500, "seed": 0}
    assert report["criteria"]["fluff"]["n"] == 50 - 50 // 3  # every third fluff cell is empty


def test_text_output_starts_with_the_headline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, labels = write_run(tmp_path, (66, 2, 16, 16))
    assert main(["validate", str(results), "--labels", str(labels), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    # Trust first (kappa's interval, agreement on human fails), then the lean.
    assert out.splitlines()[2].startswith("do not trust this judge to catch failures")
    assert "Lean: lenient:" in out.splitlines()[2]
    assert "analytic (normal, Fleiss-Cohen-Everitt SE)" in out


def test_seed_makes_the_bootstrap_reproducible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, labels = write_run(tmp_path, (30, 6, 8, 20))
    runs = []
    for seed in ("1", "1", "2"):
        main(["validate", str(results), "--labels", str(labels), "--json", "--seed", seed])
        runs.append(json.loads(capsys.readouterr().out)["cohen_kappa_ci"])
    assert runs[0] == runs[1] != runs[2]


def test_bad_label_exits_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, labels = write_run(tmp_path, (3, 1, 1, 3))
    lines = labels.read_text().splitlines()
    lines[4] = "s-3,TRUE,"
    labels.write_text("\n".join(lines) + "\n")
    assert main(["validate", str(results), "--labels", str(labels)]) == 2
    err = capsys.readouterr().err
    assert f"{labels}:5:" in err and "'TRUE'" in err


def test_bad_results_line_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, labels = write_run(tmp_path, (3, 1, 1, 3))
    results.write_text(results.read_text() + "{not json\n")
    assert main(["validate", str(results), "--labels", str(labels)]) == 2
    assert f"{results}:9:" in capsys.readouterr().err


def test_no_overlap_exits_2_after_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, _ = write_run(tmp_path, (3, 1, 1, 3))
    other = tmp_path / "other.csv"
    other.write_text("session_id,label\nx-1,pass\nx-2,fail\n")
    assert main(["validate", str(results), "--labels", str(other), "--json"]) == 2
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["n"] == 0 and report["excluded"]["unknown_session"]["count"] == 2
    assert "no labelled session has a judge verdict" in captured.err


def test_negative_bootstrap_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, labels = write_run(tmp_path, (3, 1, 1, 3))
    assert main(["validate", str(results), "--labels", str(labels), "--bootstrap", "-5"]) == 2
    assert "--bootstrap" in capsys.readouterr().err


def test_help_describes_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["validate", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--labels", "--json", "--seed", "--bootstrap", "RESULTS.jsonl"):
        assert flag in text
