"""`-` as an input path is standard input, on every verb that reads a file a pipe can carry."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from research_judge.cli import main
from results_support import make_result, write_results

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "fixtures" / "tasks" / "tasks.jsonl"
Feed = Callable[[bytes], None]


@pytest.fixture
def stdin(monkeypatch: pytest.MonkeyPatch) -> Feed:
    def feed(data: bytes) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    return feed


def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    base = write_results(tmp_path / "b.jsonl", [make_result(f"s{i}") for i in range(10)])
    cur = write_results(
        tmp_path / "c.jsonl",
        [make_result(f"s{i}", "pass" if i < 6 else "fail") for i in range(10)],
    )
    return base, cur


def test_compare_reads_either_run_from_stdin(
    tmp_path: Path, stdin: Feed, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cur = two_runs(tmp_path)
    assert main(["compare", str(base), str(cur), "--json"]) == 1
    expected = json.loads(capsys.readouterr().out)

    stdin(cur.read_bytes())
    assert main(["compare", str(base), "-", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == expected
    stdin(base.read_bytes())
    assert main(["compare", "-", str(cur), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["regressions"] == expected["regressions"]


def test_validate_reads_results_or_labels_from_stdin(
    tmp_path: Path, stdin: Feed, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(
        tmp_path / "r.jsonl", [make_result(f"s{i}", "pass" if i < 5 else "fail") for i in range(8)]
    )
    rows = [f"s{i},{'pass' if i < 4 else 'fail'}" for i in range(8)]
    csv = ("session_id,label\n" + "\n".join(rows) + "\n").encode()
    jsonl = "".join(
        json.dumps({"session_id": f"s{i}", "label": "pass" if i < 4 else "fail"}) + "\n"
        for i in range(8)
    ).encode()
    labels = tmp_path / "labels.csv"
    labels.write_bytes(csv)
    argv = ["validate", "--bootstrap", "0", "--json"]
    assert main([*argv, str(results), "--labels", str(labels)]) == 0
    expected = json.loads(capsys.readouterr().out)
    assert expected["n"] == 8

    stdin(results.read_bytes())
    assert main([*argv, "-", "--labels", str(labels)]) == 0
    assert json.loads(capsys.readouterr().out) == expected
    for data in (csv, jsonl):  # CSV or JSONL labels: told apart by their first character
        stdin(data)
        assert main([*argv, str(results), "--labels", "-"]) == 0
        assert json.loads(capsys.readouterr().out)["confusion"] == expected["confusion"]


def test_report_and_stability_read_results_from_stdin(
    tmp_path: Path, stdin: Feed, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(tmp_path / "r.jsonl", [make_result("s1"), make_result("s2", "fail")])
    assert main(["report", str(results), "--md", "-"]) == 0
    expected = capsys.readouterr().out
    stdin(results.read_bytes())
    assert main(["report", "-", "--md", "-"]) == 0
    assert capsys.readouterr().out == expected

    stdin(results.read_bytes())
    assert main(["stability", "-"]) == 2  # read, and found to hold no repeated samples
    assert "no result carries repeated samples" in capsys.readouterr().err


def test_tasks_run_reads_the_task_file_from_stdin(
    stdin: Feed, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    stdin(TASKS.read_bytes())
    argv = ["tasks", "run", "-", "--agent", "fixtures.tasks.agents:v1", "--app-dir", str(REPO)]
    assert main([*argv, "--json"]) == 1  # half the fixture tasks fail, by design
    report = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in report["results"]] == [
        json.loads(line)["id"] for line in TASKS.read_text(encoding="utf-8").splitlines()
    ]


def test_stdin_can_be_read_once_only(
    tmp_path: Path, stdin: Feed, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin(b"")
    assert main(["compare", "-", "-"]) == 2
    assert "'-' (standard input) can be given once; got it for BASELINE and CURRENT" in (
        capsys.readouterr().err
    )


def test_a_results_file_that_is_not_utf8_is_bad_input_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_results(tmp_path / "r.jsonl", [make_result("s1")])
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(good.read_bytes() + b"\xff\xfe not text\n")
    assert main(["compare", str(good), str(junk)]) == 2  # was a traceback and exit 70
    assert f"{junk}:2: not valid UTF-8 (byte 1)" in capsys.readouterr().err


# --- `-` as an output: stdout -------------------------------------------------------------------


def labelled_half(tmp_path: Path) -> tuple[Path, Path]:
    results = write_results(
        tmp_path / "r.jsonl", [make_result(f"s{i}", "pass" if i % 3 else "fail") for i in range(12)]
    )
    labels = tmp_path / "labels.csv"
    rows = [f"s{i},{'pass' if i % 2 else 'fail'}" for i in range(6)]
    labels.write_text("session_id,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return results, labels


def test_validate_suggest_out_dash_prints_only_the_csv_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    results, labels = labelled_half(tmp_path)
    argv = ["validate", str(results), "--labels", str(labels), "--bootstrap", "0", "--suggest", "3"]
    main([*argv, "--suggest-out", "file.csv"])
    capsys.readouterr()

    assert main([*argv, "--suggest-out", "-"]) == 0

    captured = capsys.readouterr()
    assert captured.out == (tmp_path / "file.csv").read_text(encoding="utf-8")
    assert captured.out.startswith("session_id,label,")
    assert "wrote 3 sessions to label to stdout" in captured.err
    assert "human label" in captured.err  # the text report moved to stderr
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("other", [["--json"], ["--junit", "-"]])
def test_validate_refuses_two_outputs_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], other: list[str]
) -> None:
    results, labels = labelled_half(tmp_path)
    argv = ["validate", str(results), "--labels", str(labels), "--suggest", "3"]
    assert main([*argv, "--suggest-out", "-", *other]) == 2
    assert "both want stdout" in capsys.readouterr().err


def test_report_html_dash_writes_the_page_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(tmp_path / "r.jsonl", [make_result("s1"), make_result("s2", "fail")])
    md = tmp_path / "r.md"
    assert main(["report", str(results), "--html", "-", "--md", str(md)]) == 0
    captured = capsys.readouterr()
    assert captured.out.lower().startswith("<!doctype html")
    assert captured.out.rstrip().endswith("</html>")
    assert f"wrote {md}" in captured.err and md.is_file()


def test_grade_out_dash_is_refused_rather_than_a_file_named_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    sessions = str(REPO / "fixtures" / "sessions.jsonl")
    argv = ["grade", sessions, "--out", "-", "--provider", "scripted", "--model", "m"]
    assert main([*argv, "--replay", str(tmp_path)]) == 2
    assert "--out -: grade writes a results file it can resume from" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_report_of_results_from_stdin_does_not_date_the_run_by_the_pipe(
    tmp_path: Path, stdin: Feed, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    results = write_results(tmp_path / "r.jsonl", [make_result("s1"), make_result("s2", "fail")])
    os.utime(results, (0, 0))  # written on 1970-01-01
    page = tmp_path / "r.html"
    assert main(["report", str(results), "--html", str(page)]) == 0
    assert "written 1970-01-01 00:00 UTC" in page.read_text(encoding="utf-8")

    stdin(results.read_bytes())
    assert main(["report", "-", "--html", str(page)]) == 0
    assert "written " not in page.read_text(encoding="utf-8")  # unknown, not "now"


class Terminal(io.TextIOWrapper):
    """Standard input left at a terminal: reading it would wait for typing that never comes."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(b""))

    def isatty(self) -> bool:
        return True

    def read(self, *args: object) -> str:
        raise AssertionError("read a terminal: the run would hang")


@pytest.mark.parametrize(
    "argv",
    [
        ["grade", "-", "--out", "{tmp}/r.jsonl", "--model", "m"],
        ["convert", "openai-chat", "-", "--out", "{tmp}/s.jsonl"],
        ["compare", "-", "{tmp}/b.jsonl"],
        ["validate", "-", "--labels", "{tmp}/l.csv"],
    ],
    ids=lambda argv: argv[0],
)
@pytest.mark.parametrize("console", ["terminal", "closed"])
def test_dash_with_no_pipe_says_so_instead_of_waiting(
    argv: list[str],
    console: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "stdin", Terminal() if console == "terminal" else None)
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "standard input" in err and "pipe" in err and "Traceback" not in err
