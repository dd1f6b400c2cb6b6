"""Sessions of any size with a known truth, and a judge that answers them truthfully.

For tests and benchmarks of long-session grading (``benchmarks/bench_long_sessions.py``): the
sessions are generated in code (never stored), and ``truthful_reply`` answers a rendered
counting or scoring prompt from what the prompt shows, so a judge built on it gets every verdict
right whatever packs, parts or order the planner chose. Ratios graded through it must equal
``LongSession.truth``.

The construction: reference ``rK`` is relevant when its content carries ``RELEVANT_MARK``; it is
used when the answer cites ``[rK]``; claim ``cN`` is the answer's N-th line, grounded when some
reference's content holds the line's fact sentence.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from research_judge.results.model import Ratios

RELEVANT_MARK = "This page bears directly on winter range."
_WORDS = [
    *("battery", "cell", "pack", "cold", "heater", "cabin", "range", "route", "depot"),
    *("charger", "grid", "load", "axle", "motor", "torque", "freight", "mile", "hour"),
    *("summer", "test", "fleet", "driver", "report", "study", "sensor", "energy", "loss"),
]
MAX_FACTS = 20
"""Claims per answer stay few, as in real answers: only the first 20 used references are cited
with a fact of their own."""


@dataclass(frozen=True)
class LongSession:
    """One generated session (a contract-section-1 dict) and the ratios a correct judge gives."""

    session: dict[str, Any]
    truth: Ratios


def _filler(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 14))).capitalize()
        words.append(sentence + ".")
        size += len(sentence) + 2
        if rng.random() < 0.15:
            words.append("\n\n")
    return " ".join(words)[:chars]


def make_session(
    sid: str,
    references: int,
    chars_per_reference: int,
    *,
    seed: int = 0,
    fact_at: float = 0.5,
) -> LongSession:
    """``references`` references of about ``chars_per_reference`` characters each.

    Two references in three are relevant, one in four is used; the answer states one fact per
    used reference (grounded in it) and one fact no reference holds. ``fact_at`` places the
    marker and fact sentences within each content (0 start, 1 end), to land them in a late part
    of a reference that is split.
    """
    rng = random.Random(f"{sid}:{seed}")
    trajectory = []
    lines: list[str] = []
    relevant = used = 0
    for k in range(1, references + 1):
        is_relevant = k % 3 != 0
        is_used = k % 4 == 1
        relevant += is_relevant
        used += is_used
        body = _filler(rng, chars_per_reference)
        inserts = []
        if is_relevant:
            inserts.append(RELEVANT_MARK)
        if is_used and len(lines) < MAX_FACTS:
            inserts.append(f"Fact {k} is {1000 + k * 7}.")
            lines.append(f"Fact {k} is {1000 + k * 7} [r{k}].")
        elif is_used:
            lines[-1] = lines[-1][:-1] + f" [r{k}]."  # cited beside the last fact: used too
        cut = body.rfind(" ", 0, int(len(body) * fact_at)) + 1
        content = body[:cut] + " ".join(inserts) + (" " if inserts else "") + body[cut:]
        trajectory.append(
            {
                "id": f"r{k}",
                "title": f"Page {k}",
                "url": f"https://example.org/{k}",
                "content": content,
            }
        )
    lines.append("Fact 0 is 999 [r1].")  # no reference states it: not grounded
    claims = len(lines)
    session = {
        "id": sid,
        "question": "What limits the range of electric trucks in winter?",
        "answer": "\n".join(lines),
        "trajectory": trajectory,
        "metadata": {"references": references},
    }
    n = references
    truth = Ratios(
        relevance=round(relevant / n, 4) if n else None,
        utilization=round(used / n, 4) if n else None,
        grounding=round((claims - 1) / claims, 4),
    )
    return LongSession(session, truth)


# --- the truthful judge --------------------------------------------------------------------

_NONCE = re.compile(r"<<question (\S+)>>")


def truthful_reply(schema_name: str, prompt: str) -> dict[str, Any]:
    """The correct reply to one rendered request (its user message)."""
    if schema_name != "counting_verdicts":
        return {
            "scores": [
                {
                    "criterion": c,
                    "reasoning": "tally: 0 padded sentences",
                    "evidence": "Fact",
                    "score": 3,
                }
                for c in ("effectiveness", "fluff", "structure")
            ]
        }
    found = _NONCE.search(prompt)
    nonce = found.group(1) if found else ""
    answer = _between(prompt, f"<<answer {nonce}>>\n", f"\n<</answer {nonce}>>")
    tag = re.escape(nonce)
    pattern = rf'<<reference id="([^"]*)" {tag}>>\n(.*?)\n<</reference id="\1" {tag}>>'
    refs = re.findall(pattern, prompt, re.DOTALL)
    contents = {rid: body.split("content:\n", 1)[-1] for rid, body in refs}
    if f"<<claims {nonce}>>" in prompt:
        listed = _between(prompt, f"<<claims {nonce}>>\n", f"<</claims {nonce}>>")
        claims = [tuple(line.split(": ", 1)) for line in listed.splitlines() if ": " in line]
    else:
        claims = [(f"c{i}", line) for i, line in enumerate(answer.splitlines(), start=1) if line]
    verdicts: list[dict[str, Any]] = []
    for rid, content in contents.items():
        relevant = RELEVANT_MARK in content
        verdicts.append(
            _verdict(rid, "relevant", relevant, RELEVANT_MARK if relevant else content[:40])
        )
        cited = next((line for line in answer.splitlines() if f"[{rid}]" in line), None)
        verdicts.append(_verdict(rid, "used", cited is not None, cited or content[:40]))
    for cid, text in claims:
        fact = text.split(" [", 1)[0] + "."
        source = next((rid for rid, content in contents.items() if fact in content), None)
        verdict = _verdict(cid, "grounded", source is not None, fact[:-1] if source else text)
        verdict.update(claim=text, source=source)
        verdicts.append(verdict)
    return {"verdicts": verdicts}


def _verdict(vid: str, check: str, yes: bool, evidence: str) -> dict[str, Any]:
    return {
        "id": vid,
        "check": check,
        "answer": "yes" if yes else "no",
        "evidence": " ".join(evidence.split()),
        "claim": None,
        "source": None,
    }


def _between(text: str, start: str, end: str) -> str:
    head = text.find(start)
    if head < 0:
        return ""
    head += len(start)
    tail = text.find(end, head)
    return text[head:] if tail < 0 else text[head:tail]


def openai_body_reply(body: dict[str, Any]) -> str:
    """``truthful_reply`` for a Chat Completions body (the fake server's responder)."""
    import json

    messages = body.get("messages") or []
    prompt = next((m["content"] for m in messages if m.get("role") == "user"), "")
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name") or ""
    if not name and body.get("tools"):
        name = body["tools"][0]["function"]["name"]
    return json.dumps(truthful_reply(name, prompt))
