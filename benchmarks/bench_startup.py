"""Start-up of the light verbs: CPU seconds each costs beyond Python itself.

``validate``, ``compare`` and ``report`` on the demo's 20 sessions (results replayed from the
bundled recordings), each run as a fresh process like a user or a CI step runs it. The figure is
the child's CPU time (user + system, from ``getrusage``) minus that of ``python -c pass`` measured
in the same run: what our imports and work add, whatever the machine's speed. The median of
``repeats`` runs is reported; ``--help`` is measured too, as the floor of the CLI.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from pipeline import Figure

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
TARGET = 1.0  # seconds of CPU beyond Python: "well under a second"
REPLAY = ("--provider", "scripted", "--model", "authored-lenient-judge", "--quiet",
          "--replay", str(FIXTURES / "recordings"))  # fmt: skip


def cpu_seconds(argv: list[str], cwd: Path) -> float:
    """CPU (user + system) of one child process running ``argv`` to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # compare exits 1 when it flags a drop: that is fine
        raise RuntimeError(f"{argv} failed ({done.returncode}): {done.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(workdir: Path, repeats: int = 5) -> list[Figure]:
    py = sys.executable
    results, baseline = workdir / "results.jsonl", workdir / "baseline.jsonl"
    for sessions, out in ((FIXTURES / "sessions.jsonl", results),
                          (FIXTURES / "baseline" / "sessions.jsonl", baseline)):  # fmt: skip
        out.unlink(missing_ok=True)
        cpu_seconds([py, "-m", "research_judge", "grade", str(sessions), "--out", str(out),
                     *REPLAY], workdir)  # fmt: skip
    labels = str(FIXTURES / "labels.csv")
    html, md = str(workdir / "r.html"), str(workdir / "r.md")
    verbs = {
        "--help": ["--help"],
        "validate": ["validate", str(results), "--labels", labels],
        "compare": ["compare", str(baseline), str(results)],
        "report": ["report", str(results), "--html", html, "--md", md],
        "report --labels --baseline": ["report", str(results), "--labels", labels,
                                       "--baseline", str(baseline), "--html", html],
    }  # fmt: skip
    python_itself = statistics.median(
        cpu_seconds([py, "-c", "pass"], workdir) for _ in range(repeats)
    )
    figures = [
        Figure("startup", "python -c pass (CPU s)", f"{python_itself:.3f} s", "baseline", None)
    ]
    for name, args in verbs.items():
        spent = statistics.median(
            cpu_seconds([py, "-m", "research_judge", *args], workdir) for _ in range(repeats)
        )
        beyond = spent - python_itself
        target = None if name == "--help" else beyond < TARGET
        figures.append(
            Figure(
                "startup",
                f"{name}{'' if name == '--help' else ' on 20 sessions'}: CPU beyond Python",
                f"{beyond:.3f} s",
                f"< {TARGET:g} s" if target is not None else "reported",
                target,
                note=f"{spent:.3f} s in all",
            )
        )
    return figures
