"""Outputs never destroy inputs, never replace devices, and keep links and modes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hostile import REPLAY, SESSIONS

from research_judge._files import write_atomically
from research_judge.cli import main
from research_judge.errors import ConfigError
from research_judge.results.model import read_results
from research_judge.results.output import ResultsFile
from research_judge.safety import check_distinct
from results_support import make_result, write_results

# Device nodes of our own (null: 1,3; full: 1,7) in the test's folder, never the system's: were
# a regression to replace the node with a file, only the test's copy would be damaged.
DEVICES = {"null": (1, 3), "full": (1, 7)}


def device(tmp_path: Path, name: str) -> Path:
    node = tmp_path / f"dev-{name}"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(*DEVICES[name]))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    return node


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    return Path(shutil.copy(SESSIONS, tmp_path / "sessions.jsonl"))


def grade(sessions: Path, *extra: str) -> int:
    return main(["grade", str(sessions), *REPLAY, "--quiet", *extra])


def test_grade_out_same_as_input_is_refused_and_the_input_untouched(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sessions.read_bytes()
    assert grade(sessions, "--out", str(sessions)) == 2
    assert "same file as the sessions file" in capsys.readouterr().err
    assert sessions.read_bytes() == before


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "dotted path"])
def test_grade_out_reaching_the_input_by_another_name_is_refused(
    sessions: Path, tmp_path: Path, kind: str
) -> None:
    before = sessions.read_bytes()
    alias = tmp_path / "alias.jsonl"
    if kind == "symlink":
        alias.symlink_to(sessions)
    elif kind == "hardlink":
        os.link(sessions, alias)
    else:
        (tmp_path / "sub").mkdir()
        alias = tmp_path / "sub" / ".." / "sessions.jsonl"
    assert grade(sessions, "--out", str(alias)) == 2
    assert sessions.read_bytes() == before


def test_record_and_out_on_one_file_is_refused(
    sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.jsonl"
    code = main(["grade", str(sessions), "--out", str(out), "--record", str(out), "--quiet",
                 "--provider", "openai", "--model", "m", "--no-cache"])  # fmt: skip
    assert code == 2
    assert "are the same file" in capsys.readouterr().err
    assert not out.exists()


def test_out_inside_replay_or_same_as_cache_dir_is_refused(sessions: Path, tmp_path: Path) -> None:
    replay = tmp_path / "rec.jsonl"
    replay.write_text("")
    code = main(["grade", str(sessions), "--out", str(replay), "--provider", "scripted",
                 "--model", "m", "--replay", str(replay), "--quiet"])  # fmt: skip
    assert code == 2
    assert replay.read_text() == ""
    cache = tmp_path / "cache"
    cache.mkdir()
    code = main(["grade", str(sessions), "--out", str(cache), "--provider", "openai",
                 "--model", "m", "--cache-dir", str(cache), "--quiet"])  # fmt: skip
    assert code == 2


def test_library_grade_file_refuses_its_input_as_output(sessions: Path) -> None:
    with pytest.raises(ConfigError, match="same file"):
        check_distinct([("the sessions file", sessions)], [("the results file", sessions)])


@pytest.mark.parametrize("name", list(DEVICES))
def test_grade_out_on_a_device_is_refused_without_reading_it(
    sessions: Path, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # /dev/full used to be read as one endless line until the kernel killed the process.
    node = device(tmp_path, name)
    assert grade(sessions, "--out", str(node)) == 5
    assert "character device" in capsys.readouterr().err
    assert stat.S_ISCHR(os.stat(node).st_mode)


def test_grade_out_on_a_fifo_is_refused(sessions: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert grade(sessions, "--out", str(fifo)) == 5
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


# --- report -------------------------------------------------------------------------------


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_results(tmp_path / "r.jsonl", [make_result(f"s{i}") for i in range(3)])


def test_report_html_over_its_results_is_refused(results: Path) -> None:
    before = results.read_bytes()
    assert main(["report", str(results), "--html", str(results)]) == 2
    assert results.read_bytes() == before


def test_report_html_and_md_on_one_path_is_refused(results: Path, tmp_path: Path) -> None:
    both = tmp_path / "both"
    assert main(["report", str(results), "--html", str(both), "--md", str(both)]) == 2
    assert not both.exists()


@pytest.mark.parametrize("flag", ["--labels", "--baseline"])
def test_report_output_over_labels_or_baseline_is_refused(
    results: Path, tmp_path: Path, flag: str
) -> None:
    other = write_results(tmp_path / "other.jsonl", [make_result("s0")])
    before = other.read_bytes()
    assert main(["report", str(results), flag, str(other), "--md", str(other)]) == 2
    assert other.read_bytes() == before


def test_report_to_a_fifo_or_device_is_refused(results: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["report", str(results), "--md", str(fifo)]) == 5
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    node = device(tmp_path, "full")
    assert main(["report", str(results), "--html", str(node)]) == 5
    assert stat.S_ISCHR(os.stat(node).st_mode)


def test_report_does_not_follow_a_planted_symlink_at_a_predictable_temp_name(
    results: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "report.md"
    for pid in {os.getpid(), os.getppid()}:  # the old name was .report.md.<pid>.tmp
        (tmp_path / f".report.md.{pid}.tmp").symlink_to(victim)
    assert main(["report", str(results), "--md", str(out)]) == 0
    assert victim.read_text() == "precious"
    assert out.is_file() and not out.is_symlink()


def test_rewritten_report_keeps_a_symlink_and_the_mode(results: Path, tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("## research-judge report\n\nan earlier one\n")  # a report replaces its own
    real.chmod(0o640)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    assert main(["report", str(results), "--md", str(link)]) == 0
    assert link.is_symlink()
    assert "an earlier one" not in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_rewritten_results_file_keeps_a_symlink_and_the_mode(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    write_results(real, [make_result("b"), make_result("a")])
    real.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    out = ResultsFile(link)
    out.load()
    assert out.finalize(["a", "b"])  # out of order: rewritten
    assert link.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert [r.session_id for r in read_results(link)] == ["a", "b"]


def test_a_new_report_gets_the_usual_shareable_mode(tmp_path: Path) -> None:
    out = tmp_path / "new.md"
    old = os.umask(0o022)
    try:
        write_atomically(out, "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["new.md"]


# --- one run per results file ----------------------------------------------------------------

HOLD = """
import sys
from research_judge.safety import OutputLock
lock = OutputLock(sys.argv[1])
lock.acquire()
print("locked", flush=True)
sys.stdin.read()
"""


@contextmanager
def holding(out: Path) -> Iterator[int]:
    """Another process holding ``out``'s results lock until the block ends; yields its pid."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield holder.pid
    finally:
        holder.communicate("")


def test_a_second_run_on_the_same_out_says_who_holds_it_and_exits_5(
    sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    with holding(out) as pid:
        assert grade(sessions, "--out", str(out)) == 5
        err = capsys.readouterr().err
        assert f"pid {pid}" in err and "another research-judge run" in err
        assert not out.exists()
    # Once the holder is gone, the run goes ahead and leaves no lock file behind.
    assert grade(sessions, "--out", str(out)) == 0
    assert len(read_results(out)) == 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl", "sessions.jsonl"]


def test_a_hard_link_to_a_results_file_in_use_is_the_same_file(
    sessions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text("")  # a run under way (or about to resume) on this file
    other = tmp_path / "same-file.jsonl"
    os.link(out, other)  # another name for the same file: its own lock file beside it
    with holding(out):
        assert grade(sessions, "--out", str(other)) == 5
        err = capsys.readouterr().err
        assert "being written by another research-judge run under another name" in err
        assert out.read_text() == ""  # nothing graded, nothing billed twice
    assert grade(sessions, "--out", str(other)) == 0
    assert len(read_results(out)) == 20  # the same file, through either name


# --- convert -------------------------------------------------------------------------------

AGENT_LOG = SESSIONS.parent / "agent_logs" / "openai_chat.jsonl"


@pytest.mark.parametrize("name", list(DEVICES))
def test_convert_refuses_a_device_as_its_output(tmp_path: Path, name: str) -> None:
    node = device(tmp_path, name)
    assert main(["convert", "openai-chat", str(AGENT_LOG), "--out", str(node), "--quiet"]) == 5
    assert stat.S_ISCHR(os.stat(node).st_mode)


def test_convert_keeps_a_symlinked_output_and_its_mode(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("")
    real.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert main(["convert", "openai-chat", str(AGENT_LOG), "--out", str(link), "--quiet"]) == 0
    assert link.is_symlink() and real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


# --- --junit is an output like any other -------------------------------------------------------


def test_compare_junit_over_an_input_is_refused(results: Path, tmp_path: Path) -> None:
    before = results.read_bytes()
    assert main(["compare", str(results), str(results), "--junit", str(results)]) == 2
    assert results.read_bytes() == before


def test_validate_junit_over_the_labels_is_refused(results: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("session_id,label\ns0,pass\ns1,fail\n")
    before = labels.read_bytes()
    assert main(["validate", str(results), "--labels", str(labels), "--junit", str(labels)]) == 2
    assert labels.read_bytes() == before


def test_grade_junit_over_the_sessions_is_refused(sessions: Path) -> None:
    before = sessions.read_bytes()
    out = sessions.with_name("o.jsonl")
    assert grade(sessions, "--out", str(out), "--junit", str(sessions)) == 2
    assert sessions.read_bytes() == before
