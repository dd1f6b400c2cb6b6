"""ExpertQA's original files as research-judge sessions, with the experts' labels beside them.

ExpertQA (Malaviya et al., NAACL 2024) holds, per question, the answers of several systems
(``answers.<system>``): the answer text with ``[n]`` citation markers and per-claim expert
annotations (``claims[]``: ``claim_string``, ``evidence`` = the cited passages as
``"[n] URL\\n\\npassage"``, ``support``, ...), plus the answer's ``usefulness``.

An answer becomes a session when every evidence item it lists carries the passage text (some
systems list bare URLs: there is nothing for a judge to read). Its references are the cited
passages, one per marker number, with id ``"n"`` (so ``[n]`` in the answer names it) and the URL.
Every answer left out is counted with its reason; a malformed line is an error naming the file
and line, and the other lines are still read.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILES = ("rand_val.jsonl", "domain_val.jsonl")
_EVIDENCE = re.compile(r"\[(\d+)\]\s+(\S+)[ \t]*\n\n(.*)\Z", re.DOTALL)
SUPPORT_LABELS = ("Complete", "Partial", "Incomplete", "Missing", "N/A")


class ExpertQAError(ValueError):
    """A line of an ExpertQA file that is not in its published shape."""


@dataclass(frozen=True)
class ExpertClaim:
    """One claim as the expert saw it: its sentence, the markers it cites and the label."""

    text: str
    support: str | None  # one of SUPPORT_LABELS, or None when the expert left it empty
    cited: tuple[str, ...]  # the marker numbers of its evidence


@dataclass(frozen=True)
class Item:
    """One answer turned into a session (``session``) with the expert's annotations."""

    session: dict[str, Any]
    system: str
    usefulness: str | None
    claims: tuple[ExpertClaim, ...]

    @property
    def id(self) -> str:
        return str(self.session["id"])


@dataclass
class Reading:
    items: list[Item] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    answers: int = 0


def read_dir(directory: Path) -> Reading:
    """Every answer of the ExpertQA files found in ``directory`` (``FILES``; at least one)."""
    paths = [directory / name for name in FILES if (directory / name).is_file()]
    if not paths:
        raise FileNotFoundError(
            f"{directory}: none of {', '.join(FILES)} found (point --data at ExpertQA's data/lfqa)"
        )
    reading = Reading()
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            read_lines(handle, path.stem, reading)
    return reading


def read_lines(lines: Iterable[str], name: str, reading: Reading | None = None) -> Reading:
    """Read ExpertQA lines (``name`` labels the session ids and error messages)."""
    out = reading if reading is not None else Reading()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            items, skipped = _record(record, name, number)
        except (ValueError, ExpertQAError, KeyError, TypeError, AttributeError) as exc:
            out.errors.append(f"{name} line {number}: {exc}")
            continue
        out.items.extend(items)
        out.skipped.update(skipped)
        out.answers += len(items) + sum(skipped.values())
    return out


def _record(record: Any, name: str, number: int) -> tuple[list[Item], Counter[str]]:
    if not isinstance(record, dict):
        raise ExpertQAError("not a JSON object")
    question = record.get("question")
    answers = record.get("answers")
    if not isinstance(question, str) or not question.strip():
        raise ExpertQAError("no question")
    if not isinstance(answers, dict):
        raise ExpertQAError("no answers object")
    items: list[Item] = []
    skipped: Counter[str] = Counter()
    for system in sorted(answers):
        answer = answers[system]
        if not isinstance(answer, dict):
            raise ExpertQAError(f"answers.{system} is not an object")
        item, why = _answer(answer, question, system, f"{name}-{number:03d}-{system}")
        if item is None:
            skipped[why] += 1
        else:
            items.append(item)
    return items, skipped


def _answer(
    answer: dict[str, Any], question: str, system: str, session_id: str
) -> tuple[Item | None, str]:
    text = answer.get("answer_string")
    claims_in = answer.get("claims")
    if not isinstance(text, str) or not text.strip():
        return None, "no answer text"
    if not isinstance(claims_in, list):
        raise ExpertQAError(f"answers.{system}.claims is not a list")
    passages: dict[str, tuple[str, str]] = {}
    claims: list[ExpertClaim] = []
    bare = 0
    for n, claim in enumerate(claims_in):
        if not isinstance(claim, dict) or not isinstance(claim.get("claim_string"), str):
            raise ExpertQAError(f"answers.{system}.claims[{n}] has no claim_string")
        evidence = claim.get("evidence") or []
        if not isinstance(evidence, list):
            raise ExpertQAError(f"answers.{system}.claims[{n}].evidence is not a list")
        cited = []
        for item in evidence:
            match = _EVIDENCE.match(item) if isinstance(item, str) else None
            if match is None or not match.group(3).strip():
                bare += 1
                continue
            marker, url, passage = match.groups()
            cited.append(marker)
            # The same marker cites one page; keep the longest passage shown for it.
            if marker not in passages or len(passage) > len(passages[marker][1]):
                passages[marker] = (url, passage)
        support = claim.get("support")
        if support is not None and support not in SUPPORT_LABELS:
            raise ExpertQAError(f"answers.{system}.claims[{n}].support {support!r} is unknown")
        claims.append(ExpertClaim(claim["claim_string"], support, tuple(cited)))
    if bare:
        return None, "evidence without passage text"
    if not passages:
        return None, "no cited evidence"
    usefulness = answer.get("usefulness")
    session = {
        "id": session_id,
        "question": question,
        "answer": text,
        "trajectory": [
            {"id": marker, "url": url, "content": passage}
            for marker, (url, passage) in sorted(passages.items(), key=lambda kv: int(kv[0]))
        ],
        "metadata": {"system": system, "usefulness": usefulness},
    }
    return Item(
        session, system, usefulness if isinstance(usefulness, str) else None, tuple(claims)
    ), ""
