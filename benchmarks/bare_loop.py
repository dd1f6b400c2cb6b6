"""The floor: the same two SDK calls per session (``post /chat/completions``), nothing else.

Request bodies are rendered before the clock starts (by the real ``Judge`` and ``OpenAIJudge``,
so the bytes on the wire are the pipeline's), then sent with a bare ``AsyncOpenAI`` client at the
same concurrency. No parsing, validation, evidence checks or writing: whatever the pipeline costs
beyond this loop is our own code.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx2
import openai

from judge_replies import write_sessions
from pipeline import DUMMY_KEY, MODEL, first_requests, grade_timed
from research_judge.clients.openai import DEFAULT_TIMEOUT, OpenAIJudge

Body = dict[str, Any]


def render_bodies(sessions: Path) -> list[tuple[Body, Body]]:
    # The body does not depend on the server: any base URL renders the same bytes.
    wire = OpenAIJudge(MODEL, api_key=DUMMY_KEY, base_url="http://127.0.0.1:9/v1")
    return [(wire.request_body(a), wire.request_body(b)) for _, (a, b) in first_requests(sessions)]


async def bare_run(
    bodies: list[tuple[Body, Body]],
    base_url: str,
    concurrency: int,
    *,
    sdk_default_transport: bool = False,
) -> tuple[float, float]:
    """Send every pair, at most ``concurrency`` requests in flight; return (wall, CPU) seconds.

    By default the client is configured as ``OpenAIJudge`` configures it (aiohttp transport, no
    SDK retries, the same timeout); ``sdk_default_transport`` uses the SDK's default httpx2
    transport instead.
    """
    transport = None if sdk_default_transport else openai.DefaultAioHttpClient()
    client = openai.AsyncOpenAI(
        api_key=DUMMY_KEY,
        base_url=base_url,
        max_retries=0,
        timeout=DEFAULT_TIMEOUT,
        http_client=transport,
    )
    limit = asyncio.Semaphore(concurrency)
    sessions_in_flight = asyncio.Semaphore(concurrency)

    async def one_call(body: Body) -> None:
        async with limit:
            # The same SDK call the pipeline makes (OpenAIJudge.complete), and nothing else.
            await client.post("/chat/completions", body=body, cast_to=httpx2.Response)

    async def one_session(pair: tuple[Body, Body]) -> None:
        try:
            await asyncio.gather(one_call(pair[0]), one_call(pair[1]))
        finally:
            sessions_in_flight.release()

    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        tasks = []
        for pair in bodies:  # the engine's shape: bounded sessions, each making two calls
            await sessions_in_flight.acquire()
            tasks.append(asyncio.create_task(one_session(pair)))
        await asyncio.gather(*tasks)
    finally:
        await client.close()
    return time.perf_counter() - wall0, time.process_time() - cpu0


def warm_up(base_url: str, workdir: Path, sessions: int, concurrency: int) -> None:
    """One pipeline run and one bare run over a few other sessions, before either is timed: the
    first run of each pays for lazy imports and set-up that later runs do not."""
    warm = write_sessions(workdir / "warmup.sessions.jsonl", sessions, seed=9)
    timed = grade_timed(base_url, warm, workdir / "warmup.out.jsonl", concurrency)
    if timed.stats.errors:
        raise RuntimeError(f"the warm-up run had {timed.stats.errors} errored sessions")
    asyncio.run(bare_run(render_bodies(warm), base_url, concurrency))
