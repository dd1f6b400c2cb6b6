"""The work behind ``grade``: build the client chain and the judge, run the engine, summarise.

The client chain is ``clients.chain.build_client``'s, the same the Python API and the benchmarks
build; this module only turns flags into its ``ClientSettings``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import fields
from typing import TextIO

from .._text import inline, inline_lines
from ..clients.base import JudgeClient, JudgeRequest, JudgeResponse
from ..clients.chain import ClientSettings, resilience_of
from ..cost.prices import PriceTable
from ..cost.windows import ModelLimits, WindowTable
from ..engine import (
    Budget,
    Estimator,
    RunOptions,
    RunStats,
    Selection,
    grade_file,
    parse_where,
)
from ..engine.progress import Progress
from ..engine.select import selected_sessions
from ..errors import (
    ContentRefError,
    ErrorKind,
    ExitCode,
    InputFileError,
    ProviderDownError,
)
from ..grading import check_jury, juror_specs, open_client, run_limits, run_prices, samples_for
from ..judge.build import build_judge
from ..judge.grader import Judge, JudgeSettings
from ..judge.policy import VerdictPolicy, load_policy
from ..results.model import Result, iter_results
from ..results.rows import ResultRow, iter_rows
from ..results.summary import Summary, format_summary, summarize
from ..safety import check_distinct, check_finite, check_output_target
from ..sessions.shards import parse_shard
from ..sessions.store import open_store, resolve_session
from ._batch import (
    BatchProgress,
    batch_counters,
    batch_summary,
    resume_hint,
)
from ._grade_ci import emit_grade_ci


def client_settings(args: argparse.Namespace) -> ClientSettings:
    batch = bool(getattr(args, "batch", False))
    return ClientSettings(
        provider=args.provider,
        model=args.model or "",
        base_url=args.base_url,
        mode=args.mode,
        timeout=args.timeout,
        concurrency=args.concurrency,
        retries=args.retries,
        down_after=args.down_after,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        record=args.record,
        replay=args.replay,
        token_field=args.token_field,
        batch=batch,
        batch_poll=getattr(args, "batch_poll", ClientSettings.batch_poll),
        batch_dir=f"{args.out}.batches" if batch else None,
    )


def check_args(args: argparse.Namespace, settings: ClientSettings) -> None:
    """The paths and settings the chain does not own, checked before anything is read, written
    or sent: no output may be an input or another output, nor a device, FIFO or folder."""
    check_finite("--max-cost", args.max_cost)
    cache = None if not settings.cache or args.replay else settings.resolved_cache_dir
    check_distinct(
        [
            ("the sessions file", args.sessions),
            ("--replay", args.replay),
            ("--cache-dir", cache),
            ("--prompts", args.prompts),
            ("--config", args.config),
            ("--prices", args.prices),
        ],
        [
            ("--out", args.out),
            ("--record", args.record),
            ("--junit", args.junit),
            ("--parquet", args.parquet),
        ],
    )
    check_output_target("--out", args.out)
    if args.parquet is not None:
        from ..results.parquet import _pyarrow, check_parquet_targets

        _pyarrow()  # missing pyarrow is said before any call is paid for
        check_parquet_targets(args.parquet, force=args.force)
    if args.record and str(args.record).endswith(".jsonl"):
        check_output_target("--record", args.record)


def answers_from(args: argparse.Namespace, settings: ClientSettings) -> str:
    """Where answers not sent to the provider came from: a warm shared cache can hide a broken
    setting (every answer was cached before the mistake), so the summary names it."""
    if args.replay:
        return f"replayed from {args.replay}"
    if settings.cache:
        return f"from the cache in {settings.resolved_cache_dir}"
    return "from cache: off (--no-cache)"


def judge_limits(args: argparse.Namespace, settings: ClientSettings, err: TextIO) -> ModelLimits:
    """The judge's window and output limit (``grading.run_limits``); each notice of a guessed
    window is a line on stderr."""
    jury = juror_specs(getattr(args, "jury", None))
    limits, notices = run_limits(WindowTable.load(args.prices), settings, jury, args.context_window)
    for notice in notices:
        print(f"research-judge grade: {notice}", file=err)
    return limits


def judge_for(
    args: argparse.Namespace, client: JudgeClient, prices: PriceTable, limits: ModelLimits
) -> Judge:
    # Every policy field has a --min-* flag of the same name; unset flags are None.
    flags = {f.name: getattr(args, f.name) for f in fields(VerdictPolicy)}
    policy = load_policy(args.config).with_overrides(**flags)
    settings = JudgeSettings(
        max_attempts=args.max_attempts,
        strict_evidence=args.strict_evidence,
        temperature=args.temperature,
        counting_max_tokens=args.counting_max_tokens,
        scoring_max_tokens=args.scoring_max_tokens,
    )
    repeats = samples_for(client, args.repeats)
    return build_judge(
        client,
        prompts=args.prompts,
        policy=policy,
        settings=settings,
        prices=prices,
        repeats=repeats,
        limits=limits,
    )


async def execute(args: argparse.Namespace, err: TextIO, out: TextIO) -> int:
    settings = client_settings(args)  # checks the chain's flags, even for a dry run
    args.model = settings.model  # the baseline judge names its own
    check_args(args, settings)
    selection = Selection(
        where=parse_where(args.where),
        sample=args.sample,
        seed=args.seed,
        shard=None if args.shard is None else parse_shard(args.shard),
    )
    batch = bool(getattr(args, "batch", False))
    prices = run_prices(PriceTable.load(args.prices), settings)  # --dry-run, --max-cost too
    jury = juror_specs(getattr(args, "jury", None))
    check_jury(jury, args.repeats)
    if args.dry_run:
        return await _dry_run(args, settings, selection, prices, err, out)
    if getattr(args, "repeats", 1) > 1 and args.temperature == 0:
        print(
            "research-judge grade: warning: --repeats at temperature 0 asks for the same answer "
            "K times; set --temperature (e.g. 0.7) to measure how stable the judge is",
            file=err,
        )
    store = open_store(args.store, args.max_ref_bytes) if args.store else None
    batch_progress = BatchProgress(err, enabled=not args.quiet)
    client = open_client(settings, jury, args.prompts, on_batch_change=batch_progress)
    try:
        # After the client: a bad flag is reported alone, before any notice.
        judge = judge_for(args, client, prices, judge_limits(args, settings, err))
        budget = (
            Budget(args.max_cost, Estimator(judge, prices)) if args.max_cost is not None else None
        )
        # Counting is a pass over the whole input: only for a progress bar that will be shown.
        counted = not (args.quiet or args.where or args.sample)
        total = _count_lines(args.sessions) if counted else None
        resilient = resilience_of(client)

        def live() -> dict[str, int]:
            counts = {"re-asks": judge.reasks}
            if resilient is not None:
                counts |= {"retries": resilient.retries, "429s": resilient.rate_limited}
            return counts

        progress = Progress(total, stream=err, enabled=not args.quiet, live=live)
        if resilient is not None:
            resilient.on_retry = progress.refresh

        def report_input_error(exc: InputFileError) -> None:
            print(f"research-judge grade: {inline(exc)}", file=err)

        # Ours, filled in as the run goes: a run the provider stops still reports what it covered.
        stats = RunStats()
        try:
            await grade_file(
                args.sessions,
                args.out,
                judge,
                RunOptions.for_client(
                    settings, retry_errors=args.retry_errors, selection=selection
                ),
                progress=progress,
                budget=budget,
                on_input_error=report_input_error,
                store=store,
                stats=stats,
            )
        except ProviderDownError as exc:
            progress.close()
            print(
                f"research-judge grade: stopped: {exc}. {args.out} holds every session graded "
                "so far; run the same command again to resume.",
                file=err,
            )
            reason = f"provider down: {exc}; rerun the same command to resume"
            if args.json:
                summary = summarize(_covered_rows(args.out, stats.order))
                print(json.dumps(_payload(summary, stats, live(), reason), indent=2), file=out)
            emit_grade_ci(
                args,
                _covered_loader(args.out, stats.order),
                stats.input_errors,
                stopped=stats.stopped,
                stop_message=reason,
            )
            return ExitCode.PROVIDER_DOWN
        except (KeyboardInterrupt, asyncio.CancelledError):
            progress.interrupt()  # the "interrupted" message then starts on its own line
            if batch:
                print(resume_hint(args.out), file=err)
            raise
    finally:
        await client.aclose()

    summary = summarize(_covered_rows(args.out, stats.order))
    cost = f"${stats.cost_usd:.4f}" if stats.cost_known else "unknown (no price for the model)"
    run_line = (
        f"this run: graded {stats.graded} (reused {stats.reused} from {args.out}), "
        f"{stats.calls} judge calls ({stats.cache_hits} {answers_from(args, settings)}), "
        f"tokens in {stats.input_tokens} (cached {stats.cached_input_tokens}) "
        f"out {stats.output_tokens}, cost {cost}"
    )
    transport = live()
    run_line += (
        f"\ntransport: retries {transport.get('retries', 0)} (429s {transport.get('429s', 0)}), "
        f"re-asks {transport['re-asks']}"
    )
    if args.json:
        budget_stop = (
            f"--max-cost ${args.max_cost} reached; {stats.not_sent} session(s) not sent"
            if stats.stopped == "budget"
            else None
        )
        payload = _payload(summary, stats, transport, budget_stop)
        print(json.dumps(payload, indent=2), file=out)
    else:
        print(inline_lines(format_summary(summary)), file=out)  # ids inert (``_text``)
        print(run_line, file=out)
        if stats.input_errors:
            print(f"input: {len(stats.input_errors)} bad line(s) skipped (listed above)", file=out)
        if stats.unread_keys:
            keys = ", ".join(f"{inline(k)} ({n})" for k, n in sorted(stats.unread_keys.items()))
            print(
                f"input: top-level key(s) no prompt reads, so the judge never saw them: {keys} "
                "(a --prompts template can print them by name)",
                file=out,
            )
        if stats.repaired_torn_line:
            print(f"resumed: repaired the unfinished last line of {args.out}", file=out)
        if batch and (counters := batch_counters(client)) is not None:
            print(batch_summary(counters, args.out), file=out)
    if args.parquet is not None:
        from ..results.parquet import export_parquet

        done = export_parquet(args.out, args.parquet)
        print(
            f"wrote {done.sessions_path} ({done.sessions} sessions) and {done.verdicts_path} "
            f"({done.verdicts} verdicts)",
            file=err,
        )
    emit_grade_ci(
        args, _covered_loader(args.out, stats.order), stats.input_errors, stopped=stats.stopped
    )
    if stats.stopped == "budget":
        left = stats.not_sent
        print(
            f"research-judge grade: stopped: --max-cost ${args.max_cost} reached; {left} "
            "session(s) not sent. Raise the limit and run again to resume.",
            file=err,
        )
        return ExitCode.STOPPED
    return grade_exit_code(len(stats.input_errors), summary.error_kinds)


def _payload(
    summary: Summary, stats: RunStats, transport: dict[str, int], stop_reason: str | None
) -> dict[str, object]:
    """``grade --json``: the selected sessions as ``--out`` now holds them, and this run."""
    return {
        "sessions": summary.sessions,
        "graded": summary.graded,
        "errors": summary.errors,
        "error_kinds": summary.error_kinds,
        "input_errors": len(stats.input_errors),
        "pass_rate": summary.pass_rate,
        "means": summary.means,
        "evidence_verified": summary.evidence_verified,
        "context": summary.context.to_dict(),
        "run": {
            "graded": stats.graded,
            "reused": stats.reused,
            "calls": stats.calls,
            "cache_hits": stats.cache_hits,
            "input_tokens": stats.input_tokens,
            "cached_input_tokens": stats.cached_input_tokens,
            "output_tokens": stats.output_tokens,
            "cost_usd": stats.cost_usd if stats.cost_known else None,
            "stopped": stats.stopped,
            "stop_reason": stop_reason,
            "retries": transport.get("retries", 0),
            "rate_limited": transport.get("429s", 0),
            "reasks": transport["re-asks"],
        },
    }


def _covered_rows(path: str, order: list[str]) -> Iterator[ResultRow]:
    """The rows ``--out`` holds for the sessions this run covered (graded now or reused), as a
    stream: the summary and ``--json`` fold over it, so memory stays flat at any size."""
    selected = set(order)
    # A --max-cost below one session's estimate stops before the file is even created.
    for r in iter_rows(path, missing_ok=True):
        if not isinstance(r, InputFileError) and r.session_id in selected:
            yield r


def _covered_loader(path: str, order: list[str]) -> Callable[[], list[Result]]:
    """The covered results in full, read when a CI output asks for them (once)."""

    @functools.cache
    def load() -> list[Result]:
        selected = set(order)
        return [
            r
            for r in iter_results(path, missing_ok=True)
            if not isinstance(r, InputFileError) and r.session_id in selected
        ]

    return load


def _count_lines(path: str) -> int | None:
    try:
        with open(path, "rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError:
        return None  # iter_sessions reports the unreadable file with its name


async def _dry_run(
    args: argparse.Namespace,
    settings: ClientSettings,
    selection: Selection,
    prices: PriceTable,
    err: TextIO,
    out: TextIO,
) -> int:
    # A dry run needs the prompts and the model name, never a client: use a stand-in.
    limits = judge_limits(args, settings, err)
    judge = judge_for(args, _NoClient(args.provider, args.model), prices, limits)
    estimator = Estimator(judge, prices)
    store = open_store(args.store, args.max_ref_bytes) if args.store else None
    n = bad = unreadable = unread = tokens_in = tokens_out = calls = split = 0
    cost = 0.0
    known = prices.price_for(args.model) is not None
    for item in selected_sessions(args.sessions, selection):
        if isinstance(item, InputFileError):
            print(f"research-judge grade: {item}", file=err)
            bad += 1
            continue
        if item.offloaded and store is not None:
            # The estimate is of the prompts the judge would see: with the stored texts.
            try:
                item = await resolve_session(item, store)
            except ContentRefError as exc:
                print(f"research-judge grade: session {item.id!r}: {exc}", file=err)
                unreadable += 1
                continue
        unread += bool(item.offloaded)
        e = estimator.session(item)
        n += 1
        calls += e.calls
        split += e.calls > 2 * judge.samples_per_call
        tokens_in += e.input_tokens
        tokens_out += e.output_tokens
        cost += e.cost_usd or 0.0
    shown = f"${cost:.4f}" if known else f"unknown (no price for {args.model!r}; use --prices)"
    if prices.batch:
        shown += f" at batch prices (x{prices.batch_multiplier:g} of the standard rates)"
    print(
        f"dry run: {n} session(s), {calls} judge calls"
        + (f" ({split} session(s) larger than one call are split)" if split else "")
        + f"; estimated input tokens {tokens_in}, "
        f"output tokens {tokens_out}, cost {shown} (as of prices {prices.as_of}).\n"
        "Estimate: rendered prompts at ~4 characters per token, expected reply sizes per call; "
        "re-asks and provider prompt-cache discounts are not included.",
        file=out,
    )
    if args.max_cost is not None and known:
        # A real run reserves each session's estimate before sending it and stops at the limit.
        verdict = (
            "within it"
            if cost <= args.max_cost
            else "over it: a run would stop before sending every session"
        )
        print(f"--max-cost ${args.max_cost:g}: the estimate is {verdict}", file=out)
    if getattr(args, "jury", None):
        print(
            "with --jury: this counts the --model judge only; each added juror sends as many "
            "calls again, at its own prices",
            file=out,
        )
    if unread:
        print(
            f"{unread} session(s) have offloaded references (content_ref) counted as empty: "
            "give --store to read them",
            file=out,
        )
    if bad:
        print(f"{bad} bad input line(s) would be skipped (listed above)", file=out)
    if unreadable:
        print(f"{unreadable} session(s) would error: offloaded text unreadable (above)", file=out)
    return ExitCode.FAILED if bad or unreadable else ExitCode.OK


class _NoClient:
    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        raise AssertionError("a dry run never calls the judge")

    async def aclose(self) -> None:
        return None


def grade_exit_code(input_errors: int, error_kinds: dict[str, int]) -> ExitCode:
    """2 for anything wrong with the user's input, 6 when only the judge failed sessions."""
    if input_errors or error_kinds.get(ErrorKind.CONTENT_REF, 0):
        return ExitCode.FAILED
    return ExitCode.JUDGE_FAILED if error_kinds else ExitCode.OK
