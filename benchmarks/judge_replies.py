"""Benchmark data: small but realistic sessions, and the well-formed judge replies that fit them.

Each generated reference ``rN`` contains the sentence "Fact N is true here." inside ordinary
prose, and each answer states "Fact N is true [rN]." for every reference plus one invented
claim, so the replies built here quote text that really occurs: evidence verification does its
full work, and the verdicts mix yes and no as a real judge's would.

Every fake of the benchmarks answers from the references a request shows, read back out of the
request itself through the prompt templates that rendered it (``research_judge.testing.shown``),
never from their wording, so a benchmark keeps working when the prompts are reworded:

- ``BodyReplies`` answers the fake OpenAI server from the request body the pipeline and the bare
  baseline loops send;
- ``known_sessions.KnownSessions`` answers batch lines (bodies in an uploaded file) of the
  sessions it knows;
- ``InstantClient`` answers in process, from the ``JudgeRequest``.

The fakes log every request they answer when ``RJ_BENCH_ASK_LOG`` names a file: one line
"<call> <question>" so a benchmark can tell which sessions were sent.
"""

from __future__ import annotations

import functools
import json
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from research_judge.clients.base import CallKind
from research_judge.judge.prompts import PromptSet
from research_judge.testing.shown import RequestShown

MODEL = "gpt-4o-mini"  # the judge model every benchmark names (the fake server ignores it)
ASK_LOG_ENV = "RJ_BENCH_ASK_LOG"
INVENTED_CLAIM = "Fact 99 is invented"

_VOCABULARY = (
    "battery capacity winter range electric truck cold cell chemistry heating cabin pack "
    "thermal management charging station grid load highway payload efficiency motor drag "
    "tyre pressure regenerative braking lithium iron phosphate nickel density fleet operator "
    "route planning temperature degradation warranty cycle depot logistics"
)
_WORDS = _VOCABULARY.split()
_TOPICS = ("electric trucks", "heat pumps", "grid storage", "solar farms", "rail freight")


def _paragraphs(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        sentences = []
        for _ in range(rng.randint(4, 7)):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 16))]
            sentences.append(" ".join(words).capitalize() + ".")
        out.append(" ".join(sentences))
    return out


def make_session(index: int, rng: random.Random, pool: list[str]) -> dict[str, Any]:
    """One session of 2-6 references of about 0.5-1 kB each (real pages are longer; the
    engine's memory does not depend on it, and the files of 100k sessions stay manageable)."""
    topic = _TOPICS[index % len(_TOPICS)]
    n_refs = rng.randint(2, 6)
    refs = []
    for n in range(1, n_refs + 1):
        before, after = rng.choice(pool), rng.choice(pool)
        refs.append(
            {
                "id": f"r{n}",
                "title": f"Source {n} on {topic}",
                "url": f"https://example.org/{index}/{n}" if n % 3 else None,
                "content": f"{before} Fact {n} is true here. {after}",
            }
        )
    claims = " ".join(f"Fact {n} is true [r{n}]." for n in range(1, n_refs + 1))
    return {
        "id": f"s-{index:06d}",
        "question": f"What limits {topic} in case {index}?",
        "answer": f"In short: {claims} {INVENTED_CLAIM}. {rng.choice(pool)[:200]}",
        "trajectory": refs,
        "metadata": {"agent_version": f"v{index % 3 + 10}", "bench": True},
    }


def write_sessions(path: Path, count: int, seed: int = 5) -> Path:
    """Write ``count`` sessions (deterministic for a seed) as JSONL."""
    rng = random.Random(seed)
    pool = _paragraphs(rng, 200)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            out.write(json.dumps(make_session(i, rng, pool)) + "\n")
    return path


# --- replies ---------------------------------------------------------------------------------


def counting_reply(ref_ids: list[str]) -> dict[str, Any]:
    verdicts: list[dict[str, Any]] = []
    for position, rid in enumerate(ref_ids):
        n = rid.removeprefix("r")
        fact = f"Fact {n} is true"
        last = position == len(ref_ids) - 1 and len(ref_ids) > 2  # the last of many: off topic
        verdicts.append(_verdict(rid, "relevant", not last, f"{fact} here"))
        verdicts.append(_verdict(rid, "used", position % 2 == 0, fact))
    for number, rid in enumerate(ref_ids, start=1):
        fact = f"Fact {rid.removeprefix('r')} is true"
        verdicts.append(
            _verdict(f"c{number}", "grounded", True, f"{fact} here", claim=fact, source=rid)
        )
    verdicts.append(
        _verdict(f"c{len(ref_ids) + 1}", "grounded", False, INVENTED_CLAIM, claim=INVENTED_CLAIM)
    )
    return {"verdicts": verdicts}


def _verdict(
    vid: str,
    check: str,
    yes: bool,
    evidence: str,
    claim: str | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    return {
        "id": vid,
        "check": check,
        "answer": "yes" if yes else "no",
        "evidence": evidence,
        "claim": claim,
        "source": source,
    }


def scoring_reply() -> dict[str, Any]:
    scores = {"effectiveness": 3, "fluff": 2, "structure": 3}
    return {
        "scores": [
            {
                "criterion": name,
                "reasoning": f"The answer addresses the question directly; {name} judged on the "
                "claims as written, tally: one padded sentence at the end.",
                "evidence": "Fact 1 is true",
                "score": score,
            }
            for name, score in scores.items()
        ]
    }


def reply_text(call: CallKind, reference_ids: Sequence[str]) -> str:
    """The reply, as JSON text, to a call showing these references (none for scoring). Built
    once per reference list: every fake of the benchmarks answers from here, from the
    references a request shows."""
    return _reply_text(call, tuple(reference_ids))


@functools.cache
def _reply_text(call: CallKind, reference_ids: tuple[str, ...]) -> str:
    reply = counting_reply(list(reference_ids)) if call == "counting" else scoring_reply()
    return json.dumps(reply)


class BodyReplies:
    """The fake OpenAI server's responder (``--responder judge_replies:BodyReplies``): answers
    from the request body the pipeline and the bare loops send, read back through ``prompts``
    (the shipped ones by default). A body it cannot read (other prompts; a follow-up call, as
    these sessions always fit one call) is refused (HTTP 400), never guessed at."""

    def __init__(self, prompts: PromptSet | None = None) -> None:
        self.shown = RequestShown(prompts)

    def respond(self, body: dict[str, Any], headers: Mapping[str, str]) -> str:
        shown = self.shown.read_body(body)
        log_asked(shown.call, shown.question)
        return reply_text(shown.call, [ref.id for ref in shown.references])


def log_asked(call: str, question: str) -> None:
    """One line "<call> <question>" in the ask log, when ``RJ_BENCH_ASK_LOG`` names one (the
    question, because a request carries no session id; every generated question differs)."""
    path = os.environ.get(ASK_LOG_ENV)
    if path:
        _ask_log(path).write(f"{call} {' '.join(question.split())}\n")


@functools.cache
def _ask_log(path: str) -> IO[str]:
    """One line-buffered handle per server process, opened on first use."""
    return open(path, "a", buffering=1, encoding="utf-8")
