"""The command line as a CI script sees it: version, exit codes, `-` paths, closed pipes."""

from __future__ import annotations

import importlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import research_judge
from research_judge.cli import main
from research_judge.exit_codes import MEANING, ExitCode, markdown_table
from results_support import make_result, write_results

REPO = Path(__file__).resolve().parents[1]
TASKS = str(REPO / "fixtures" / "tasks" / "tasks.jsonl")
CHAT_LOG = str(REPO / "fixtures" / "agent_logs" / "openai_chat.jsonl")


def run_cli(*argv: str, stdout: int | None = None) -> subprocess.CompletedProcess[str]:
    code = "from research_judge.cli import entry; entry()"
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        check=False,
    )


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"research-judge {research_judge.__version__}"


def test_every_exit_code_is_explained_in_help_and_in_the_docs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    for code in ExitCode:
        assert f"{int(code)} {' '.join(MEANING[code].split())}" in out
    # docs/ci.md and the reference carry the same table, generated from the same definitions.
    for doc in (REPO / "docs" / "ci.md", REPO / "docs" / "reference.md"):
        assert markdown_table() in doc.read_text(encoding="utf-8"), doc


def test_exit_codes_are_distinct_and_keep_the_contract() -> None:
    assert len({int(c) for c in ExitCode}) == len(ExitCode)
    # Contract sections 6, 8, 14, 15: these numbers are public and never move.
    assert (ExitCode.OK, ExitCode.FLAGGED, ExitCode.FAILED) == (0, 1, 2)
    assert ExitCode.PROVIDER_DOWN == 3


def test_a_bug_is_its_own_exit_code_with_a_traceback_never_gate_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    compare_pkg = importlib.import_module("research_judge.compare")

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug in compare")

    monkeypatch.setattr(compare_pkg, "compare_runs", broken)
    path = write_results(tmp_path / "r.jsonl", [make_result("s1")])

    assert main(["compare", str(path), str(path)]) == ExitCode.INTERNAL == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: a bug in compare" in err
    assert "internal error (exit 70)" in err


def closed_pipe() -> int:
    """The write end of a pipe nobody reads any more (what `| head` leaves after one line)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["compare", "{r}", "{r}"], ExitCode.PIPE_CLOSED),
        (["compare", "{r}", "{r}", "--json"], ExitCode.PIPE_CLOSED),
        (["tasks", "run", "{t}", "--agent", "fixtures.tasks.agents:v1"], ExitCode.PIPE_CLOSED),
        (["report", "{r}", "--md", "-"], ExitCode.PIPE_CLOSED),
        (["convert", "openai-chat", "{c}", "--out", "-"], ExitCode.PIPE_CLOSED),
        # argparse itself swallows the failed write of its help and version text.
        (["--help"], ExitCode.OK),
        (["--version"], ExitCode.OK),
    ],
)
def test_a_closed_pipe_is_quiet(tmp_path: Path, argv: list[str], code: int) -> None:
    results = write_results(tmp_path / "r.jsonl", [make_result(f"s{i}") for i in range(30)])
    write_end = closed_pipe()
    try:
        done = run_cli(*(a.format(r=results, t=TASKS, c=CHAT_LOG) for a in argv), stdout=write_end)
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == code


def test_report_md_dash_writes_the_markdown_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(tmp_path / "r.jsonl", [make_result("s1"), make_result("s2", "fail")])
    html = tmp_path / "r.html"

    assert main(["report", str(results), "--md", "-", "--html", str(html)]) == 0
    captured = capsys.readouterr()
    assert captured.out.lstrip().startswith("#")  # the Markdown itself, nothing before it
    assert "wrote" not in captured.out
    assert f"wrote {html}" in captured.err
    assert html.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert not (tmp_path / "-").exists()


def test_report_cannot_send_both_reports_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(tmp_path / "r.jsonl", [make_result("s1")])
    assert main(["report", str(results), "--md", "-", "--html", "-"]) == 2
    assert re.search(r"only one report can go to stdout", capsys.readouterr().err)


def test_report_appends_its_markdown_to_the_step_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    results = write_results(tmp_path / "r.jsonl", [make_result("s1"), make_result("s2", "fail")])

    assert main(["report", str(results), "--md", "-"]) == 0

    written = capsys.readouterr().out
    assert summary.read_text(encoding="utf-8") == written.rstrip("\n") + "\n\n"


def test_an_unwritable_step_summary_is_a_warning_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "missing-dir" / "summary.md"))
    results = write_results(tmp_path / "r.jsonl", [make_result("s1")])

    assert main(["compare", str(results), str(results)]) == 0
    assert "warning: step summary not written" in capsys.readouterr().err


def test_grade_reads_sessions_from_stdin_with_a_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures = REPO / "fixtures"
    data = (fixtures / "bad_sessions.jsonl").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = tmp_path / "r.jsonl"
    argv = ["grade", "-", "--out", str(out), "--provider", "scripted", "--quiet"]
    argv += ["--model", "authored-lenient-judge", "--replay", str(fixtures / "recordings")]

    assert main(argv) == 2  # the file's bad lines, named by line, the good sessions graded

    from research_judge.results.model import read_results

    assert [r.session_id for r in read_results(out)] == ["b-0001", "b-0002", "b-0003"]
    err = capsys.readouterr().err
    found = re.search(r"(\S*research-judge-stdin-[^/]+)/stdin\.jsonl:2: ", err)
    assert found is not None
    assert not Path(found.group(1)).exists()  # the spooled copy is gone
