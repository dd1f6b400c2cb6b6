"""``make demo``: the main job end to end, offline, on the bundled fixtures.

1. grade the bundled sessions with the recorded (hand-authored) judge replies, then a file with
   bad lines (each reported by file:line, the good sessions still graded);
2. validate the judge against the bundled human labels;
3. grade the previous agent version's answers to the same questions (fixtures/baseline/) and
   compare against them, per criterion;
4. write the HTML and Markdown reports;
5. convert agent logs (a multi-agent OpenTelemetry trace, an Anthropic log with server tools and
   citations, an OpenAI log whose agent offloaded a tool result to storage), grade them with the
   offloaded text read back (``--store``) and show the citation audit;
6. the deterministic task harness on two scripted agent versions.
Each step runs the real ``research-judge`` command and shows it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from research_judge.cli import main as research_judge

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the scripted agents live in fixtures/, importable from the root
OUT = Path("demo-out")
FIX = Path("fixtures")
# Every grade step uses the same judge: the hand-authored replies, replayed from recordings.
RECORDED_JUDGE = (
    *("--provider", "scripted", "--model", "authored-lenient-judge"),
    *("--replay", str(FIX / "recordings"), "--quiet"),
)


def step(title: str, *args: str, ok: tuple[int, ...] = (0,)) -> int:
    print(f"\n=== {title}\n$ research-judge {shlex.join(args)}", flush=True)
    code = research_judge(list(args))
    sys.stdout.flush()
    if code not in ok:
        print(f"demo: step failed with exit code {code}", file=sys.stderr)
        sys.exit(code)
    return code


def grade(title: str, sessions: Path, out: Path, *, ok: tuple[int, ...] = (0,)) -> None:
    step(title, "grade", str(sessions), "--out", str(out), *RECORDED_JUDGE, ok=ok)


def main() -> int:
    os.chdir(ROOT)
    if OUT.exists():
        shutil.rmtree(OUT)  # a fresh run each time: no resume from an earlier demo
    OUT.mkdir()
    results, baseline = OUT / "results.jsonl", OUT / "baseline-results.jsonl"
    labels = str(FIX / "labels.csv")
    grade(
        "grade: two judge calls per session, answered from recordings (no network)",
        FIX / "sessions.jsonl",
        results,
    )
    grade(
        "grade a file with bad lines: each is named by file:line, the good sessions are graded",
        FIX / "bad_sessions.jsonl",
        OUT / "bad-results.jsonl",
        ok=(2,),
    )
    step(
        "validate: how far can this judge be trusted? (against the team's labels, gated: "
        "exit 1 when a bar is missed)",
        *("validate", str(results), "--labels", labels),
        *("--min-kappa", "0.4", "--min-fail-agreement", "0.7"),
        ok=(0, 1),
    )
    # A team labels in rounds: with the first 12 labels, which of the other 8 sessions next?
    first_round = OUT / "labels-first-12.csv"
    first_round.write_text(
        "".join((FIX / "labels.csv").read_text(encoding="utf-8").splitlines(True)[:13]),
        encoding="utf-8",
    )
    step(
        "validate --suggest: after a first round of 12 labels, which sessions to label next",
        *("validate", str(results), "--labels", str(first_round), "--bootstrap", "2000"),
        *("--suggest", "4", "--suggest-out", str(OUT / "label-next.csv")),
    )
    print((OUT / "label-next.csv").read_text(encoding="utf-8"))
    grade(
        "grade the previous agent version (v11) on the same questions, same recorded judge",
        FIX / "baseline" / "sessions.jsonl",
        baseline,
    )
    step(
        "compare: the previous agent version (v11) against this one (v12), per criterion",
        "compare",
        str(baseline),
        str(results),
        ok=(0, 1),
    )
    step(
        "compare --rejudged: judge shift or agent change? The judge did not change here, so the "
        "baseline graded by the current judge is the baseline itself: every move is the agent's",
        *("compare", str(baseline), str(results), "--rejudged", str(baseline)),
        ok=(0, 1),
    )
    step(
        "report: one self-contained HTML file (and Markdown for CI comments)",
        *("report", str(results), "--labels", labels),
        *("--html", str(OUT / "report.html"), "--md", str(OUT / "report.md")),
        *("--baseline", str(baseline)),
    )
    _agent_logs()
    _harness()
    print(f"\nHTML report: {OUT / 'report.html'}")
    return 0


def _agent_logs() -> None:
    from fixtures.agent_logs import LOGS, STUB_PATTERN
    from research_judge.results.model import read_results

    logs = FIX / "agent_logs"
    parts = []
    for fmt, name in LOGS:
        part = OUT / f"agent-{fmt}.jsonl"
        step(
            f"convert: {fmt} log -> sessions (references keep their agent, tool and arguments)",
            *("convert", fmt, str(logs / name), "--out", str(part)),
            *("--stub-pattern", STUB_PATTERN),
        )
        parts.append(part)
    sessions, results = OUT / "agent-sessions.jsonl", OUT / "agent-results.jsonl"
    sessions.write_text("".join(p.read_text(encoding="utf-8") for p in parts), encoding="utf-8")
    print(f"\n(joined {', '.join(p.name for p in parts)} into {sessions.name})")
    step(
        "grade the converted logs; the offloaded tool result is read from the store",
        *("grade", str(sessions), "--out", str(results), *RECORDED_JUDGE),
        *("--store", str(logs / "store")),
    )
    print("\n=== the citation audit: each claim's citations against the judge's verdict")
    for r in read_results(results):
        audit = r.citations
        if audit is None:
            continue
        statuses = ", ".join(f"{c.id} {c.status}" for c in audit.claims)
        print(
            f"{r.session_id}: precision {_num(audit.precision)}, recall {_num(audit.recall)} "
            f"({statuses})"
        )


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _harness() -> None:
    from fixtures.tasks.agents import v1
    from research_judge.harness import format_report, read_tasks, run_tasks

    tasks = FIX / "tasks" / "tasks.jsonl"
    report = run_tasks(v1, read_tasks(tasks).tasks)
    baseline = OUT / "tasks-v1.json"
    baseline.write_text(report.to_json(), encoding="utf-8")
    print(f"\n=== task harness: agent v1 (saved as {baseline.name})\n{format_report(report)}")
    step(
        "task harness: agent v2 against v1 (same pass rate, one regression, one fix)",
        "tasks",
        "run",
        str(tasks),
        "--agent",
        "fixtures.tasks.agents:v2",
        "--baseline",
        str(baseline),
        ok=(1,),
    )


if __name__ == "__main__":
    sys.exit(main())
