"""A writer replaces an existing file only when it is its own kind of output, or with --force.

``convert --out`` and ``report --html/--md`` once replaced whatever was there (a labels CSV
someone filled in, say); ``validate --suggest-out`` already refused to. Now every writer follows
one rule, checked before any work is done.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.report import write_report
from results_support import make_result, write_results

REPO = Path(__file__).resolve().parents[2]
AGENT_LOG = REPO / "fixtures" / "agent_logs" / "openai_chat.jsonl"
LABELS = "session_id,label\ns-1,pass\ns-2,fail\n"


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text(LABELS, encoding="utf-8")
    return path


def refused(err: str, flag: str, path: Path) -> bool:
    return (
        f"{flag} {path}: already exists and is not an earlier output of this command" in err
        and ("--force" in err)
    )


def test_convert_does_not_replace_a_file_it_did_not_write(
    tmp_path: Path, labels: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["convert", "openai-chat", str(AGENT_LOG), "--quiet", "--out"]
    assert main([*argv, str(labels)]) == 2
    assert refused(capsys.readouterr().err, "--out", labels)
    assert labels.read_text(encoding="utf-8") == LABELS
    # Its own earlier output is replaced (a rerun), and so is an empty file.
    out = tmp_path / "sessions.jsonl"
    assert main([*argv, str(out)]) == 0
    first = out.read_text(encoding="utf-8")
    assert main([*argv, str(out)]) == 0 and out.read_text(encoding="utf-8") == first
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    assert main([*argv, str(empty)]) == 0 and empty.read_text(encoding="utf-8") == first
    # --force says the user means it.
    assert main([*argv, str(labels), "--force"]) == 0
    assert labels.read_text(encoding="utf-8") == first


def test_report_does_not_replace_a_file_it_did_not_write(
    tmp_path: Path, labels: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(tmp_path / "r.jsonl", [make_result("s-1"), make_result("s-2")])
    notes = tmp_path / "notes.md"
    notes.write_text("# My notes\n", encoding="utf-8")
    assert main(["report", str(results), "--html", str(labels)]) == 2
    assert refused(capsys.readouterr().err, "--html", labels)
    assert main(["report", str(results), "--md", str(notes)]) == 2
    assert refused(capsys.readouterr().err, "--md", notes)
    assert labels.read_text(encoding="utf-8") == LABELS
    assert notes.read_text(encoding="utf-8") == "# My notes\n"
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    for _ in range(2):  # the second run replaces the first run's reports
        assert main(["report", str(results), "--html", str(html), "--md", str(md)]) == 0
    assert main(["report", str(results), "--md", str(notes), "--force"]) == 0
    assert "research-judge report" in notes.read_text(encoding="utf-8")


def test_the_python_api_keeps_the_same_rule(tmp_path: Path, labels: Path) -> None:
    from research_judge.errors import ConfigError

    results = [make_result("s-1")]
    with pytest.raises(ConfigError, match="not an earlier output of this command"):
        write_report(results, html=labels)
    assert labels.read_text(encoding="utf-8") == LABELS
    write_report(results, html=labels, force=True)
    assert labels.read_text(encoding="utf-8").lstrip().startswith("<!DOCTYPE html>")


def test_junit_does_not_replace_a_file_it_did_not_write(
    tmp_path: Path, labels: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_results(tmp_path / "r.jsonl", [make_result("s-1"), make_result("s-2")])
    assert main(["compare", str(run), str(run), "--junit", str(labels)]) == 2
    assert refused(capsys.readouterr().err, "--junit", labels)
    assert labels.read_text(encoding="utf-8") == LABELS
    junit = tmp_path / "c.xml"
    for _ in range(2):
        assert main(["compare", str(run), str(run), "--junit", str(junit)]) == 0
    assert main(["compare", str(run), str(run), "--junit", str(labels), "--force"]) == 0
    assert "<testsuites" in labels.read_text(encoding="utf-8")


def test_suggest_out_never_replaces_a_file_unless_forced(
    tmp_path: Path, labels: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [f"s-{i}" for i in range(1, 9)]
    run = write_results(
        tmp_path / "r.jsonl",
        [make_result(i, "pass" if n % 2 else "fail") for n, i in enumerate(ids)],
    )
    argv = ["validate", str(run), "--labels", str(labels), "--bootstrap", "0", "--suggest", "2",
            "--suggest-out"]  # fmt: skip
    filled = tmp_path / "to-label.csv"
    filled.write_text("session_id,label\ns-3,pass\n", encoding="utf-8")  # being filled in
    assert main([*argv, str(filled)]) == 2
    assert refused(capsys.readouterr().err, "--suggest-out", filled)
    assert filled.read_text(encoding="utf-8") == "session_id,label\ns-3,pass\n"
    assert main([*argv, str(filled), "--force"]) == 0
    assert "s-3,pass" not in filled.read_text(encoding="utf-8")
