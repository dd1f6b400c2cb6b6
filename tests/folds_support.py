"""The verbs' outputs on generated results files, as the whole-file readers printed them.

``tests/data/folds/`` holds what ``validate``, ``compare``, ``report`` and ``stability`` printed
on these inputs when they still read every result in full (made by running this module as a
script against that code, with ``testing/scale_results.py`` copied in and the ``compare
--rejudged`` fix for audited results applied: ``PYTHONPATH=OLD/src:OLD/tests python
tests/folds_support.py tests/data/folds``). ``test_folds.py`` runs the same commands now and
requires every byte to match, dates aside. A later change of what a verb prints (not of how it
reads) regenerates them the same way from the code before the change.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import sys
from pathlib import Path

from research_judge.cli import main
from research_judge.testing.scale_results import write_results

SIZE = 400


def make_inputs(folder: Path) -> dict[str, Path]:
    """The generated files every command reads."""
    files = {
        "cur": write_results(folder / "cur.jsonl", SIZE, variant=1, skip_every=37),
        "base": write_results(folder / "base.jsonl", SIZE, variant=0, skip_every=41),
        "rejudged": write_results(folder / "rejudged.jsonl", SIZE, variant=2),
        "rep": write_results(folder / "rep.jsonl", 120, variant=0, repeats=3),
    }
    rng = random.Random(5)
    labels = folder / "labels.csv"
    rows = ["session_id,label,effectiveness,fluff,structure"]
    for i in rng.sample(range(SIZE + 20), 120):
        verdict = rng.choice(("pass", "fail"))
        scores = ",".join(str(rng.randint(1, 3)) for _ in range(3))
        rows.append(f"sess-{i:07d},{verdict},{scores}")
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8")
    files["labels"] = labels
    return files


def commands(files: dict[str, Path], out: Path) -> dict[str, list[str]]:
    cur, base, rej, rep, labels = (
        str(files[k]) for k in ("cur", "base", "rejudged", "rep", "labels")
    )
    return {
        "validate.txt": ["validate", cur, "--labels", labels, "--bootstrap", "200"],
        "validate.json": ["validate", cur, "--labels", labels, "--bootstrap", "200", "--json"],
        "validate-suggest.csv": [
            "validate", cur, "--labels", labels, "--bootstrap", "0", "--suggest", "15",
            "--suggest-out", "-",
        ],
        "compare.txt": ["compare", base, cur],
        "compare.json": ["compare", base, cur, "--json"],
        "compare-rejudged.json": ["compare", base, cur, "--rejudged", rej, "--json"],
        "report.md": ["report", cur, "--md", "-"],
        "report-full.md": [
            "report", cur, "--md", "-", "--labels", labels, "--baseline", base,
            "--rejudged", rej,
        ],
        "report.html": [
            "report", cur, "--html", "-", "--labels", labels, "--baseline", base, "--worst", "7",
        ],
        "report-repeats.md": ["report", rep, "--md", "-"],
        "stability.json": ["stability", rep, "--json", "--bootstrap", "100"],
        "stability.txt": ["stability", rep, "--bootstrap", "100"],
    }  # fmt: skip


_DATES = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


def run(argv: list[str], folder: Path) -> tuple[int, str]:
    """Exit status and standard output of one command, its dates and folder masked."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, _DATES.sub("<date>", buffer.getvalue()).replace(str(folder), "<dir>")


def expected(folder: Path, files: dict[str, Path]) -> None:
    for name, argv in commands(files, folder).items():
        code, text = run(argv, files["cur"].parent)
        (folder / name).write_text(f"exit {code}\n{text}", encoding="utf-8")


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    scratch = target / "inputs"
    scratch.mkdir(exist_ok=True)
    expected(target, make_inputs(scratch))
