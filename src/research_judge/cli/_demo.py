"""The demo: the main job end to end, offline, on the bundled fixtures (``research-judge demo``).

1. grade the bundled sessions with the recorded (hand-authored) judge replies, then a file with
   bad lines (each reported by file:line, the good sessions still graded);
2. validate the judge against the bundled human labels;
   then which sessions to label next (``validate --suggest``), labelling a few with
   ``label --script``, and the human ceiling from two annotators' labels;
3. grade the previous agent version's answers to the same questions and compare, per criterion
   (and with ``--rejudged``);
4. write the HTML and Markdown reports;
5. convert agent logs (OpenTelemetry, Anthropic, OpenAI), grade them with an offloaded tool
   result read back from the store, and show the citation audit;
6. the deterministic task harness on two scripted agent versions.

Each step runs the real ``research-judge`` command and prints it. The fixtures ship inside the
wheel (``research_judge/_fixtures``); the demo copies them into its folder first, so every
command it prints can be run again from there, by hand, on files the user can read.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from ..errors import ConfigError

DEFAULT_OUT = Path("research-judge-demo")
# The demo's manifest: every file it wrote in its folder, relative to it. A later demo deletes
# only those, so a file the user keeps beside them (their own results, notes) is never touched.
MARKER = ".research-judge-demo"
_MANIFEST_VERSION = 1
# Every grade step uses the same judge: the hand-authored replies, replayed from recordings.
JUDGE = ("--provider", "scripted", "--model", "authored-lenient-judge")


def fixtures_dir() -> Path:
    """The packaged fixtures (in a wheel) or, in a source checkout, the top-level folder."""
    packaged = Path(str(resources.files("research_judge"))) / "_fixtures"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "fixtures"


class DemoFailed(Exception):
    """A step ended with an exit code it should not have."""

    def __init__(self, code: int) -> None:
        super().__init__(f"demo step failed with exit code {code}")
        self.code = code


def _files(folder: Path) -> set[str]:
    """Every file under ``folder`` (links not followed), as POSIX paths relative to it."""
    return {
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()
    }


def _read_manifest(out: Path) -> list[str]:
    """The files an earlier demo wrote in ``out``; ConfigError when ``out`` is not the demo's."""
    marker = out / MARKER
    if not marker.is_file():
        raise ConfigError(
            f"{out} is not empty and was not made by the demo; choose another --out "
            "(the demo never deletes files it did not write)"
        )
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, OSError):
        data = None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ConfigError(
            f"{marker} does not list the files an earlier demo wrote (an older demo's marker, "
            "or edited); delete the folder yourself or choose another --out"
        )
    return files


def _write_manifest(out: Path, files: set[str]) -> None:
    data = {
        "made_by": "research-judge demo",
        "version": _MANIFEST_VERSION,
        "note": "the files the demo wrote here; a later demo deletes these and nothing else",
        "files": sorted(files - {MARKER}),
    }
    (out / MARKER).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _remove_owned(out: Path, files: list[str]) -> None:
    """Delete the listed files (only inside ``out``), then the folders they leave empty."""
    root = out.resolve()
    parents: set[Path] = set()
    for name in files:
        path = out / name
        # A listed name that escapes the folder (an edited manifest) is never followed.
        if ".." in Path(name).parts or Path(name).is_absolute():
            continue
        if not path.resolve().is_relative_to(root) and not path.is_symlink():
            continue
        if path.is_file() or path.is_symlink():
            path.unlink()
            parents.update(p for p in path.parents if p != out and out in p.parents)
    for folder in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):  # not empty: something of the user's is inside
            folder.rmdir()


def prepare(out: Path) -> tuple[Path, set[str]]:
    """Make ``out`` ready for a demo run holding a fresh copy of the fixtures; return the copy
    and the files already there that the demo does not own (the user's; never touched).

    A folder that exists must be empty or made by an earlier demo (it holds ``MARKER``); only
    the files that demo listed are deleted.
    """
    copy = out / "fixtures"
    if out.exists():
        if not out.is_dir():
            raise ConfigError(f"{out} exists and is not a folder; choose another --out")
        if any(out.iterdir()):
            owned = _read_manifest(out)
            # Refuse before deleting anything, so a refused run leaves the last demo whole.
            clash = sorted(
                t for t in _files(out) - set(owned) - {MARKER} if t.split("/", 1)[0] == "fixtures"
            )
            if clash:
                raise ConfigError(
                    f"{out / clash[0]} is not the demo's, and the demo copies its fixtures to "
                    f"{copy}; move it or choose another --out"
                )
            _remove_owned(out, owned)
    out.mkdir(parents=True, exist_ok=True)
    theirs = _files(out) - {MARKER}
    _write_manifest(out, set())
    shutil.copytree(fixtures_dir(), copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _write_manifest(out, _files(out) - theirs)
    return copy, theirs


def run_demo(out: Path = DEFAULT_OUT, stream: TextIO | None = None) -> int:
    """Run every step, writing into ``out``; 0 when each step ended as expected."""
    stream = stream or sys.stdout
    fix, theirs = prepare(out)
    print(
        f"research-judge demo: writing to {out}{os.sep} (the bundled fixtures are copied to "
        f"{fix}{os.sep}); each command below can be run again by hand from this directory",
        file=stream,
    )
    try:
        _steps(out, fix, stream)
    except DemoFailed as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return exc.code
    finally:
        # Whatever appeared in the folder during the run is the demo's (even when a step
        # failed), so the next demo can clear it without touching anything else.
        _write_manifest(out, _files(out) - theirs)
    print(f"\nHTML report: {out / 'report.html'}", file=stream)
    print(f"everything the demo wrote is in {out}{os.sep}", file=stream)
    return 0


def _step(stream: TextIO, title: str, *args: str, ok: Sequence[int] = (0,)) -> int:
    from . import main as research_judge

    print(f"\n=== {title}\n$ research-judge {shlex.join(args)}", file=stream, flush=True)
    code = research_judge(list(args))
    sys.stdout.flush()
    if code not in ok:
        raise DemoFailed(code)
    if code:
        print(f"(exit {code}, as expected here)", file=stream, flush=True)
    return code


def _grade(stream: TextIO, title: str, sessions: Path, out: Path, fix: Path, ok: int = 0) -> None:
    replay = ("--replay", str(fix / "recordings"), "--quiet")
    _step(stream, title, "grade", str(sessions), "--out", str(out), *JUDGE, *replay, ok=(ok,))


def _steps(out: Path, fix: Path, stream: TextIO) -> None:
    results, baseline = out / "results.jsonl", out / "baseline-results.jsonl"
    labels = str(fix / "labels.csv")
    _grade(
        stream,
        "grade: two judge calls per session, answered from recordings (no network)",
        fix / "sessions.jsonl",
        results,
        fix,
    )
    _grade(
        stream,
        "grade a file with bad lines: each is named by file:line, the good sessions are graded",
        fix / "bad_sessions.jsonl",
        out / "bad-results.jsonl",
        fix,
        ok=2,
    )
    _step(
        stream,
        "validate: how far can this judge be trusted? (against the team's labels, gated: "
        "exit 1 when a bar is missed)",
        *("validate", str(results), "--labels", labels),
        *("--min-kappa", "0.4", "--min-fail-agreement", "0.7"),
        ok=(0, 1),
    )
    # A team labels in rounds: with the first 12 labels, which of the other 8 sessions next?
    first_round = out / "labels-first-12.csv"
    first_round.write_text(
        "".join((fix / "labels.csv").read_text(encoding="utf-8").splitlines(True)[:13]),
        encoding="utf-8",
    )
    _step(
        stream,
        "validate --suggest: after a first round of 12 labels, which sessions to label next",
        *("validate", str(results), "--labels", str(first_round), "--bootstrap", "2000"),
        *("--suggest", "4", "--suggest-out", str(out / "label-next.csv")),
    )
    print((out / "label-next.csv").read_text(encoding="utf-8"), file=stream)
    _labelling(out, fix, results, stream)
    _grade(
        stream,
        "grade the previous agent version (v11) on the same questions, same recorded judge",
        fix / "baseline" / "sessions.jsonl",
        baseline,
        fix,
    )
    _step(
        stream,
        "compare: the previous agent version (v11) against this one (v12), per criterion. "
        "The CI gate fails (exit 1) on a real regression: a session that passed now fails. "
        "A drop the paired test calls noise, with no session flipping, is only a warning",
        *("compare", str(baseline), str(results)),
        ok=(1,),
    )
    _step(
        stream,
        "compare --rejudged: judge shift or agent change? The judge did not change here, so the "
        "baseline graded by the current judge is the baseline itself: every move is the agent's",
        *("compare", str(baseline), str(results), "--rejudged", str(baseline)),
        ok=(0, 1),
    )
    _step(
        stream,
        "report: one self-contained HTML file (and Markdown for CI comments)",
        *("report", str(results), "--labels", labels),
        *("--html", str(out / "report.html"), "--md", str(out / "report.md")),
        *("--baseline", str(baseline)),
    )
    _agent_logs(out, fix, stream)
    _harness(out, fix, stream)


def _labelling(out: Path, fix: Path, results: Path, stream: TextIO) -> None:
    # Labelling happens on a local page (`research-judge label`, keys p/f/s/u); the demo cannot
    # press keys, so it plays the same keys from a file with --script.
    mine = out / "labels-you.csv"
    _step(
        stream,
        "label: label sessions blind, one at a time (here the page's keys are played from a "
        "file with --script; without it the command serves the page on 127.0.0.1)",
        *("label", str(fix / "sessions.jsonl"), "--labels", str(mine), "--annotator", "you"),
        *("--order", "input", "--sample", "4", "--script", str(fix / "label-script.txt")),
    )
    print(mine.read_text(encoding="utf-8"), file=stream)
    _step(
        stream,
        "validate with two annotators: the judge against their majority label, beside how far "
        "they agree with each other (the human ceiling)",
        *("validate", str(results), "--labels", str(fix / "labels.csv")),
        *("--labels", str(fix / "labels-reviewer-2.csv"), "--bootstrap", "2000"),
    )


def _fixture_module(out: Path, name: str) -> Any:
    """A module of the copied fixtures (``fixtures.<name>``), imported from ``out``."""
    if str(out.resolve()) not in sys.path:
        sys.path.insert(0, str(out.resolve()))
    return importlib.import_module(f"fixtures.{name}")


def _agent_logs(out: Path, fix: Path, stream: TextIO) -> None:
    from ..results.model import read_results

    logs_module = _fixture_module(out, "agent_logs")
    logs = fix / "agent_logs"
    replay = ("--replay", str(fix / "recordings"), "--quiet")
    parts = []
    for fmt, name in logs_module.LOGS:
        part = out / f"agent-{Path(name).stem}.jsonl"  # two logs may share a format
        _step(
            stream,
            f"convert: {fmt} log -> sessions (references keep their agent, tool and arguments)",
            *("convert", fmt, str(logs / name), "--out", str(part)),
            *("--stub-pattern", logs_module.STUB_PATTERN),
        )
        parts.append(part)
    sessions, results = out / "agent-sessions.jsonl", out / "agent-results.jsonl"
    sessions.write_text("".join(p.read_text(encoding="utf-8") for p in parts), encoding="utf-8")
    print(f"\n(joined {', '.join(p.name for p in parts)} into {sessions.name})", file=stream)
    _step(
        stream,
        "grade the converted logs; the offloaded tool result is read from the store",
        *("grade", str(sessions), "--out", str(results), *JUDGE, *replay),
        *("--store", str(logs / "store")),
    )
    print(
        "\n=== the citation audit: each claim's citations against the judge's verdict", file=stream
    )
    for r in read_results(results):
        audit = r.citations
        if audit is None:
            continue
        statuses = ", ".join(f"{c.id} {c.status}" for c in audit.claims)
        print(
            f"{r.session_id}: precision {_num(audit.precision)}, recall {_num(audit.recall)} "
            f"({statuses})",
            file=stream,
        )


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _harness(out: Path, fix: Path, stream: TextIO) -> None:
    from ..harness import format_report, load_agent, read_tasks, run_tasks

    tasks = fix / "tasks" / "tasks.jsonl"
    # The agents live in the copied fixtures: importable as fixtures.tasks.agents from ``out``.
    v1 = load_agent("fixtures.tasks.agents:v1", out)
    report = run_tasks(v1, read_tasks(tasks).tasks)
    saved = out / "tasks-v1.json"
    saved.write_text(report.to_json(), encoding="utf-8")
    print(
        f"\n=== task harness: agent v1 (saved as {saved.name})\n{format_report(report)}",
        file=stream,
    )
    _step(
        stream,
        "task harness: agent v2 against v1 (same pass rate, one regression, one fix)",
        *("tasks", "run", str(tasks), "--agent", "fixtures.tasks.agents:v2"),
        *("--app-dir", str(out), "--baseline", str(saved)),
        ok=(1,),
    )
