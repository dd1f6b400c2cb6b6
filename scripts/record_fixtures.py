"""Regenerate the demo's judge recordings from the hand-authored replies.

No model is reachable where this project is built, so the demo judge is scripted: each reply in
``fixtures/judge_replies.jsonl`` (agent v12) and ``fixtures/baseline/judge_replies.jsonl`` (the
previous agent, v11) was written by hand to behave like a lenient LLM judge. This script plays
those replies through the real pipeline with recording on, into one ``fixtures/recordings/``
folder, so ``make demo`` (and the tests) can replay them byte for byte. A v11 session identical
to its v12 counterpart renders the same request, so it shares the v12 recording (its authored
reply is a copy of the v12 one). Run it after any change to ``prompts/``:

    .venv/bin/python scripts/record_fixtures.py
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from research_judge.clients import RecordingClient, ScriptedClient
from research_judge.clients.base import JudgeRequest
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.grader import Judge
from research_judge.sessions.convert import ConvertOptions, compile_stub_pattern, convert_files
from research_judge.sessions.store import FolderStore

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
sys.path.insert(0, str(ROOT))
from fixtures.agent_logs import LOGS, STUB_PATTERN  # noqa: E402

AGENT_LOGS = FIXTURES / "agent_logs"
PROVIDER, MODEL = "scripted", "authored-lenient-judge"
# (sessions file, the authored replies that answer its judge calls), relative to fixtures/.
# Identical requests share one recording and the last write wins: bad_sessions.jsonl stays last
# so the good b-000x lines (texts of s-0009, s-0017, s-0020, replies in the minimal wire form)
# keep answering those requests, as they did before the baseline was added.
SOURCES = (
    ("sessions.jsonl", "judge_replies.jsonl"),
    ("baseline/sessions.jsonl", "baseline/judge_replies.jsonl"),
    ("bad_sessions.jsonl", "judge_replies.jsonl"),
)


def load_replies(path: Path) -> dict[str, dict[str, Any]]:
    replies: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            replies[item["session_id"]] = item
    return replies


def responder_for(replies: dict[str, dict[str, Any]]) -> Callable[[JudgeRequest], Any]:
    def respond(request: JudgeRequest) -> Any:
        authored = replies[request.session_id]
        first_attempt = len(request.messages) == 1
        if request.call == "counting" and first_attempt and "counting_invalid_first" in authored:
            return authored["counting_invalid_first"]
        return authored[request.call]

    return respond


async def main() -> int:
    target = FIXTURES / "recordings"
    if target.exists():
        shutil.rmtree(target)
    with tempfile.TemporaryDirectory() as tmp:
        for number, (name, replies_name) in enumerate(SOURCES):
            # One scripted judge per replies file: v11 and v12 share session ids.
            replies = load_replies(FIXTURES / replies_name)
            client = RecordingClient(
                ScriptedClient(responder_for(replies), provider=PROVIDER, model=MODEL), target
            )
            judge = Judge(client)
            stats = await grade_file(
                FIXTURES / name, Path(tmp) / f"{number}.results", judge, RunOptions(concurrency=4)
            )
            print(f"{name}: graded {stats.graded}, errors {stats.errors}", file=sys.stderr)
        await _record_agent_logs(Path(tmp), target)
    print(f"wrote {len(list(target.glob('*.json')))} exchanges to {target}", file=sys.stderr)
    return 0


async def _record_agent_logs(tmp: Path, target: Path) -> None:
    """The agent logs as ``make demo`` converts them, graded with the offloaded text read back."""
    sessions = tmp / "agent-sessions.jsonl"
    options = ConvertOptions(stub_pattern=compile_stub_pattern(STUB_PATTERN))
    with sessions.open("w", encoding="utf-8") as joined:
        for fmt, name in LOGS:
            part = tmp / f"{fmt}.jsonl"
            convert_files(fmt, [AGENT_LOGS / name], part, options)
            joined.write(part.read_text(encoding="utf-8"))
    replies = load_replies(AGENT_LOGS / "judge_replies.jsonl")
    client = RecordingClient(
        ScriptedClient(responder_for(replies), provider=PROVIDER, model=MODEL), target
    )
    stats = await grade_file(
        sessions,
        tmp / "agent.results",
        Judge(client),
        RunOptions(concurrency=4),
        store=FolderStore(AGENT_LOGS / "store"),
    )
    print(f"agent logs: graded {stats.graded}, errors {stats.errors}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
