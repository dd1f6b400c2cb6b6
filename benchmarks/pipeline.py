"""What every benchmark shares: the real grading chain, and the figures it reports.

The chain is the one ``research-judge grade --no-cache`` builds: ``Judge`` over
``ResilientClient`` over ``OpenAIJudge`` (the SDK client), pointed at the fake server with a dummy
key; the run goes through ``engine.grade_file`` exactly as the CLI's does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from judge_replies import MODEL
from research_judge.clients.openai import OpenAIJudge
from research_judge.engine import ResilientClient, RunOptions, RunStats, grade_file
from research_judge.judge import Judge
from research_judge.pricing import PriceTable

__all__ = ["DUMMY_KEY", "MODEL", "Figure", "Timed", "build_chain", "grade_timed"]
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
    inner = OpenAIJudge(MODEL, api_key=DUMMY_KEY, base_url=base_url)
    resilient = ResilientClient(inner, concurrency=concurrency)
    return Judge(resilient, prices=PriceTable.load()), resilient


@dataclass(frozen=True)
class Timed:
    stats: RunStats
    wall: float
    cpu: float


async def grade_timed(sessions: Path, out: Path, judge: Judge, concurrency: int) -> Timed:
    """Run ``grade_file``, timing only the run itself (wall clock and this process's CPU)."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    stats = await grade_file(sessions, out, judge, RunOptions(concurrency=concurrency))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return Timed(stats, wall, cpu)
