"""``make demo`` runs end to end offline and shows each part of the story."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.cli._demo import MARKER

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_runs_offline_and_writes_the_report(tmp_path: Path) -> None:
    # Run a copy so the test never touches a developer's demo-out/.
    for name in ("scripts", "fixtures", "prompts"):
        shutil.copytree(ROOT / name, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, str(tmp_path / "scripts" / "demo.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("make demo: to run the commands below by hand, type .venv/bin/")
    assert "sessions 20: graded 20, errors 0" in out
    assert "fixtures/bad_sessions.jsonl:2: not valid JSON" in done.stdout + done.stderr
    assert "agrees on 92% of human passes and 50% of human fails" in out
    assert "do not trust this judge to catch failures: it agrees on 50% of 8 human fails" in out
    assert "corrected for the judge's errors (Rogan-Gladen): 60.0%" in out
    assert "wrote 4 sessions to label to demo-out/label-next.csv" in done.stderr
    assert out.count("\ns-00") >= 4  # the suggested rows, printed
    # Labelling a few sessions from a key script, undo included, then the human ceiling.
    assert "labelled s-0003 fail (3 / 4 labelled)\nundid s-0003\nlabelled s-0003 pass" in out
    labelled = (tmp_path / "demo-out" / "labels-you.csv").read_text(encoding="utf-8")
    assert labelled.count(",you,") == 4 and "s-0003,pass,you," in labelled
    assert "Human ceiling: the judge agrees with your annotators at kappa 0.49" in out
    assert "they agree with each other at 0.69" in out and "n = 20 labelled twice" in out
    assert "3 tied session(s) left out" in out
    assert "Judge shift (rejudged - baseline) or agent change (current - rejudged)" in out
    assert "Gates: FAILED" in out and "below the bar 0.7 (--min-fail-agreement)" in out
    assert "Regressions (pass -> fail) (1):\n  s-0016" in out
    # The gate fails on the real regression, and calls the structure drop noise, not a failure.
    assert "WARNING: 1 metric dropped by more than 0.05 (structure within noise)" in out
    assert (
        "research-judge compare: failing: 1 session passed in the baseline and fail now: s-0016"
        in done.stderr
    )
    assert "research-judge compare: not failing: structure dropped by 0.075" in done.stderr
    assert "regressions (1): multiply" in out and "fixes (1): author" in out
    # The agent-logs step: a Responses log, a Claude Agent SDK stream and a Vercel span dump too.
    for session in ("resp-lfp-01", "3f1b2c9e-7a44-4d1e-9a0b-5c2e8d6f1a10",
                    "4bf92f3577b34da6a3ce929d0e0e4736"):  # fmt: skip
        assert f"\n{session}: precision" in out
    report = tmp_path / "demo-out" / "report.html"
    assert f"HTML report: {Path('demo-out') / 'report.html'}" in out
    html = report.read_text(encoding="utf-8")
    for section in ('id="headline"', 'id="agreement"', 'id="worst"', 'id="regressions"'):
        assert section in html


def test_the_demo_never_deletes_a_folder_it_did_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine", encoding="utf-8")
    assert main(["demo", "--out", str(mine)]) == 2
    assert "not made by the demo" in capsys.readouterr().err
    assert (mine / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_a_second_demo_replaces_the_first_in_its_own_folder(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    (out / "results.jsonl").write_text("", encoding="utf-8")  # a stale file from the first run
    assert main(["demo", "--out", str(out)]) == 0
    assert len((out / "results.jsonl").read_text(encoding="utf-8").splitlines()) == 20


def test_a_second_demo_keeps_every_file_the_user_wrote_in_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    written = set(json.loads((out / MARKER).read_text(encoding="utf-8"))["files"])
    assert {"results.jsonl", "report.html", "fixtures/sessions.jsonl"} <= written
    # What a user does after the demo: grade their own file beside it, keep notes, a folder.
    mine = {
        "my-results.jsonl": "{}\n",
        "notes.txt": "mine",
        "runs/today.jsonl": "{}\n",
        "fixtures/../my-labels.csv": "session_id,label\n",
    }
    for name, text in mine.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    assert main(["demo", "--out", str(out)]) == 0
    for name, text in mine.items():
        assert (out / name).read_text(encoding="utf-8") == text
    after = set(json.loads((out / MARKER).read_text(encoding="utf-8"))["files"])
    assert after == written  # the manifest lists the demo's files, never the user's


def test_a_file_of_the_users_inside_the_demo_fixtures_stops_the_demo(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    (out / "fixtures" / "mine.jsonl").write_text("{}\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(["demo", "--out", str(out)]) == 2
    # Refused before anything is deleted: the earlier demo's run is left whole, not half gone.
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    "marker",
    ["made by research-judge demo; safe to delete\n", '{"files": ["../outside.txt"]}'],
    ids=["older-marker", "escaping-name"],
)
def test_a_marker_that_does_not_list_safe_files_deletes_nothing_outside(
    tmp_path: Path, marker: str
) -> None:
    out = tmp_path / "demo"
    out.mkdir()
    (out / MARKER).write_text(marker, encoding="utf-8")
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("mine too", encoding="utf-8")
    code = main(["demo", "--out", str(out)])
    assert outside.read_text(encoding="utf-8") == "mine too"
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert code == (2 if marker.startswith("made by") else 0)


def test_the_installed_demo_names_the_folder_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 0  # the default folder, in the working directory
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    # Nothing to worry a first-time user: no guessed context window for the scripted judge.
    assert "grade: warning" not in captured.err and "context-window table" not in captured.err
    assert lines[0].startswith("research-judge demo: writing to research-judge-demo/ ")
    assert "research-judge-demo/fixtures/" in lines[0]
    assert lines[-1] == "everything the demo wrote is in research-judge-demo/"
    assert (tmp_path / "research-judge-demo" / "report.html").is_file()
