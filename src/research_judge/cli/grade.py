"""``research-judge grade``: sessions in, one result line per session out (resumable)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..clients._http import DEFAULT_TIMEOUT
from ..clients.settings import ClientSettings, default_cache_dir
from ..engine.select import Selection
from ..errors import ConfigError
from ..judge.policy import VerdictPolicy
from ..judge.settings import DEFAULT_REPEATS, MIN_SCORING_TOKENS, JudgeSettings
from ..safety.settings import DEFAULT_MAX_REF_BYTES
from ._ci import add_ci_flags, check_stdout, main_output
from ._help import DefaultsFormatter
from ._stdin import STDIN, spooled_stdin
from .config import add_config_flag

# Flag defaults come from the library's own defaults: one setting, one default.
_JUDGE, _POLICY = JudgeSettings(), VerdictPolicy()
_CLIENT = ClientSettings  # its fields' defaults (an instance would need a model)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "grade",
        help="grade logged research sessions with the two-call judge",
        description=(
            "Grade each session of SESSIONS (JSONL) with two judge calls and write one result "
            "line per session to --out, in input order. Re-running with the same --out resumes. "
            "Exit 0 when every session was graded, 2 on bad input (a line, a flag, an unreadable "
            "offloaded result), 6 when the input was good but the judge failed some sessions, "
            "3 when the provider was unreachable or refused us, 4 when --max-cost stopped the run, "
            "5 when the output could not be written."
        ),
        formatter_class=DefaultsFormatter,
    )
    p.add_argument(
        "sessions", metavar="SESSIONS.jsonl", help="logged sessions, one per line (- for stdin)"
    )
    p.add_argument("--out", required=True, metavar="RESULTS.jsonl", help="results file (resumed)")
    judge = p.add_argument_group("judge")
    judge.add_argument(
        "--provider",
        default=_CLIENT.provider,
        help="openai, anthropic, or baseline (no model, no key, no network: lexical overlap "
        "and surface rules, a floor and a smoke test; see docs/baseline.md)",
    )
    judge.add_argument(
        "--model",
        help="judge model name, e.g. gpt-4.1-mini (required, except with --provider baseline)",
    )
    judge.add_argument(
        "--base-url",
        help="API base URL for compatible servers (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL)",
    )
    judge.add_argument(
        "--mode",
        help="structured output: openai json_schema|json_object|tool (default json_schema), "
        "anthropic tool|native (default tool)",
    )
    judge.add_argument(
        "--timeout",
        type=float,
        help=f"seconds one HTTP request may take (default {DEFAULT_TIMEOUT:g})",
    )
    judge.add_argument(
        "--max-attempts",
        type=int,
        default=_JUDGE.max_attempts,
        help="attempts per call when the reply is invalid",
    )
    judge.add_argument(
        "--temperature",
        type=_temperature,
        default=_JUDGE.temperature,
        help="sampling temperature; 'none' sends none (reasoning models accept only their own)",
    )
    judge.add_argument(
        "--token-field",
        choices=("max_tokens", "max_completion_tokens"),
        help="the output-cap field sent to OpenAI-compatible servers (default: "
        "max_completion_tokens for OpenAI's own endpoints, max_tokens for every other server)",
    )
    judge.add_argument(
        "--counting-max-tokens",
        type=int,
        default=_JUDGE.counting_max_tokens,
        metavar="N",
        help="output token cap of each counting call, never exceeded: references whose verdicts "
        "may need more are split across calls; in a smaller window a call gets the room left",
    )
    judge.add_argument(
        "--scoring-max-tokens",
        type=int,
        default=_JUDGE.scoring_max_tokens,
        metavar="N",
        help="output token cap of the scoring call, never exceeded; in a smaller window it gets "
        f"the room left, down to {MIN_SCORING_TOKENS}",
    )
    judge.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="the judge model's context window (default: the shipped table, or context_window "
        "in --prices FILE); sessions larger than one call are split across calls",
    )
    judge.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        metavar="K",
        help="K judge samples of every call (set --temperature above 0); the session gets the "
        "majority verdict, mean ratios and median scores, and every sample is kept in its "
        "result for `research-judge stability` (default %(default)s)",
    )
    judge.add_argument(
        "--jury",
        metavar="SPEC[,SPEC...]",
        help="add jurors to the --provider/--model judge (provider:model or model, comma "
        "separated): each grades every session once and the session gets their majority, as "
        "with --repeats; `research-judge stability` then measures how far they agree",
    )
    judge.add_argument("--prompts", metavar="DIR", help="folder of prompt templates to use")
    judge.add_argument(
        "--strict-evidence",
        action="store_true",
        help="count a 'yes' whose quote cannot be found in the text as 'no' in the ratios",
    )
    pol = p.add_argument_group("verdict policy (flags override --config)")
    add_config_flag(pol, " plus [policy] for the verdict policy")
    for name, kind in (
        ("effectiveness", int),
        ("fluff", int),
        ("structure", int),
        ("grounding", float),
        ("relevance", float),
        ("utilization", float),
    ):
        current = getattr(_POLICY, f"min_{name}")
        shown = "no minimum" if current is None else current
        pol.add_argument(
            f"--min-{name}",
            type=kind,
            metavar="N",
            help=f"minimum {name} for a pass (default policy: {shown})",
        )
    run = p.add_argument_group("run")
    run.add_argument(
        "--concurrency",
        type=int,
        default=_CLIENT.concurrency,
        help="at most N judge requests in flight",
    )
    run.add_argument(
        "--retries",
        type=int,
        default=_CLIENT.retries,
        help="transport retries per request (429, 5xx, timeouts)",
    )
    run.add_argument(
        "--down-after",
        type=float,
        default=_CLIENT.down_after,
        metavar="SECONDS",
        help="stop the run when no request has succeeded for this long (exit 3, resumable)",
    )
    run.add_argument("--no-cache", action="store_true", help="do not use the response cache")
    run.add_argument(
        "--cache-dir",
        type=Path,
        help=f"response cache folder (default: {default_cache_dir()}, or under $XDG_CACHE_HOME)",
    )
    run.add_argument(
        "--store",
        metavar="ROOT",
        help="where offloaded tool results live (references with content_ref): a folder or "
        "s3://bucket/prefix on any S3-compatible store, endpoint and credentials from the AWS "
        "environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...); needs research-judge[s3] for s3",
    )
    run.add_argument(
        "--max-ref-bytes",
        type=_positive_bytes,
        default=DEFAULT_MAX_REF_BYTES,
        metavar="BYTES",
        help="largest object read from --store; a bigger one is that session's error "
        f"(default {DEFAULT_MAX_REF_BYTES:,})",
    )
    run.add_argument("--record", metavar="DIR", help="save every judge exchange as JSON in DIR")
    run.add_argument("--replay", metavar="DIR", help="answer only from exchanges saved in DIR")
    run.add_argument(
        "--retry-errors", action="store_true", help="regrade sessions that errored before"
    )
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    batch = p.add_argument_group("provider batch APIs (docs/batch.md)")
    batch.add_argument(
        "--batch",
        action="store_true",
        help="send every call through the provider's batch API (half price, answers within "
        "24 h); batches are recorded in RESULTS.jsonl.batches/ and a rerun picks them up",
    )
    batch.add_argument(
        "--batch-poll",
        type=_positive_seconds,
        default=_CLIENT.batch_poll,
        metavar="SECONDS",
        help="seconds between two polls of a running batch",
    )
    cost = p.add_argument_group("cost and selection")
    cost.add_argument(
        "--dry-run", action="store_true", help="estimate tokens and cost; send nothing"
    )
    cost.add_argument(
        "--max-cost", type=float, metavar="USD", help="stop sending new work before this spend"
    )
    cost.add_argument("--prices", metavar="FILE", help="price table adding to the shipped one")
    cost.add_argument("--sample", type=int, metavar="N", help="grade a seeded sample of N")
    cost.add_argument("--seed", type=int, default=Selection().seed, help="seed of --sample")
    cost.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="only sessions whose metadata KEY equals VALUE (repeatable)",
    )
    cost.add_argument(
        "--shard",
        metavar="I/N",
        help="only the sessions whose id hashes to shard I of N (stable across reruns and "
        "machines; each shard to its own --out, joined by `research-judge merge`)",
    )
    p.add_argument("--json", action="store_true", help="print the closing summary as JSON")
    p.add_argument(
        "--parquet",
        metavar="FILE",
        help="also write the run's results as Parquet (one row per session; the verdicts in "
        "FILE's .verdicts.parquet sibling), as `research-judge export` does; needs pyarrow",
    )
    add_ci_flags(p)
    p.set_defaults(run=run_grade)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {value}")
    return value


def _positive_bytes(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of bytes, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 bytes, got {value}")
    return value


def _temperature(text: str) -> float | None:
    if text.lower() in ("none", "default"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'none', got {text!r}") from None
    return value  # its range is JudgeSettings' to check, for the library too


def run_grade(args: argparse.Namespace) -> int:

    from ._grading import execute
    from ._stopping import run_stoppable, saved_lines

    def stopped(how: str) -> None:
        print(
            f"research-judge grade: {how}: {saved_lines(args.out)} session(s) are saved in "
            f"{args.out}; run the same command again to resume",
            file=sys.stderr,
        )

    check_stdout(args)
    if args.out == STDIN:
        # The results file is resumed, locked and read back: it has to be a file. Say so rather
        # than write a file named "-".
        raise ConfigError(
            "--out -: grade writes a results file it can resume from, not a stream; give it a "
            "path (then `research-judge validate RESULTS.jsonl ...`, or `cat` it into any verb "
            "that reads -)"
        )
    if args.sessions != STDIN:
        return run_stoppable(lambda: execute(args, sys.stderr, main_output(args)), stopped)
    with spooled_stdin() as path:
        args.sessions = str(path)
        return run_stoppable(lambda: execute(args, sys.stderr, main_output(args)), stopped)
