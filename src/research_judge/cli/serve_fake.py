"""``research-judge serve-fake``: a fake OpenAI-compatible judge on 127.0.0.1, for a first run
without a key and for trying settings (latency, rate limits) without spending anything."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ._help import DefaultsFormatter
from .config import add_config_flag

DEFAULT_PORT = 8011


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve-fake",
        help="serve a fake OpenAI-compatible judge on 127.0.0.1 (no key, no model)",
        description=(
            "Serve POST /v1/chat/completions on 127.0.0.1 with a fake judge that answers every "
            "session validly (deterministic, arbitrary verdicts: plumbing, not judgement). It "
            "reads each request back through the prompt templates that rendered it (--prompts: "
            "the folder the grade run uses), never from their wording. Stop it with Ctrl-C."
        ),
        formatter_class=DefaultsFormatter,
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (0 takes a free one)")
    p.add_argument(
        "--latency", type=float, default=0.0, metavar="SECONDS", help="delay before each answer"
    )
    p.add_argument(
        "--rate-limit",
        type=int,
        metavar="N",
        help="answer HTTP 429 (with Retry-After) while N requests are already in flight",
    )
    p.add_argument(
        "--retry-after",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="Retry-After sent with each 429",
    )
    p.add_argument(
        "--max-seconds", type=float, metavar="SECONDS", help="stop by itself after this long"
    )
    p.add_argument(
        "--prompts",
        type=Path,
        metavar="DIR",
        help="the prompts folder the grade run renders from (default: the shipped prompts)",
    )
    p.add_argument(
        "--max-body",
        type=int,
        default=64 * 2**20,  # testing.fake_openai.BODY_LIMIT, not imported for --help
        metavar="BYTES",
        help="largest request body accepted; a larger one is answered 413 unread",
    )
    add_config_flag(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..testing import FakeJudge, FakeOpenAIServer

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be within 0..65535, got {args.port}")
    if args.latency < 0 or args.retry_after < 0:
        raise ConfigError("--latency and --retry-after must be 0 or more")
    if args.max_body < 1:
        raise ConfigError(f"--max-body must be at least 1 byte, got {args.max_body}")
    if args.rate_limit is not None and args.rate_limit < 1:
        raise ConfigError(f"--rate-limit must be at least 1, got {args.rate_limit}")
    server = FakeOpenAIServer(
        FakeJudge(args.prompts),
        latency=args.latency,
        max_concurrent=args.rate_limit,
        retry_after=args.retry_after,
        keep_requests=0,
        port=args.port,
        max_body=args.max_body,
    )
    try:
        server.start()
    except RuntimeError as exc:
        raise ConfigError(f"cannot serve on 127.0.0.1:{args.port}: {exc}") from None
    stop = threading.Event()
    # SIGTERM (a CI step's end, a `kill`) stops as cleanly as Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(
        f"fake judge listening on {server.base_url}\n"
        "grade against it (no key needed on 127.0.0.1):\n"
        f"  research-judge grade SESSIONS.jsonl --out RESULTS.jsonl --model fake-judge "
        f"--base-url {server.base_url}\n"
        "Ctrl-C stops it.",
        flush=True,
    )
    try:
        stop.wait(args.max_seconds)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    s = server.stats
    print(
        f"\nfake judge stopped: {s.requests} requests, {s.completed} answered, "
        f"{s.rate_limited} rate limited (429), {s.failed} refused",
        file=sys.stderr,
    )
    return 0
