"""The README's quick start, run verbatim in a fresh virtual environment made from a copy of the
clone: it installs the package, runs the demo, grades a user-shaped session file with tool calls
(offline, with the baseline judge), writes its report, validates against labels and runs the
CI gate.

Only the environment is prepared, never the commands: the fresh venv finds the package's
dependencies through PYTHONPATH (links to this test run's own installed packages, the project
itself left out), so ``pip install .`` builds and installs just research-judge, without the
network and in seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Installed with the project or by pip itself: never linked into the fresh venv's path.
OWN = ("research_judge", "__editable__", "_research_judge", "pip")


def quick_start() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"^```bash\n(.*?)^```", section, flags=re.S | re.M)
    return block


def test_the_quick_start_is_short_and_says_how_to_reach_the_command() -> None:
    block = quick_start()
    assert len(block.splitlines()) < 30
    assert ". .venv/bin/activate" in block and ".venv/bin/research-judge" in block


def test_the_quick_start_runs_verbatim_in_a_fresh_venv(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        source = REPO / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            (clone / name).write_bytes(source.read_bytes())
    deps = tmp_path / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(OWN) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "python3").symlink_to(sys.executable)  # the interpreter the deps were built for
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        PATH=f"{tools}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(deps),
        HOME=str(tmp_path / "home"),  # the response cache's default folder: not the user's
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip reads this variable inverted: build without isolation
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        ["bash", "-e", "-c", quick_start()],
        cwd=clone, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    # The last command is the CI gate on the demo's runs: one session regressed, so exit 1.
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    # The package really was installed into the fresh venv, not found elsewhere.
    installed = (clone / ".venv" / "lib").glob("python3*/site-packages/research_judge")
    assert any(installed)
    assert "everything the demo wrote is in research-judge-demo/" in out
    # The user's own file, graded offline, with its tool call kept in the results' input.
    rows = (clone / "my-results.jsonl").read_text(encoding="utf-8").splitlines()
    results = {r["session_id"]: r for r in map(json.loads, rows)}
    assert sorted(results) == ["q1", "q2"]
    # What the README says the baseline makes of them: q1 grounded in its source, q2 padded and
    # unsupported.
    assert results["q1"]["verdict"] == "pass" and results["q1"]["verdict_reasons"] == []
    assert results["q2"]["verdict"] == "fail"
    assert results["q2"]["verdict_reasons"] == ["fluff 1 < 2", "grounding 0.00 < 0.80"]
    assert all(r["error"] is None for r in results.values())
    assert "sessions 2: graded 2, errors 0" in out
    assert "<!DOCTYPE html>" in (clone / "my-report.html").read_text(encoding="utf-8")
    # validate on the demo's 20 labelled sessions prints its verdict on the judge.
    assert "20 sessions with both a judge verdict and a human label" in out
    assert "do not trust this judge to catch failures" in out
    assert "failing: 1 session passed in the baseline and fail now: s-0016" in done.stderr
