"""ExpertQA validity benchmark: how well a judge agrees with domain experts it was not tuned on.

    python benchmarks/validity/run.py [--data DIR] [--out DIR] [--limit N] [grade settings...]

Reads ExpertQA's original files from ``--data`` (default: ``../shared/data/expertqa`` next to
this checkout; point it at your download's ``data/lfqa``), writes the answers that carry their
evidence text as ``OUT/sessions.jsonl`` with the experts' labels (``OUT/labels-strict.csv``,
``OUT/labels-lenient.csv``), grades them with ``research-judge grade`` and every grade setting
given here (``--provider``, ``--model``, ``--base-url``, ``--batch``, ``--replay``,
``--dry-run`` ... passed through as they are), then prints the table and writes
``OUT/summary.json``. A graded run also records what the judge said in ``OUT/recordings/``, so
``--replay OUT/recordings`` (with the same provider and model) reproduces it offline.

Without settings it grades with the baseline judge (``--provider baseline``): no model, no key,
no network, a couple of minutes. The same results give the same table, bit for bit.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from research_judge.cli import main as research_judge  # noqa: E402
from research_judge.results.model import read_results  # noqa: E402
from validity.expertqa import Item, read_dir  # noqa: E402
from validity.labels import RULES, answer_label  # noqa: E402
from validity.measure import measure  # noqa: E402
from validity.table import render  # noqa: E402

REPO = HERE.parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "expertqa"


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of ExpertQA's files")
    p.add_argument("--out", type=Path, default=REPO / "build" / "bench-validity")
    p.add_argument("--limit", type=int, default=None, help="grade only the first N answers")
    p.add_argument("--provider", default="baseline")
    p.add_argument("--model", default=None)
    p.add_argument("--dry-run", action="store_true", help="print the cost estimate and stop")
    return p.parse_known_args(argv)


MARK = ".bench-validity"
"""Written into every --out folder this script made: it only ever writes into its own."""


class NotOurFolder(OSError):
    """--out names a folder with files this benchmark did not write."""


def claim_folder(out: Path) -> None:
    if out.exists() and any(out.iterdir()) and not (out / MARK).is_file():
        raise NotOurFolder(
            f"{out} holds files this benchmark did not write; choose another --out "
            "(a new or empty folder, or one an earlier run made)"
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / MARK).write_text("made by benchmarks/validity/run.py\n", encoding="utf-8")


def write_inputs(items: list[Item], out: Path) -> Path:
    sessions = out / "sessions.jsonl"
    with sessions.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item.session, ensure_ascii=False) + "\n")
    for rule in RULES:
        with (out / f"labels-{rule}.csv").open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(["session_id", "label"])
            for item in items:
                writer.writerow([item.id, answer_label(item, rule)])
    return sessions


def grade_args(args: argparse.Namespace, passthrough: list[str], sessions: Path) -> list[str]:
    out = args.out
    command = [
        "grade",
        str(sessions),
        "--out",
        str(out / "results.jsonl"),
        "--provider",
        args.provider,
    ]
    if args.model:
        command += ["--model", args.model]
    if args.dry_run:
        return [*command, "--dry-run", *passthrough]
    if "--replay" not in passthrough and "--record" not in passthrough:
        command += ["--record", str(out / "recordings")]
    if "--cache-dir" not in passthrough and "--no-cache" not in passthrough:
        command += ["--no-cache"]  # measure the judge, not a cache from an earlier run
    return [*command, *passthrough]


def main(argv: list[str] | None = None) -> int:
    args, passthrough = parse(argv)
    try:
        reading = read_dir(args.data)
    except OSError as exc:
        print(f"bench-validity: {exc}", file=sys.stderr)
        return 2
    for error in reading.errors:
        print(f"bench-validity: {error}", file=sys.stderr)
    items = reading.items[: args.limit] if args.limit is not None else reading.items
    if not items:
        print("bench-validity: no ExpertQA answer with its evidence text was read", file=sys.stderr)
        return 2
    try:
        claim_folder(args.out)
    except OSError as exc:
        print(f"bench-validity: {exc}", file=sys.stderr)
        return 2
    sessions = write_inputs(items, args.out)
    results_path = args.out / "results.jsonl"
    # An earlier run's results are resumed by grade (same judge) or regraded (another judge).
    code = research_judge(grade_args(args, passthrough, sessions))
    if args.dry_run:
        return code
    if not results_path.exists():
        print(f"bench-validity: grade wrote no results (exit {code})", file=sys.stderr)
        return 2
    results = {r.session_id: r for r in read_results(results_path)}
    if not results:
        print(f"bench-validity: grade graded nothing (exit {code})", file=sys.stderr)
        return 2
    first = next(iter(results.values()))
    judge = (
        first.judge.model_dump()
        if first.judge
        else {"provider": args.provider, "model": args.model}
    )
    summary = {
        "benchmark": "expertqa-validity",
        "data": str(args.data),
        "judge": {"provider": judge.get("provider"), "model": judge.get("model")},
        "reading": {
            "answers": reading.answers,
            "skipped": dict(sorted(reading.skipped.items())),
            "errors": reading.errors,
        },
        "measures": measure(items, results),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    table = render(summary)
    (args.out / "table.txt").write_text(table, encoding="utf-8")
    sys.stdout.write("\n" + table)
    return 0 if not reading.errors else 2


if __name__ == "__main__":
    raise SystemExit(main())
