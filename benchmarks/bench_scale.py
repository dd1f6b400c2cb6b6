"""Results files of many lines: peak RSS and CPU per line of validate, compare, report and
grade's closing summary, each a fresh process.

    .venv/bin/python benchmarks/bench_scale.py --lines 100000     # part of `make bench`
    .venv/bin/python benchmarks/bench_scale.py --lines 1000000    # `make bench-scale`

The files are generated (``research_judge.testing.scale_results``: about 5.6 kB a line, as
grade writes them: verdicts with quotes, scores with reasoning, the citation audit, context),
a current and a baseline run of the same ids (a few only in one of them) and 200 labels, and
kept in the work folder for a next run of the same size. Each verb runs in its own process
(``verb_child.py``); its peak RSS is that process's VmHWM, imports included, and CPU per line is
its CPU time over the lines it read (compare reads both files).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from pipeline import Figure
from research_judge.testing.scale_results import write_results

HERE = Path(__file__).resolve().parent
RSS_TARGET_MB = 500
CPU_TARGET_MS = 0.1
POOL = 5000  # distinct sessions; the others repeat them under their own ids


def inputs(workdir: Path, lines: int) -> dict[str, Path]:
    folder = workdir / f"scale-{lines}"
    folder.mkdir(parents=True, exist_ok=True)
    files = {"cur": folder / "current.jsonl", "base": folder / "baseline.jsonl"}
    done = folder / ".complete"
    if not done.exists():
        started = time.perf_counter()
        write_results(files["cur"], lines, variant=1, skip_every=1000, pool=POOL)
        write_results(files["base"], lines, variant=0, skip_every=997, pool=POOL)
        rng = random.Random(3)
        rows = ["session_id,label"]
        rows += [
            f"sess-{i:07d},{rng.choice(('pass', 'fail'))}" for i in rng.sample(range(lines), 200)
        ]
        (folder / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        done.touch()
        print(f"generated {lines} lines x 2 in {time.perf_counter() - started:.0f} s", flush=True)
    files["labels"] = folder / "labels.csv"
    return files


def count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def measure(argv: list[str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, str(HERE / "verb_child.py"), *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=HERE,
    )
    try:
        figures: dict[str, float] = json.loads(done.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr[-800:]}") from None
    if figures["code"] not in (0, 1):  # compare and validate exit 1 on a flag or a gate
        raise RuntimeError(f"{argv[0]} exited {figures['code']}: {done.stderr[-800:]}")
    return figures


def run(workdir: Path, lines: int = 100_000) -> list[Figure]:
    files = inputs(workdir, lines)
    cur, base, labels = str(files["cur"]), str(files["base"]), str(files["labels"])
    n_cur, n_base = count_lines(files["cur"]), count_lines(files["base"])
    out = workdir / f"scale-{lines}"
    cases = {
        "grade closing summary": (["grade-summary", cur], n_cur),
        "validate --labels (200)": (
            ["validate", cur, "--labels", labels, "--bootstrap", "2000"], n_cur,
        ),
        "compare": (["compare", base, cur], n_cur + n_base),
        "report --md": (["report", cur, "--md", str(out / "r.md")], n_cur),
        "report --html": (["report", cur, "--html", str(out / "r.html")], n_cur),
        "report --md --baseline --labels": (
            ["report", cur, "--md", str(out / "r2.md"), "--baseline", base, "--labels", labels],
            n_cur + n_base,
        ),
    }  # fmt: skip
    figures: list[Figure] = []
    for name, (argv, read) in cases.items():
        f = measure(argv)
        rss = f["maxrss_kb"] / 1024
        per_line = f["cpu"] / read * 1000
        print(f"{name}: {rss:.0f} MB peak, {f['cpu']:.1f} s CPU ({per_line:.4f} ms/line), "
              f"{f['wall']:.1f} s wall", flush=True)  # fmt: skip
        figures.append(Figure("scale", f"{name}, {lines:,} lines: peak RSS", f"{rss:.0f} MB",
                              f"<= {RSS_TARGET_MB} MB", rss <= RSS_TARGET_MB))  # fmt: skip
        figures.append(Figure("scale", f"{name}, {lines:,} lines: CPU per line",
                              f"{per_line:.4f} ms", f"<= {CPU_TARGET_MS} ms",
                              per_line <= CPU_TARGET_MS, note=f"{f['cpu']:.1f} s CPU"))  # fmt: skip
    return figures


def main() -> int:
    from run import format_table

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--lines", type=int, default=100_000)
    p.add_argument("--workdir", type=Path, default=Path("/tmp/rj-bench-scale"))
    args = p.parse_args()
    print(format_table(run(args.workdir, args.lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
