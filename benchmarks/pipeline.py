"""What every benchmark shares: the real grading chain, a timed run of it, and the figures.

The chain is the one ``research-judge grade --no-cache`` builds, from the same builder
(``clients.chain.build_client``): ``Judge`` over ``ResilientClient`` over ``OpenAIClient`` (a JSON
POST per call through the openai SDK), pointed at the fake server with a dummy key; the run goes
through ``engine.grade_file`` exactly as the CLI's does. The fake judge reads each body back
(``judge_replies``); the bare loops send the same bodies, so both sides send the same bytes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from judge_replies import MODEL
from research_judge.clients.base import JudgeRequest
from research_judge.clients.chain import ClientSettings, build_client, resilience_of
from research_judge.clients.scripted import ScriptedClient
from research_judge.cost.prices import PriceTable
from research_judge.engine import ResilientClient, RunOptions, RunStats, grade_file
from research_judge.judge.grader import Judge
from research_judge.judge.prompts import PromptSet
from research_judge.sessions.model import Session, iter_sessions

__all__ = [
    "DUMMY_KEY",
    "MODEL",
    "Figure",
    "Timed",
    "build_chain",
    "first_requests",
    "grade_clean",
    "grade_timed",
    "joined",
]
DUMMY_KEY = "sk-bench-dummy"


@dataclass(frozen=True)
class Figure:
    """One measured figure against its target (``ok`` None: reported, no target)."""

    benchmark: str
    name: str
    value: str
    target: str
    ok: bool | None
    note: str = ""


def build_chain(base_url: str, concurrency: int) -> tuple[Judge, ResilientClient]:
    """The CLI's chain without the cache, and its resilience layer (for its counters)."""
    settings = ClientSettings(
        model=MODEL,
        api_key=DUMMY_KEY,
        base_url=base_url,
        concurrency=concurrency,
        cache=False,
    )
    client = build_client(settings)
    resilient = resilience_of(client)
    assert resilient is not None, "the network chain always has a resilience layer"
    return Judge(client, prices=PriceTable.load()), resilient


@dataclass(frozen=True)
class Timed:
    stats: RunStats
    wall: float
    cpu: float
    client: ResilientClient  # closed, but its counters (429s, retries, limit) stay readable


def grade_timed(base_url: str, sessions: Path, out: Path, concurrency: int) -> Timed:
    """Grade ``sessions`` into a fresh ``out`` on a fresh chain, as each CLI run has one, timing
    only ``grade_file`` itself (wall clock and this process's CPU)."""
    out.unlink(missing_ok=True)  # nothing to resume: every run does the whole file
    return asyncio.run(_grade_timed(base_url, sessions, out, concurrency))


def grade_clean(base_url: str, sessions: Path, out: Path, concurrency: int) -> Timed:
    """``grade_timed`` for runs whose timing is the figure: every session graded with its two
    calls and none errored (an error or a re-ask would time different work), or it raises."""
    timed = grade_timed(base_url, sessions, out, concurrency)
    stats = timed.stats
    if stats.errors or stats.graded != stats.selected or stats.calls != 2 * stats.graded:
        raise RuntimeError(
            f"run over {sessions.name} was not clean: {stats.selected} sessions, "
            f"{stats.graded} graded, {stats.errors} errored, {stats.calls} calls"
        )
    return timed


async def _grade_timed(base_url: str, sessions: Path, out: Path, concurrency: int) -> Timed:
    judge, client = build_chain(base_url, concurrency)
    try:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        stats = await grade_file(sessions, out, judge, RunOptions(concurrency=concurrency))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    finally:
        await client.aclose()
    return Timed(stats, wall, cpu, client)


def first_requests(
    sessions: Path, prompts: PromptSet | None = None
) -> list[tuple[str, tuple[JudgeRequest, JudgeRequest]]]:
    """Each session's id and its two opening requests, rendered by the real ``Judge`` with
    ``prompts`` (the shipped ones by default; the requests do not depend on the client, so none
    is built)."""
    judge = Judge(ScriptedClient([], model=MODEL), prompts=prompts)
    out = []
    for _, item in iter_sessions(sessions):
        assert isinstance(item, Session), item  # generated files hold no bad lines
        out.append((item.id, judge.first_requests(item)))
    return out


def joined(values: Iterable[float]) -> str:
    """Every run's figure, for the detail lines: "1.23/1.25/1.31"."""
    return "/".join(f"{v:.2f}" for v in values)
