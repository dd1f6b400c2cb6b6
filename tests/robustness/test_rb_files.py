"""Damaged results and labels files: a clear file:line error, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import deeply_nested, huge_int

from research_judge.cli import main
from research_judge.errors import InputFileError
from research_judge.validate import read_labels
from results_support import make_result, write_results


def test_a_label_cell_over_128_kb_is_a_clear_error_naming_the_line(tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text(f"session_id,label\ns1,pass\ns2,{'x' * 200_000}\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"labels\.csv:3: .*a cell longer than 131,072"):
        read_labels(labels)


@pytest.mark.parametrize("value", [deeply_nested(), huge_int()])
def test_hostile_jsonl_labels_are_a_clear_error(tmp_path: Path, value: str) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"session_id": "s1", "label": "pass"}\n'
        f'{{"session_id": "s2", "label": "pass", "x": {value}}}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputFileError, match=r"labels\.jsonl:2: not usable JSON"):
        read_labels(labels)


def damaged_results(tmp_path: Path, ratio_text: str) -> Path:
    path = write_results(tmp_path / "cur.jsonl", [make_result(f"s{i}") for i in range(3)])
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["ratios"]["relevance"] = "RATIO"
    lines[1] = json.dumps(row).replace('"RATIO"', ratio_text)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("ratio", ["NaN", "Infinity", "-Infinity", "7.5", "-0.1"])
@pytest.mark.parametrize("verb", ["compare", "report"])
def test_impossible_ratios_in_a_results_file_are_a_file_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ratio: str, verb: str
) -> None:
    current = damaged_results(tmp_path, ratio)
    baseline = write_results(tmp_path / "base.jsonl", [make_result(f"s{i}") for i in range(3)])
    if verb == "compare":
        code = main(["compare", str(baseline), str(current)])
    else:
        code = main(["report", str(current), "--md", str(tmp_path / "r.md")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{current}:2: ratios.relevance" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("value", [deeply_nested(), huge_int()])
def test_hostile_values_in_a_results_file_are_a_file_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    path = write_results(tmp_path / "r.jsonl", [make_result("s0"), make_result("s1")])
    text = path.read_text().splitlines()
    text[1] = text[1][:-1] + f', "extra": {value}}}'
    path.write_text("\n".join(text) + "\n")
    assert main(["report", str(path), "--md", str(tmp_path / "r.md")]) == 2
    assert f"{path}:2: " in capsys.readouterr().err


def test_resume_never_cuts_a_complete_last_line_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Only a line without its newline is what a killed run leaves; a complete line that does
    # not validate is damage to report, not to cut away.
    out = damaged_results(tmp_path, "NaN")
    text = out.read_text().splitlines(keepends=True)
    out.write_text(text[0] + text[2] + text[1])  # the damaged line last, newline and all
    before = out.read_bytes()
    sessions = tmp_path / "s.jsonl"
    sessions.write_text("")
    code = main(["grade", str(sessions), "--out", str(out), "--provider", "scripted",
                 "--model", "m", "--replay", str(tmp_path), "--quiet"])  # fmt: skip
    assert code == 2
    assert f"{out}:3: " in capsys.readouterr().err
    assert out.read_bytes() == before
