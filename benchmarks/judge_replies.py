"""Benchmark data: small but realistic sessions, and the well-formed judge replies that fit them.

Each generated reference ``rN`` contains the sentence "Fact N is true here." inside ordinary
prose, and each answer states "Fact N is true [rN]." for every reference plus one invented
claim, so the replies built here quote text that really occurs: evidence verification does its
full work, and the verdicts mix yes and no as a real judge's would.

The same replies serve two clients: ``respond`` answers the fake OpenAI server and
``InstantClient`` answers without HTTP, from the request's material. ``respond`` sees only the
raw body, exactly as the bare baseline loops post it (no material header), so it finds the
reference ids on the counting prompt's line "The trajectory holds N references: r1, r2.": a
benchmark reading its own generated prompts, where the fake judge of ``research_judge.testing``
reads structured material instead.

``respond`` also logs every request it answers when ``RJ_BENCH_ASK_LOG`` names a file: one line
"<call> <sha256 of the first user message>" so a benchmark can tell which sessions were sent.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
from pathlib import Path
from typing import IO, Any

MODEL = "gpt-4o-mini"  # the judge model every benchmark names (the fake server ignores it)
ASK_LOG_ENV = "RJ_BENCH_ASK_LOG"
INVENTED_CLAIM = "Fact 99 is invented"
COUNTING_SCHEMA_NAME = "counting_verdicts"

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


def respond(body: dict[str, Any]) -> str:
    """Responder for the fake OpenAI server (``--responder judge_replies:respond``)."""
    messages = body.get("messages") or []
    first_user = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name")
    call = "counting" if name == COUNTING_SCHEMA_NAME else "scoring"
    _log(call, str(first_user))
    reply = (
        counting_reply(reference_ids_in(str(first_user))) if call == "counting" else scoring_reply()
    )
    return json.dumps(reply)


_LISTING = "The trajectory holds"


def reference_ids_in(prompt: str) -> list[str]:
    """The reference ids a rendered counting prompt lists ([] for a session without any)."""
    for line in prompt.splitlines():
        if line.startswith(_LISTING) and ":" in line:
            return [part.strip(" .") for part in line.split(":", 1)[1].split(",")]
    return []


def _log(call: str, first_user: str) -> None:
    path = os.environ.get(ASK_LOG_ENV)
    if path:
        _ask_log(path).write(f"{call} {prompt_hash(first_user)}\n")


@functools.cache
def _ask_log(path: str) -> IO[str]:
    """One line-buffered handle per server process, opened on first use."""
    return open(path, "a", buffering=1, encoding="utf-8")


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
