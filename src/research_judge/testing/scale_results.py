"""Results files of any size, shaped like what ``grade`` writes, for tests and benchmarks at scale.

``write_results(path, n)`` writes ``n`` result lines (about 4-5 kB each, as real ones are: the
call-1 verdicts with their quotes, the scores' reasoning, the citation audit, context
diagnostics). Every line validates as a ``results.model.Result``. The mix is fixed by ``seed``:
passes and fails, a few judge errors of several kinds, unknown costs, sessions with references
or claims no call could judge, results without a citation audit, a second judge on a sliver of
the sessions, and (with ``repeats``) ``grade --repeats K`` samples.

``variant`` moves the numbers: a baseline and a current run of the same ids (``variant=0`` and
``1``) differ session by session as two real runs do, so ``compare`` has regressions, fixes and
movers to find. ``skip_every`` leaves out every k-th id (sessions only in the other run).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_WORDS = (
    "battery",
    "cold",
    "heater",
    "cabin",
    "range",
    "route",
    "depot",
    "charger",
    "grid",
    "load",
    "axle",
    "motor",
    "freight",
    "fleet",
    "driver",
    "report",
    "study",
    "sensor",
    "energy",
    "loss",
    "winter",
    "pack",
    "cell",
    "summer",
    "trial",
    "capacity",
    "voltage",
)

JUDGE_MAIN: dict[str, Any] = {
    "provider": "openai",
    "model": "gpt-4o-mini",
    "prompts": {
        "counting": {"name": "counting", "sha256": "1" * 64},
        "scoring": {"name": "scoring", "sha256": "2" * 64},
        "reask": {"name": "reask", "sha256": "3" * 64},
    },
    "fingerprint": "a" * 64,
}
JUDGE_OTHER: dict[str, Any] = {**JUDGE_MAIN, "model": "gpt-4o", "fingerprint": "b" * 64}

_ERRORS = (
    ("api", "the provider failed the request after 6 attempts: HTTP 503"),
    ("judge_output", "every reply broke the wire format: counting: missing verdict for r2"),
    ("context", "the session does not fit the judge's window (131072 tokens)"),
)


def session_id(i: int) -> str:
    return f"sess-{i:07d}"


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def result_line(i: int, *, seed: int = 0, variant: int = 0, repeats: int = 0) -> dict[str, Any]:
    """Result number ``i`` as a dict, the same for the same arguments."""
    base = random.Random(f"{seed}:{i}")  # what the session is: its size, its question
    rng = random.Random(f"{seed}:{i}:{variant}")  # how this run judged it
    refs = base.randint(2, 6)
    claims = base.randint(2, 8)
    out: dict[str, Any] = {
        "session_id": session_id(i),
        "judge": JUDGE_OTHER if rng.random() < 0.002 else JUDGE_MAIN,
        "question": f"What {_text(base, 6)}?",
        "metadata": {"agent_version": f"v{variant + 1}", "domain": base.choice(_WORDS)},
    }
    context: dict[str, Any] = {
        "trajectory_tokens": refs * base.randint(200, 1200),
        "references": refs,
        "references_judged": refs,
        "largest_reference_tokens": base.randint(200, 1200),
        "duplicate_references": int(base.random() < 0.05),
        "used_token_share": None,
        "counting_calls": 1 + int(base.random() < 0.03),
        "split": base.random() < 0.03,
        "not_judged_references": [],
        "not_judged_claims": [],
        "not_judged_reasons": [],
    }
    if base.random() < 0.01:
        context["not_judged_references"] = [f"r{refs}"]
        context["not_judged_claims"] = [{"id": "c1", "claim": _text(base, 8)}]
        context["not_judged_reasons"] = ["r6 is larger than the judge's window"]
    cost = None if rng.random() < 0.01 else round(rng.uniform(0.0005, 0.004), 6)
    out["usage"] = {
        "input_tokens": rng.randint(2500, 9000),
        "cached_input_tokens": rng.choice((0, 0, 1024)),
        "output_tokens": rng.randint(400, 2200),
        "calls": 2,
        "cache_hits": 0,
        "cost_usd": cost,
    }
    out["answer_stats"] = {"chars": base.randint(400, 3000), "words": base.randint(60, 500)}
    if rng.random() < 0.03:
        kind, message = rng.choice(_ERRORS)
        out |= {"error": message, "error_kind": kind, "verdict": None, "context": context}
        return out
    verdicts: list[dict[str, Any]] = []
    used = relevant = grounded = 0
    for r in range(1, refs + 1):
        rel = rng.random() < 0.8
        use = rel and rng.random() < 0.75
        relevant += rel
        used += use
        for check, answer in (("relevant", rel), ("used", use)):
            verdicts.append(
                {
                    "id": f"r{r}",
                    "check": check,
                    "answer": "yes" if answer else "no",
                    "evidence": _text(rng, 14),
                    "evidence_verified": True,
                }
            )
    for c in range(1, claims + 1):
        ok = rng.random() < 0.85
        grounded += ok
        verdicts.append(
            {
                "id": f"c{c}",
                "check": "grounded",
                "answer": "yes" if ok else "no",
                "evidence": _text(rng, 16),
                "evidence_verified": rng.random() < 0.97,
                "claim": _text(rng, 10),
                "source": f"r{rng.randint(1, refs)}" if ok else None,
                "claim_verified": True,
            }
        )
    ratios: dict[str, float | None] = {
        "relevance": relevant / refs,
        "utilization": used / relevant if relevant else None,
        "grounding": grounded / claims,
    }
    scores = {
        name: {
            "score": rng.choice((1, 2, 2, 3, 3, 3)),
            "reasoning": _text(rng, 25),
            "evidence": _text(rng, 12),
        }
        for name in ("effectiveness", "fluff", "structure")
    }
    failed = (ratios["grounding"] or 0) < 0.7 or any(s["score"] == 1 for s in scores.values())
    context["used_token_share"] = round(used / refs, 4)
    quotes = sum(1 for v in verdicts if v["evidence"])
    verified = sum(1 for v in verdicts if v["evidence_verified"])
    out |= {
        "ratios": ratios,
        "scores": scores,
        "verdicts": verdicts,
        "verdict": "fail" if failed else "pass",
        "verdict_reasons": ["grounding 0.50 is below its floor 0.70"] if failed else [],
        "error": None,
        "error_kind": None,
        "evidence": {"verified": verified, "total": quotes, "share": verified / quotes},
        "context": context,
    }
    if base.random() > 0.02:  # a few results predate the citation audit
        out["citations"] = _audit(rng, claims, refs)
    if repeats:
        out["repeats"] = _repeats(rng, repeats, out)
    return out


def _audit(rng: random.Random, claims: int, refs: int) -> dict[str, Any]:
    statuses = ("correct", "correct", "correct", "uncited", "misattributed", "ungrounded")
    rows: list[dict[str, Any]] = [
        {
            "id": f"c{c}",
            "status": rng.choice(statuses),
            "cited": [f"r{rng.randint(1, refs)}"],
            "source": f"r{rng.randint(1, refs)}",
        }
        for c in range(1, claims + 1)
    ]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    correct = counts.get("correct", 0)
    return {
        "precision": correct / claims,
        "recall": round(rng.random(), 4),
        "counts": counts,
        "citations": claims,
        "fabricated_citations": 0,
        "claims": rows,
    }


def _repeats(rng: random.Random, k: int, result: dict[str, Any]) -> dict[str, Any]:
    samples = []
    for _ in range(k):
        flip = rng.random() < 0.1
        verdict = result["verdict"]
        if flip:
            verdict = "pass" if verdict == "fail" else "fail"
        samples.append(
            {
                "verdict": verdict,
                "ratios": result["ratios"],
                "scores": {n: s["score"] for n, s in result["scores"].items()},
                "error": None,
            }
        )
    return {"k": k, "aggregation": "majority verdict, median ratios and scores", "samples": samples}


def result_lines(
    n: int,
    *,
    seed: int = 0,
    variant: int = 0,
    repeats: int = 0,
    skip_every: int = 0,
    pool: int = 0,
) -> Iterator[str]:
    """``pool``: past the first ``pool`` sessions, session ``i`` is session ``i % pool`` under
    its own id (a million lines in a minute instead of an hour; the mix stays the same)."""
    made: list[str] = []
    for i in range(n):
        if skip_every and i % skip_every == skip_every - 1:
            if pool and i < pool:
                made.append("")  # keeps made[k] the line of session k
            continue
        if pool and i >= pool:
            template = made[i % pool]
            if template:
                yield template.replace(_id_key(i % pool), _id_key(i), 1)
                continue
        result = result_line(i, seed=seed, variant=variant, repeats=repeats)
        line = json.dumps(result, ensure_ascii=False) + "\n"
        if pool and i < pool:
            made.append(line)
        yield line


def _id_key(i: int) -> str:
    return f'{{"session_id": "{session_id(i)}"'


def write_results(
    path: str | Path,
    n: int,
    *,
    seed: int = 0,
    variant: int = 0,
    repeats: int = 0,
    skip_every: int = 0,
    pool: int = 0,
) -> Path:
    """Write ``n`` result lines (fewer with ``skip_every``) to ``path``; returns the path."""
    p = Path(path)
    lines = result_lines(
        n, seed=seed, variant=variant, repeats=repeats, skip_every=skip_every, pool=pool
    )
    with p.open("w", encoding="utf-8") as handle:
        handle.writelines(lines)
    return p
