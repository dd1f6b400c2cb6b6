"""``research-judge demo`` from a built wheel, away from the source tree (slow: builds it)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_ships_the_demo_and_it_runs_without_the_checkout(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(wheels), str(PROJECT_ROOT)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    [wheel] = wheels.glob("research_judge-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "installed")
    shipped = {n.removeprefix("research_judge/_fixtures/") for n in names if "_fixtures/" in n}
    for needed in ("sessions.jsonl", "bad_sessions.jsonl", "labels.csv", "tasks/agents.py",
                   "baseline/sessions.jsonl"):  # fmt: skip
        assert needed in shipped
    recordings = sorted((PROJECT_ROOT / "fixtures" / "recordings").glob("*.json"))
    assert {f"recordings/{p.name}" for p in recordings} <= shipped

    # Run from an empty folder with only the unpacked wheel on the path, and no key.
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(tmp_path / "installed")
    demo = subprocess.run(
        [sys.executable, "-m", "research_judge", "demo", "--out", "first-demo"],
        capture_output=True, text=True, env=env, cwd=work, timeout=300,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr
    assert "sessions 20: graded 20, errors 0" in demo.stdout
    assert "HTML report: first-demo/report.html" in demo.stdout
    assert (work / "first-demo" / "report.html").is_file()
    # The commands it printed run again by hand from the same folder.
    assert "$ research-judge grade first-demo/fixtures/sessions.jsonl" in demo.stdout
    assert (work / "first-demo" / "fixtures" / "labels.csv").is_file()
