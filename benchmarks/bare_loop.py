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

from pipeline import DUMMY_KEY, MODEL, build_chain
from research_judge.clients.openai import OpenAIJudge
from research_judge.sessions import Session, iter_sessions


def render_bodies(sessions: Path, base_url: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    judge, _client = build_chain(base_url, 1)
    wire = OpenAIJudge(MODEL, api_key=DUMMY_KEY, base_url=base_url)
    bodies = []
    for _, item in iter_sessions(sessions):
        assert isinstance(item, Session), item
        counting, scoring = judge.first_requests(item)
        bodies.append((wire.request_body(counting), wire.request_body(scoring)))
    return bodies


async def bare_run(
    bodies: list[tuple[dict[str, Any], dict[str, Any]]],
    base_url: str,
    concurrency: int,
    *,
    sdk_default_transport: bool = False,
) -> tuple[float, float]:
    """Send every pair, at most ``concurrency`` requests in flight; return (wall, CPU) seconds.

    By default the client is configured as ``OpenAIJudge`` configures it (aiohttp transport, no
    SDK retries); ``sdk_default_transport`` uses the SDK's default httpx2 transport instead.
    """
    transport = None if sdk_default_transport else openai.DefaultAioHttpClient()
    client = openai.AsyncOpenAI(
        api_key=DUMMY_KEY, base_url=base_url, max_retries=0, http_client=transport
    )
    limit = asyncio.Semaphore(concurrency)
    sessions_in_flight = asyncio.Semaphore(concurrency)

    async def one_call(kwargs: dict[str, Any]) -> None:
        async with limit:
            # The same SDK call the pipeline makes (OpenAIJudge.complete), and nothing else.
            await client.post("/chat/completions", body=kwargs, cast_to=httpx2.Response)

    async def one_session(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
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
