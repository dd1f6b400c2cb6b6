"""`research-judge label` without a browser: the labels file it appends to, resuming, undo,
the queue's order, and `--script` (what `make demo` uses)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.errors import ConfigError, InputFileError
from research_judge.label import LabelRun, LabelStore, load_items, order_items
from research_judge.label.run import UnknownSession
from research_judge.results.model import read_results
from research_judge.validate import read_labels, validate_run
from research_judge.validate.suggest import suggest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSIONS = FIXTURES / "sessions.jsonl"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_each_label_is_a_row_on_disk_at_once(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    items, _ = load_items(SESSIONS)
    run = LabelRun(items, LabelStore(path, "ann"))
    assert path.read_text() == "session_id,label,annotator,labelled_at,note\n"
    first = run.current()
    assert first is not None and first.session_id == "s-0001"
    run.label("s-0001", "pass", "fine,\nreally")
    got = rows(path)
    assert [(r["session_id"], r["label"], r["annotator"], r["note"]) for r in got] == [
        ("s-0001", "pass", "ann", "fine, really")
    ]
    assert str(run.progress) == "1 / 20 labelled"


def test_cells_a_spreadsheet_would_run_are_neutralised_and_read_back(tmp_path: Path) -> None:
    sessions = tmp_path / "s.jsonl"
    sessions.write_text(
        json.dumps({"id": "=1+1", "question": "q", "answer": "a", "trajectory": []}) + "\n",
        encoding="utf-8",
    )
    path = tmp_path / "labels.csv"
    items, _ = load_items(sessions)
    LabelRun(items, LabelStore(path, "@bob")).label("=1+1", "fail", "-2 points")
    [row] = rows(path)
    assert (row["session_id"], row["annotator"], row["note"]) == ("'=1+1", "'@bob", "'-2 points")
    labels = read_labels(path)
    assert list(labels.annotations) == ["=1+1"] and list(labels.annotations["=1+1"]) == ["@bob"]


def test_a_restart_resumes_for_that_annotator_only(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    items, _ = load_items(SESSIONS)
    ann = LabelRun(items, LabelStore(path, "ann"))
    ann.label("s-0001", "pass")
    ann.label("s-0002", "fail")
    again = LabelRun(items, LabelStore(path, "ann"))
    assert again.current() is not None and again.current().session_id == "s-0003"  # type: ignore[union-attr]
    assert str(again.progress) == "2 / 20 labelled"
    other = LabelRun(items, LabelStore(path, "bo"))  # another annotator starts at the top
    assert other.current() is not None and other.current().session_id == "s-0001"  # type: ignore[union-attr]
    other.label("s-0001", "fail")
    report = validate_run([], read_labels(path), n_boot=0)
    assert report.excluded.annotator_tie.ids == ["s-0001"]


def test_undo_removes_only_this_runs_last_row_while_it_is_last(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    items, _ = load_items(SESSIONS)
    run = LabelRun(items, LabelStore(path, "ann"))
    run.label("s-0001", "pass")
    run.label("s-0002", "fail")
    assert run.undo() == "s-0002"
    assert [r["session_id"] for r in rows(path)] == ["s-0001"]
    assert run.current() is not None and run.current().session_id == "s-0002"  # type: ignore[union-attr]
    # Someone else appends: the earlier row is no longer last, so undo refuses to touch it.
    other = LabelRun(items, LabelStore(path, "bo"))
    other.label("s-0005", "pass")
    with pytest.raises(ConfigError, match="changed after that label was saved"):
        run.undo()
    assert [r["session_id"] for r in rows(path)] == ["s-0001", "s-0005"]


def test_unknown_and_repeated_labels_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    items, _ = load_items(SESSIONS)
    run = LabelRun(items, LabelStore(path, "ann"))
    with pytest.raises(UnknownSession):
        run.label("nope", "pass")
    with pytest.raises(ConfigError, match="pass or fail"):
        run.label("s-0001", "maybe")
    run.label("s-0001", "pass")
    with pytest.raises(ConfigError, match="already labelled"):
        run.label("s-0001", "fail")
    assert len(rows(path)) == 1


def test_a_labels_file_without_an_annotator_column_is_not_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    original = "session_id,label\ns-0001,pass\n"
    path.write_text(original, encoding="utf-8")
    with pytest.raises(InputFileError, match="no annotator column"):
        LabelStore(path, "ann")
    assert path.read_text(encoding="utf-8") == original


def test_orders_and_sample(tmp_path: Path) -> None:
    items, _ = load_items(SESSIONS)
    ids = [i.session_id for i in items]
    assert [i.session_id for i in order_items(items, "input", sample=3)] == ids[:3]
    shuffled = [i.session_id for i in order_items(items, "random", seed=4)]
    assert sorted(shuffled) == sorted(ids) and shuffled != ids
    assert shuffled == [i.session_id for i in order_items(items, "random", seed=4)]
    with pytest.raises(ConfigError, match="results file"):
        order_items(items, "suggest")


def graded(tmp_path: Path) -> Path:
    out = tmp_path / "results.jsonl"
    replay = ["--provider", "scripted", "--model", "authored-lenient-judge", "--quiet",
              "--replay", str(FIXTURES / "recordings")]  # fmt: skip
    assert main(["grade", str(SESSIONS), "--out", str(out), *replay]) == 0
    return out


def test_suggest_order_is_validate_suggests(tmp_path: Path) -> None:
    results_path = graded(tmp_path)
    items, results = load_items(results_path, SESSIONS)
    assert results is not None
    queue = [i.session_id for i in order_items(items, "suggest", lead="fail")]
    empty = read_labels_empty(tmp_path)
    expected = [s.session_id for s in suggest(read_results(results_path), empty, 100)]
    assert queue[: len(expected)] == expected
    assert sorted(queue) == sorted(i.session_id for i in items)


def read_labels_empty(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "empty.csv"
    path.write_text("session_id,label\n", encoding="utf-8")
    return read_labels(path)


def test_a_results_input_needs_its_sessions(tmp_path: Path) -> None:
    results_path = graded(tmp_path)
    with pytest.raises(ConfigError, match="--sessions"):
        load_items(results_path)


def test_script_labels_without_a_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "keys.txt"
    script.write_text("# demo\np looks right\nf misses the point\ns\nu\nf\n", encoding="utf-8")
    labels = tmp_path / "labels.csv"
    args = ["label", str(SESSIONS), "--labels", str(labels), "--annotator", "ann",
            "--script", str(script)]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "labelled s-0001 pass (1 / 20 labelled)" in out
    assert "undid s-0002" in out
    assert [(r["session_id"], r["label"], r["note"]) for r in rows(labels)] == [
        ("s-0001", "pass", "looks right"),
        ("s-0002", "fail", ""),
    ]
    bad = tmp_path / "bad.txt"
    bad.write_text("x\n", encoding="utf-8")
    assert main([*args[:-1], str(bad)]) == 2
    assert "bad.txt:1: unknown key 'x'" in capsys.readouterr().err


def test_a_results_input_is_labelled_in_suggest_order_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results_path = graded(tmp_path)
    capsys.readouterr()
    script = tmp_path / "keys.txt"
    script.write_text("p\np\n", encoding="utf-8")
    labels = tmp_path / "labels.csv"
    args = ["label", str(results_path), "--sessions", str(SESSIONS), "--labels", str(labels),
            "--annotator", "ann", "--script", str(script)]  # fmt: skip
    assert main(args) == 0
    # No labels yet: human fails count as the least certain class, so judge fails lead.
    expected = suggest(read_results(results_path), read_labels_empty(tmp_path), 2, lead="fail")
    assert [r["session_id"] for r in rows(labels)] == [s.session_id for s in expected]
    assert expected[0].judge_verdict == "fail"


def test_a_carriage_return_in_an_id_stays_inside_its_cell(tmp_path: Path) -> None:
    """A session id holding a carriage return (the logs are hostile) is quoted in the row, so
    the labels file still reads back: the label is not split into a broken row and a label
    for another session."""
    ids = ["a\rs-victim", "b\nc", "s-victim"]
    from support import session, write_sessions

    path = tmp_path / "labels.csv"
    items, _ = load_items(write_sessions(tmp_path / "s.jsonl", [session(i) for i in ids]))
    run = LabelRun(items, LabelStore(path, "ann"))
    run.label("a\rs-victim", "fail", "x")
    run.label("b\nc", "pass")
    labels = read_labels(path)
    assert {sid: {a: h.label for a, h in by.items()} for sid, by in labels.annotations.items()} == {
        "a\rs-victim": {"ann": "fail"},
        "b\nc": {"ann": "pass"},
    }
    assert LabelRun(items, LabelStore(path, "ann")).progress.labelled == 2  # resumes


def test_suggestions_quote_a_carriage_return(tmp_path: Path) -> None:
    from research_judge.validate.suggest import Suggestion, to_csv

    text = to_csv([Suggestion("a\rb", "fail", 0.5, "reason\rtwo", "q")])
    [row] = list(csv.DictReader(io.StringIO(text, newline="")))
    assert (row["session_id"], row["judge_reasons"]) == ("a\rb", "reason\rtwo")


def test_a_missing_script_is_named_not_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "keys.txt"
    args = ["label", str(SESSIONS), "--labels", str(tmp_path / "l.csv"), "--annotator", "ann",
            "--script", str(missing)]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and "cannot read label script" in err
