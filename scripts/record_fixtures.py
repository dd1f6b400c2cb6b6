"""Regenerate the demo's judge recordings from the hand-authored replies.

No model is reachable where this project is built, so the demo judge is scripted: each reply in
``fixtures/judge_replies.jsonl`` was written by hand to behave like a lenient LLM judge. This
script plays those replies through the real pipeline with recording on, so ``make demo`` (and
the tests) can replay them byte for byte. Run it after any change to ``prompts/``:

    .venv/bin/python scripts/record_fixtures.py
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from research_judge.clients import RecordingJudge, ScriptedJudge
from research_judge.clients.base import JudgeRequest
from research_judge.engine import RunOptions, grade_file
from research_judge.judge import Judge

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
PROVIDER, MODEL = "scripted", "authored-lenient-judge"
SOURCES = ("sessions.jsonl", "bad_sessions.jsonl")


def load_replies(path: Path) -> dict[str, dict[str, Any]]:
    replies: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            replies[item["session_id"]] = item
    return replies


def responder_for(replies: dict[str, dict[str, Any]]) -> Any:
    def respond(request: JudgeRequest) -> Any:
        authored = replies[request.session_id]
        first_attempt = len(request.messages) == 1
        if request.call == "counting" and first_attempt and "counting_invalid_first" in authored:
            return authored["counting_invalid_first"]
        return authored[request.call]

    return respond


async def main() -> int:
    replies = load_replies(FIXTURES / "judge_replies.jsonl")
    target = FIXTURES / "recordings"
    if target.exists():
        shutil.rmtree(target)
    client = RecordingJudge(
        ScriptedJudge(responder_for(replies), provider=PROVIDER, model=MODEL), target
    )
    judge = Judge(client)
    with tempfile.TemporaryDirectory() as tmp:
        for name in SOURCES:
            stats = await grade_file(
                FIXTURES / name, Path(tmp) / f"{name}.results", judge, RunOptions(concurrency=4)
            )
            print(f"{name}: graded {stats.graded}, errors {stats.errors}", file=sys.stderr)
    print(f"wrote {len(list(target.glob('*.json')))} exchanges to {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
