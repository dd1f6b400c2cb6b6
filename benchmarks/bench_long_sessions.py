"""Sessions of any size through ``research-judge grade``, against a judge with a real window.

    .venv/bin/python benchmarks/bench_long_sessions.py            # full: 5/50/300/1000 refs + 600k
    .venv/bin/python benchmarks/bench_long_sessions.py --quick    # small sizes, seconds

Each session is generated in code (``research_judge.testing.long_sessions``; never stored) with
a known truth, and graded by the real command line (``grade --model gpt-4o``: the shipped table's
128,000-token window and 16,384 output tokens) against the fake OpenAI-compatible server with
that window enforced: it refuses a request whose prompt plus ``max_completion_tokens`` is over
the window, as OpenAI does, and cuts a reply longer than its cap. The server counts a token per
3.5 characters, more than the ~4 of English prose, so the planner's margin is tested too. The
server answers truthfully from what each request shows, read back out of the body through the
prompt templates that rendered it (``research_judge.testing.shown``), never from their wording.

Per session it reports the counting calls, the requests the server refused or cut (both must be
0), whether every reference was judged and the ratios equal the truth, and the tokens sent
against the one-call ideal: prompt tokens sent (as the server counted them, counting and scoring
calls) / the trajectory's own tokens (same count). Exit 1 when any session misses.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from research_judge.cli import main as cli_main
from research_judge.results.model import read_results
from research_judge.testing.fake_openai import FakeOpenAIServer
from research_judge.testing.long_sessions import LongSession, TruthfulJudge, make_session

MODEL = "gpt-4o"  # 128,000-token window, 16,384 output tokens in the shipped table
WINDOW = 128_000
CHARS_PER_TOKEN = 3.5

# (name, references, characters per reference)
FULL = [
    ("refs-5", 5, 4000),
    ("refs-50", 50, 4000),
    ("refs-300", 300, 4000),
    ("refs-1000", 1000, 4000),  # about 4M characters: ~1M tokens
    ("one-600k", 1, 600_000),
]
QUICK = [("refs-5", 5, 1000), ("refs-60", 60, 1000), ("one-60k", 1, 60_000)]


@dataclass(frozen=True)
class Row:
    name: str
    references: int
    trajectory_tokens: int  # the server's count of the references' content
    counting_calls: int
    calls: int
    refused: int
    cut: int
    judged_all: bool
    ratios_match: bool
    prompt_tokens: int

    @property
    def ideal_ratio(self) -> float:
        return self.prompt_tokens / self.trajectory_tokens if self.trajectory_tokens else math.nan

    @property
    def ok(self) -> bool:
        return self.judged_all and self.ratios_match and not self.refused and not self.cut


def grade_one(
    built: LongSession, name: str, workdir: Path, *, window: int, model: str, extra: list[str]
) -> Row:
    sessions = workdir / f"{name}.jsonl"
    sessions.write_text(json.dumps(built.session) + "\n", encoding="utf-8")
    out = workdir / f"{name}.results.jsonl"
    server = FakeOpenAIServer(
        TruthfulJudge([built]),
        context_window=window,
        chars_per_token=CHARS_PER_TOKEN,
        keep_requests=0,
    )
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-dummy")
    with server:
        argv = ["grade", str(sessions), "--out", str(out), "--provider", "openai",
                "--model", model, "--base-url", server.base_url, "--no-cache", "--quiet",
                *extra]  # fmt: skip
        stdout, stderr = io.StringIO(), io.StringIO()
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = stdout, stderr
        try:
            code = cli_main(argv)
        finally:
            sys.stdout, sys.stderr = saved
    if code != 0:
        raise RuntimeError(f"{name}: grade exited {code}: {stderr.getvalue()[-2000:]}")
    [result] = read_results(out)
    ctx = result.context
    assert ctx is not None and result.ratios is not None
    chars = sum(len(r["content"]) for r in built.session["trajectory"])
    return Row(
        name=name,
        references=ctx.references,
        trajectory_tokens=math.ceil(chars / CHARS_PER_TOKEN),
        counting_calls=ctx.counting_calls,
        calls=result.usage.calls,
        refused=server.stats.refused_context,
        cut=server.stats.cut,
        judged_all=ctx.references_judged == ctx.references and ctx.not_judged == 0,
        ratios_match=result.ratios == built.truth,
        prompt_tokens=server.stats.prompt_tokens,
    )


def run(
    sizes: list[tuple[str, int, int]],
    workdir: Path,
    *,
    window: int = WINDOW,
    model: str = MODEL,
    extra: list[str] | None = None,
) -> list[Row]:
    rows = []
    for name, refs, chars in sizes:
        # The facts and the relevance mark sit late in each text: a split reference holds them
        # in a late part only, so "relevant if any part is" is exercised.
        built = make_session(name, refs, chars, fact_at=0.85)
        rows.append(grade_one(built, name, workdir, window=window, model=model, extra=extra or []))
    return rows


def table(rows: list[Row]) -> str:
    head = (
        f"{'session':<10} {'refs':>5} {'traj tok':>9} {'count calls':>11} {'calls':>5} "
        f"{'refused':>7} {'cut':>4} {'judged':>6} {'ratios':>6} {'sent tok':>9} {'sent/traj':>9}"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r.name:<10} {r.references:>5} {r.trajectory_tokens:>9} {r.counting_calls:>11} "
            f"{r.calls:>5} {r.refused:>7} {r.cut:>4} {'all' if r.judged_all else 'NO':>6} "
            f"{'=' if r.ratios_match else 'DIFF':>6} {r.prompt_tokens:>9} {r.ideal_ratio:>9.3f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sessions and a 16k window")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rj-long-") as tmp:
        if args.quick:
            rows = run(QUICK, Path(tmp), window=16_000, extra=["--context-window", "16000"])
        else:
            rows = run(FULL, Path(tmp))
    print(table(rows))
    missed = [r.name for r in rows if not r.ok]
    if missed:
        print(f"MISSED: {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
