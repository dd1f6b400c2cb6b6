"""The floors: the same two calls per session (``POST /chat/completions``), and nothing else.

Request bodies are rendered before the clock starts (by the real ``Judge`` and ``OpenAIClient``,
so the JSON on the wire is the pipeline's; the fake judge reads it back), then sent at the same
concurrency, in the engine's shape (bounded sessions, each making its two calls at once). No
parsing, validation, evidence checks or writing. Every SDK floor uses ``openai.AsyncOpenAI``
on the SDK's aiohttp transport (``DefaultAioHttpClient``), no retries, the same timeout; they
differ in the SDK call:

- ``sdk``: ``chat.completions.create(**body)``, the SDK's ordinary typed call: the issue's
  baseline ("a bare loop making the same two SDK calls per session");
- ``sdk-raw``: ``chat.completions.with_raw_response.create(**body)``, the call
  ``OpenAIClient`` made before it moved to ``post`` (request transform, no typed response);
- ``sdk-post``: ``post("/chat/completions", body=..., cast_to=httpx2.Response)``, the SDK's
  cheapest documented call and the one ``OpenAIClient`` makes (no request transform, no
  response model);
- ``aiohttp``: a plain ``aiohttp.ClientSession`` posting the same JSON: the least any client can
  spend on these exchanges.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import aiohttp
import httpx2
import openai

from judge_replies import write_sessions
from pipeline import DUMMY_KEY, MODEL, Timed, first_requests, grade_clean
from research_judge import __version__
from research_judge.clients._http import DEFAULT_TIMEOUT
from research_judge.clients.base import JudgeRequest
from research_judge.clients.openai import OpenAIClient

Body = dict[str, Any]
Call = tuple[Body, dict[str, str]]  # a request body and the extra headers it is sent with
Floor = Literal["sdk", "sdk-raw", "sdk-post", "aiohttp"]
FLOORS: tuple[Floor, ...] = ("sdk", "sdk-raw", "sdk-post", "aiohttp")


def render_calls(sessions: Path) -> list[tuple[Call, Call]]:
    """Each session's two calls as the pipeline sends them: the body, and no extra headers."""
    # The body does not depend on the server: any base URL renders the same bytes.
    wire = OpenAIClient(MODEL, api_key=DUMMY_KEY, base_url="http://127.0.0.1:9/v1")

    def call(request: JudgeRequest) -> Call:
        return wire.request_body(request), {}

    return [(call(a), call(b)) for _, (a, b) in first_requests(sessions)]


async def bare_run(
    calls: list[tuple[Call, Call]], base_url: str, concurrency: int, floor: Floor = "sdk"
) -> tuple[float, float]:
    """Send every pair, at most ``concurrency`` requests in flight; return (wall, CPU) seconds."""
    async with _sender(floor, base_url) as send:
        limit = asyncio.Semaphore(concurrency)
        sessions_in_flight = asyncio.Semaphore(concurrency)

        async def one_call(call: Call) -> None:
            async with limit:
                await send(*call)

        async def one_session(pair: tuple[Call, Call]) -> None:
            try:
                await asyncio.gather(one_call(pair[0]), one_call(pair[1]))
            finally:
                sessions_in_flight.release()

        cpu0, wall0 = time.process_time(), time.perf_counter()
        tasks = []
        for pair in calls:  # the engine's shape: bounded sessions, each making two calls
            await sessions_in_flight.acquire()
            tasks.append(asyncio.create_task(one_session(pair)))
        await asyncio.gather(*tasks)
        return time.perf_counter() - wall0, time.process_time() - cpu0


@asynccontextmanager
async def _sender(
    floor: Floor, base_url: str
) -> AsyncIterator[Callable[[Body, dict[str, str]], Awaitable[Any]]]:
    """``send(body, headers)`` makes one call that floor's way, with the call's extra headers;
    the client is built before the clock starts and closed after it stops."""
    if floor == "aiohttp":
        # The headers the SDK sends that matter to a server.
        headers = {
            "Authorization": f"Bearer {DUMMY_KEY}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"research-judge/{__version__}",
        }
        url = base_url.rstrip("/") + "/chat/completions"
        async with aiohttp.ClientSession(
            headers=headers,
            connector=aiohttp.TCPConnector(limit=0),
            timeout=aiohttp.ClientTimeout(total=DEFAULT_TIMEOUT),
        ) as session:

            async def post(body: Body, extra: dict[str, str]) -> bytes:
                data = json.dumps(body, separators=(",", ":")).encode()
                async with session.post(
                    url, data=data, headers=extra, allow_redirects=False
                ) as reply:
                    return await reply.read()

            yield post
        return
    client = openai.AsyncOpenAI(
        api_key=DUMMY_KEY,
        base_url=base_url,
        max_retries=0,
        timeout=DEFAULT_TIMEOUT,
        http_client=openai.DefaultAioHttpClient(),
    )

    async def sdk_create(body: Body, extra: dict[str, str]) -> Any:
        return await client.chat.completions.create(**body, extra_headers=extra)

    async def sdk_raw(body: Body, extra: dict[str, str]) -> bytes:
        raw = await client.chat.completions.with_raw_response.create(**body, extra_headers=extra)
        return raw.content

    async def sdk_post(body: Body, extra: dict[str, str]) -> httpx2.Response:
        # The SDK's documented way to send a body it does not model, with no typed transform.
        return await client.post(
            "/chat/completions", body=body, cast_to=httpx2.Response, options={"headers": extra}
        )

    calls = {"sdk": sdk_create, "sdk-raw": sdk_raw, "sdk-post": sdk_post}
    try:
        yield calls[floor]
    finally:
        await client.close()


WARMUP_SESSIONS = 20


def in_turn(
    base_url: str,
    sessions: Path,
    out: Path,
    concurrency: int,
    repeats: int,
    floors: Sequence[Floor],
) -> tuple[list[Timed], dict[Floor, list[tuple[float, float]]]]:
    """After one warm-up, ``repeats`` rounds of one pipeline run then one run of each floor, so
    the machine's slow and fast spells fall on every side alike. Returns the pipeline's runs
    and each floor's (wall, CPU) seconds, round by round."""
    calls = render_calls(sessions)
    _warm_up(base_url, out.parent, concurrency, floors)
    runs: list[Timed] = []
    floor_runs: dict[Floor, list[tuple[float, float]]] = {floor: [] for floor in floors}
    for _ in range(repeats):
        runs.append(grade_clean(base_url, sessions, out, concurrency))
        for floor in floors:
            floor_runs[floor].append(asyncio.run(bare_run(calls, base_url, concurrency, floor)))
    return runs, floor_runs


def _warm_up(base_url: str, workdir: Path, concurrency: int, floors: Sequence[Floor]) -> None:
    """One pipeline run and one run of each floor measured over a few other sessions, before
    anything is timed: the first run of each pays for lazy imports and set-up that later runs
    do not."""
    warm = write_sessions(workdir / "warmup.sessions.jsonl", WARMUP_SESSIONS, seed=9)
    grade_clean(base_url, warm, workdir / "warmup.out.jsonl", concurrency)
    calls = render_calls(warm)
    for floor in floors:
        asyncio.run(bare_run(calls, base_url, concurrency, floor))
