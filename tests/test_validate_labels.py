"""Reading human labels: both file shapes, and an error naming file:line for every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_judge.errors import InputFileError
from research_judge.validate import read_labels


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_with_scores_case_whitespace_and_empty_cells(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "labels.csv",
        "session_id,label,effectiveness,fluff,notes\n"
        "s-1,pass,3,2,fine\n"
        "s-2, FAIL ,1,,padded\n"
        "\n"
        "s-3,Pass,,2.0,\n",
    )
    labels = read_labels(path)
    assert list(labels.items) == ["s-1", "s-2", "s-3"]
    assert labels.criteria == ("effectiveness", "fluff")
    assert labels.items["s-1"].label == "pass"
    assert labels.items["s-1"].scores == {"effectiveness": 3, "fluff": 2}
    assert labels.items["s-2"].label == "fail"
    assert labels.items["s-2"].scores == {"effectiveness": 1}  # empty cell: no human score
    assert labels.items["s-3"].scores == {"fluff": 2}
    assert labels.items["s-3"].line == 5


def test_csv_with_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffsession_id,label\ns-1,fail\n".encode())
    assert read_labels(path).items["s-1"].label == "fail"


def test_jsonl_with_the_same_keys(tmp_path: Path) -> None:
    lines = [
        {"session_id": "a", "label": "pass", "structure": 3},
        {"session_id": "b", "label": "fail", "structure": None, "fluff": None},
        {"session_id": "c", "label": "fail"},
    ]
    path = write(tmp_path, "labels.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    labels = read_labels(path)
    # A key on any line makes a criterion, even when its only value is null (an empty cell).
    assert labels.criteria == ("fluff", "structure")
    assert labels.items["a"].scores == {"structure": 3}
    assert labels.items["b"].scores == {}
    assert [x.label for x in labels.items.values()] == ["pass", "fail", "fail"]


@pytest.mark.parametrize("bad", ["1", "0", "true", "yes", "passed", ""])
def test_csv_bad_label_names_file_line_and_value(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path, "l.csv", f"session_id,label\ns-1,pass\ns-2,{bad}\n")
    with pytest.raises(InputFileError) as info:
        read_labels(path)
    assert info.value.line == 3
    assert str(info.value).startswith(f"{path}:3:")
    assert "'pass' or 'fail'" in info.value.message
    assert (repr(bad) if bad else "empty cell") in info.value.message


@pytest.mark.parametrize("bad", [1, True, None, "ok"])
def test_jsonl_bad_label(tmp_path: Path, bad: object) -> None:
    path = write(tmp_path, "l.jsonl", json.dumps({"session_id": "s", "label": bad}) + "\n")
    with pytest.raises(InputFileError) as info:
        read_labels(path)
    assert info.value.line == 1
    assert repr(bad) in info.value.message


@pytest.mark.parametrize("bad", ["4", "0", "2.5", "good", "-1"])
def test_csv_bad_score(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path, "l.csv", f"session_id,label,fluff\ns-1,pass,2\ns-2,fail,{bad}\n")
    with pytest.raises(InputFileError) as info:
        read_labels(path)
    assert info.value.line == 3
    assert "fluff must be 1, 2 or 3" in info.value.message
    assert repr(bad) in info.value.message


def test_jsonl_boolean_is_not_a_score(tmp_path: Path) -> None:
    path = write(tmp_path, "l.jsonl", '{"session_id": "s", "label": "pass", "fluff": true}\n')
    with pytest.raises(InputFileError, match="fluff must be 1, 2 or 3"):
        read_labels(path)


def test_duplicate_session_id_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "l.csv", "session_id,label\ns-1,pass\ns-2,fail\ns-1,fail\n")
    with pytest.raises(InputFileError) as info:
        read_labels(path)
    assert info.value.line == 4
    assert "duplicate session id 's-1'" in info.value.message
    assert "line 2" in info.value.message


def test_missing_column_is_reported_on_the_header(tmp_path: Path) -> None:
    path = write(tmp_path, "l.csv", "session,verdict\ns-1,pass\n")
    with pytest.raises(InputFileError) as info:
        read_labels(path)
    assert info.value.line == 1
    assert "session_id, label" in info.value.message


def test_jsonl_missing_key_and_bad_json(tmp_path: Path) -> None:
    path = write(tmp_path, "l.jsonl", '{"session_id": "a", "label": "pass"}\n{"session_id": "b"}\n')
    with pytest.raises(InputFileError, match="missing key") as info:
        read_labels(path)
    assert info.value.line == 2
    path = write(tmp_path, "m.jsonl", '{"session_id": "a", "label": "pass"}\n\n{oops\n')
    with pytest.raises(InputFileError, match="not valid JSON") as info:
        read_labels(path)
    assert info.value.line == 3


def test_wrong_cell_count_and_empty_id(tmp_path: Path) -> None:
    path = write(tmp_path, "l.csv", "session_id,label\ns-1,pass,extra\n")
    with pytest.raises(InputFileError, match="expected 2 columns, found 3") as info:
        read_labels(path)
    assert info.value.line == 2
    path = write(tmp_path, "m.csv", "session_id,label\n ,pass\n")
    with pytest.raises(InputFileError, match="session_id is empty"):
        read_labels(path)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="empty"):
        read_labels(write(tmp_path, "e.csv", "\n"))
    with pytest.raises(InputFileError, match="cannot read labels"):
        read_labels(tmp_path / "nope.csv")


def test_header_only_file_has_no_labels(tmp_path: Path) -> None:
    assert len(read_labels(write(tmp_path, "h.csv", "session_id,label\n"))) == 0
