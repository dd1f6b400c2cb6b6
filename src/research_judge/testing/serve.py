"""Run the fake OpenAI-compatible server as a process of its own (benchmarks, manual checks).

    python -m research_judge.testing.serve --responder my_module:respond --latency 0.1

The responder is a function of the request body, or an object whose ``respond(body, headers)``
also reads the headers (``HeaderResponder``); a class named there is instantiated with no
arguments, e.g.
``--responder research_judge.testing.fake_judge:FakeJudge``.

A separate process keeps the server's CPU out of the client's measurements. The protocol with
the parent is two JSON lines on stdout: ``{"base_url": ...}`` once listening, and
``{"stats": {...}}`` (the server's counters and CPU seconds) just before exiting. It stops itself
when its stdin reaches end of file (the parent closed it, or died) or after ``--max-seconds``,
so a forgotten server never outlives its benchmark for long.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import cast

from research_judge.testing.fake_openai import FakeOpenAIServer, HeaderResponder, Responder


def load_responder(spec: str) -> Responder:
    """``module:name`` -> the responder it names: a function of the body, a header responder
    object, or a class of header responders (instantiated with no arguments). The module must be
    importable (see PYTHONPATH)."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise SystemExit(f"--responder must look like module:function, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"--responder {spec}: cannot import {module_name!r}: {exc}") from exc
    found = getattr(module, attribute, None)
    if isinstance(found, type):
        if not callable(getattr(found, "respond", None)):
            raise SystemExit(
                f"--responder {spec}: class {attribute} has no respond(body, headers) method"
            )
        try:
            found = found()
        except TypeError as exc:
            raise SystemExit(
                f"--responder {spec}: class {attribute} cannot be made without arguments: {exc}"
            ) from exc
    if isinstance(found, HeaderResponder) or callable(found):
        return cast(Responder, found)
    raise SystemExit(
        f"--responder {spec}: {module_name} has no function or responder named {attribute!r}"
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m research_judge.testing.serve",
        description="Serve a fake OpenAI-compatible Chat Completions API on 127.0.0.1.",
    )
    p.add_argument(
        "--responder",
        metavar="MODULE:FUNCTION",
        help="function(body: dict) -> reply text, or an object or class with "
        "respond(body, headers) (also reads the headers); default answers '{}'",
    )
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    p.add_argument(
        "--max-concurrent",
        type=int,
        help="requests in flight beyond this get HTTP 429 with Retry-After",
    )
    p.add_argument("--retry-after", type=float, help="Retry-After seconds sent with a 429")
    p.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="refuse prompt + max tokens over this window (OpenAI's 400 context_length_exceeded) "
        "and cut replies longer than their max tokens (finish_reason length)",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=1800.0,
        help="stop after this long even if stdin stays open",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    responder = load_responder(args.responder) if args.responder else None
    stop = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.buffer.read()  # returns at end of file: the parent is done with us
        stop.set()

    server = FakeOpenAIServer(
        responder,
        latency=args.latency,
        max_concurrent=args.max_concurrent,
        retry_after=args.retry_after,
        keep_requests=0,  # nobody inspects them here; keep memory flat on long runs
        context_window=args.context_window,
    )
    with server:
        print(json.dumps({"base_url": server.base_url}), flush=True)
        threading.Thread(target=wait_for_eof, name="stdin-eof", daemon=True).start()
        stop.wait(args.max_seconds)
    stats = {**dataclasses.asdict(server.stats), "cpu_seconds": round(time.process_time(), 3)}
    print(json.dumps({"stats": stats}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
