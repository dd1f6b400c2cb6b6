"""Where our own CPU goes per session, piece by piece, without HTTP (for benchmark 2's report).

Each piece runs over the same sessions through public APIs and is timed with the process CPU
clock. "whole run without HTTP" is ``grade_file`` over an instant client behind the real
``ResilientClient``: it approximates what the pipeline costs beyond the bare aiohttp loop (the
HTTP exchanges themselves are the only thing missing from it).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

from instant_client import InstantClient
from judge_replies import counting_reply, scoring_reply
from pipeline import DUMMY_KEY, MODEL
from research_judge.clients.base import JudgeRequest
from research_judge.clients.openai import OpenAIClient
from research_judge.cost.prices import PriceTable
from research_judge.engine import ResilientClient, RunOptions, grade_file
from research_judge.judge.evidence import EvidenceChecker
from research_judge.judge.grader import Judge
from research_judge.judge.verdicts import parse_counting, parse_scoring
from research_judge.results.model import Result
from research_judge.sessions.model import Session, iter_sessions


def breakdown(sessions_path: Path, workdir: Path, concurrency: int = 40) -> list[tuple[str, float]]:
    """(piece, CPU ms per session) for each piece of our code."""
    sessions = [s for _, s in iter_sessions(sessions_path) if isinstance(s, Session)]
    n = len(sessions)
    judge = Judge(InstantClient(), prices=PriceTable.load())
    wire = OpenAIClient(MODEL, api_key=DUMMY_KEY, base_url="http://127.0.0.1:9/v1")
    requests = [judge.first_requests(s) for s in sessions]
    replies = [(counting_reply(s.reference_ids), scoring_reply()) for s in sessions]
    texts = [(json.dumps(c), json.dumps(sc)) for c, sc in replies]
    verdicts = [parse_counting(t[0], s.reference_ids) for t, s in zip(texts, sessions, strict=True)]
    results: list[Result] = asyncio.run(_grade_all(judge, sessions))

    def per_session(fn: Callable[[], object]) -> float:
        cpu = time.process_time()
        fn()
        return (time.process_time() - cpu) * 1000 / n

    pieces = [
        ("read + validate sessions (iter_sessions)", lambda: list(iter_sessions(sessions_path))),
        (
            "render both prompts (Judge.first_requests)",
            lambda: [judge.first_requests(s) for s in sessions],
        ),
        (
            "request bodies x2 (OpenAIClient.request_body)",
            lambda: [(wire.request_body(a), wire.request_body(b)) for a, b in requests],
        ),
        (
            "parse both replies (parse_counting + parse_scoring)",
            lambda: [
                (parse_counting(c, s.reference_ids), parse_scoring(sc))
                for (c, sc), s in zip(texts, sessions, strict=True)
            ],
        ),
        (
            "evidence checks (EvidenceChecker + check)",
            lambda: [
                [checker.check(v) for v in vs]
                for checker, vs in (
                    (EvidenceChecker(s), vs) for s, vs in zip(sessions, verdicts, strict=True)
                )
            ],
        ),
        ("result to JSON line (Result.to_json_line)", lambda: [r.to_json_line() for r in results]),
        (
            "Judge.grade, instant client (all of the above but I/O)",
            lambda: asyncio.run(_grade_all(judge, sessions)),
        ),
        (
            "instant test client alone, 2 calls (inside the rows below)",
            lambda: asyncio.run(_calls(InstantClient(), requests)),
        ),
        (
            "ResilientClient + instant client, 2 calls",
            lambda: asyncio.run(
                _calls(ResilientClient(InstantClient(), concurrency=concurrency), requests)
            ),
        ),
    ]
    out = [(name, per_session(fn)) for name, fn in pieces]
    out_path = workdir / "breakdown.out.jsonl"
    out_path.unlink(missing_ok=True)
    whole = per_session(lambda: asyncio.run(_whole_run(sessions_path, out_path, concurrency)))
    out.append(("whole run without HTTP (grade_file + ResilientClient)", whole))
    return out


async def _grade_all(judge: Judge, sessions: list[Session]) -> list[Result]:
    return [await judge.grade(s) for s in sessions]


async def _calls(
    client: InstantClient | ResilientClient, requests: list[tuple[JudgeRequest, JudgeRequest]]
) -> None:
    for a, b in requests:
        await client.complete(a)
        await client.complete(b)


async def _whole_run(sessions_path: Path, out: Path, concurrency: int) -> None:
    client = ResilientClient(InstantClient(), concurrency=concurrency)
    judge = Judge(client, prices=PriceTable.load())
    await grade_file(sessions_path, out, judge, RunOptions(concurrency=concurrency))


def format_breakdown(rows: list[tuple[str, float]]) -> str:
    width = max(len(name) for name, _ in rows)
    lines = [f"  {name:<{width}}  {ms:6.3f} ms/session" for name, ms in rows]
    return "[cpu] our code, CPU per session without HTTP:\n" + "\n".join(lines)
