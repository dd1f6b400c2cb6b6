"""The citation audit: the answer's own citations checked against the judge's grounded verdicts.

Research answers cite their sources. This module finds the citations in code, ties each claim the
judge quoted to the citations made for it, and compares them with the judge's verdict on that
claim (grounded or not, and by which reference).

Citations found in the answer text:
- bracket markers naming reference ids (``[r2]``, ``[r1, r3]``, ``[call_a1]``);
- numbered markers ``[1]``: through a source list or footnote definitions at the end of the
  answer (``[1] https://...`` or ``[1]: https://...``, matched to a reference by url), else the
  n-th reference of the trajectory;
- footnotes ``[^1]`` through their ``[^1]: ...`` definitions;
- markdown links ``[text](https://...)`` and bare urls, matched to a reference by url;
- provider annotations carried over by ``convert`` (``session.citations``), on their answer span.
A citation that points at nothing in the trajectory is *fabricated*.

A claim's citations are those inside the sentence(s) that hold it (markers written right after
the sentence's full stop count for it), and annotations overlapping it. Each located claim gets
one status:

- ``correct``: cited, the judge found it grounded, and its source is among the cited;
- ``misattributed``: cited, grounded, but by a reference the answer does not cite for it;
- ``unsupported``: cited, and the judge found no reference supporting it;
- ``fabricated``: cites something that is not in the trajectory (checked first);
- ``uncited``: grounded but cited nowhere;
- ``ungrounded``: neither cited nor grounded (a grounding problem, not a citation one).

``precision`` = correct / cited claims (correct + misattributed + unsupported + fabricated):
of the claims the answer cites, the share cited to a reference that supports them.
``recall`` = correct / grounded claims: of the claims the trajectory supports, the share the
answer cites correctly. Either is ``None`` when its denominator is 0. Claims the audit cannot
find in the answer are counted as ``unlocated`` and left out of both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..sessions.citations import ReferenceIndex
from ..sessions.model import Session
from .evidence import fold
from .record import CitationSummary, ClaimCitation

STATUSES = ("correct", "misattributed", "unsupported", "fabricated", "uncited", "ungrounded")
_CITED = ("correct", "misattributed", "unsupported", "fabricated")

_URL = re.compile(r"https?://[^\s<>()\[\]\"']+")
_LINK = re.compile(r"\[([^\]\n]*)\]\((https?://[^\s)]+)\)")
_DEFINITION = re.compile(r"^[ \t]*\[(\^?[\w.-]+)\]:?[ \t]+(.*)$", re.MULTILINE)
_BRACKET = re.compile(r"\[([^\[\]\n()]{1,120})\](?!\()")
# A full stop followed by a lower-case word or an opening parenthesis ends an abbreviation
# ("11 a.m. to 8 p.m.") or is followed by the sentence's own citation ("... 8 p.m. (https://...)"),
# not a sentence.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[^\sa-z(])|\n+")
_TRAILING_MARKERS = re.compile(r"\s*(?:\[[^\]\n]{1,60}\](?!\())+")


@dataclass(frozen=True)
class Citation:
    start: int
    end: int
    target: str | None  # a reference id, or None when it points outside the trajectory
    written: str  # as it appears in the answer (or the annotation's url/title)


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    grounded: bool
    source: str | None


@dataclass
class ClaimAudit:
    id: str
    status: str  # one of STATUSES, or "unlocated"
    cited: list[str | None] = field(default_factory=list)
    source: str | None = None


@dataclass
class CitationAudit:
    claims: list[ClaimAudit]
    citations: int  # citations found in the answer (markers, links, urls, annotations)
    fabricated_citations: int  # of those, pointing at nothing in the trajectory

    @property
    def counts(self) -> dict[str, int]:
        out = dict.fromkeys((*STATUSES, "unlocated"), 0)
        for claim in self.claims:
            out[claim.status] += 1
        return out

    @property
    def precision(self) -> float | None:
        c = self.counts
        cited = sum(c[s] for s in _CITED)
        return round(c["correct"] / cited, 4) if cited else None

    @property
    def recall(self) -> float | None:
        grounded = sum(1 for a in self.claims if a.status != "unlocated" and a.source is not None)
        return round(self.counts["correct"] / grounded, 4) if grounded else None

    def summary(self) -> CitationSummary:
        """The audit as it goes into the result line."""
        return CitationSummary(
            precision=self.precision,
            recall=self.recall,
            counts=self.counts,
            citations=self.citations,
            fabricated_citations=self.fabricated_citations,
            claims=[
                ClaimCitation(id=c.id, status=c.status, cited=c.cited, source=c.source)
                for c in self.claims
            ],
        )


def find_citations(session: Session) -> list[Citation]:
    """Every citation of the answer, in order of position."""
    answer = session.answer
    index = ReferenceIndex(ref.model_dump() for ref in session.trajectory)
    ids = [ref.id for ref in session.trajectory]
    definitions, defined_spans = _definitions(answer, index)
    found: list[Citation] = []
    taken: list[tuple[int, int]] = list(defined_spans)

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for m in _LINK.finditer(answer):
        if free(m.start(), m.end()):
            found.append(Citation(m.start(), m.end(), index.for_url(m.group(2)), m.group(0)))
            taken.append(m.span())
    for m in _BRACKET.finditer(answer):
        if not free(m.start(), m.end()):
            continue
        for token in re.split(r"[,;]", m.group(1)):
            target, is_citation = _resolve_token(token.strip(), ids, definitions)
            if is_citation:
                found.append(Citation(m.start(), m.end(), target, f"[{token}]"))
                taken.append(m.span())
    for m in _URL.finditer(answer):
        url = m.group(0).rstrip(".,;:!?")
        if free(m.start(), m.start() + len(url)):
            found.append(Citation(m.start(), m.start() + len(url), index.for_url(url), url))
    for note in session.citations:
        if note.start is None or note.end is None:
            continue
        target = note.reference if note.reference in index.ids else None
        found.append(Citation(note.start, note.end, target, note.url or note.title or "annotation"))
    return sorted(found, key=lambda c: (c.start, c.end))


def audit_citations(session: Session, claims: Sequence[Claim]) -> CitationAudit:
    citations = find_citations(session)
    sentences = _sentences(session.answer)
    audits = []
    for claim in claims:
        scope = _locate(claim.text, session.answer, sentences)
        source = claim.source if claim.grounded else None
        if scope is None:
            audits.append(ClaimAudit(claim.id, "unlocated", [], source))
            continue
        start, end = scope
        cited = [c.target for c in citations if c.start < end and c.end > start]
        cited = list(dict.fromkeys(cited))  # each once, in order
        audits.append(ClaimAudit(claim.id, _status(cited, source), cited, source))
    fabricated = sum(1 for c in citations if c.target is None)
    return CitationAudit(audits, len(citations), fabricated)


def _status(cited: list[str | None], source: str | None) -> str:
    if not cited:
        return "uncited" if source is not None else "ungrounded"
    if None in cited:
        return "fabricated"
    if source is None:
        return "unsupported"
    return "correct" if source in cited else "misattributed"


def _definitions(
    answer: str, index: ReferenceIndex
) -> tuple[dict[str, str | None], list[tuple[int, int]]]:
    """Source-list and footnote definitions: label -> reference id (None: not in trajectory)."""
    out: dict[str, str | None] = {}
    spans = []
    for m in _DEFINITION.finditer(answer):
        label, rest = m.group(1), m.group(2)
        url = _URL.search(rest)
        if url is None:
            continue
        out[label] = index.for_url(url.group(0).rstrip(".,;:!?"))
        spans.append(m.span())
    return out, spans


def _resolve_token(
    token: str, ids: list[str], definitions: dict[str, str | None]
) -> tuple[str | None, bool]:
    """(reference id or None, whether the token is a citation at all: "[sic]" is not)."""
    if token in ids:
        return token, True
    if token in definitions:
        return definitions[token], True
    if token.startswith("^"):
        return None, True  # a footnote with no definition
    if token.isdigit():
        n = int(token)
        return (ids[n - 1] if 1 <= n <= len(ids) else None), True
    # Looks like an id (one word with a digit: r7, call_x9) but names nothing in the trajectory;
    # "[sic]" or "[see 2 below]" is not a citation.
    return None, " " not in token and any(ch.isdigit() for ch in token)


def _sentences(answer: str) -> list[tuple[int, int]]:
    """Sentence spans; markers right after a full stop belong to the sentence before it."""
    spans, start = [], 0
    for m in _BOUNDARY.finditer(answer):
        end = m.start()
        trailing = _TRAILING_MARKERS.match(answer, m.start())
        if trailing is not None and trailing.end() > end:
            end = trailing.end()
            if end > m.end():
                spans.append((start, end))
                start = end
                continue
        spans.append((start, end))
        start = m.end()
    spans.append((start, len(answer)))
    return [(s, e) for s, e in spans if answer[s:e].strip()]


def _locate(claim: str, answer: str, sentences: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The span of the sentence(s) holding the claim, or None when it is not in the answer."""
    at = answer.find(claim)
    if at < 0:
        at = answer.casefold().find(claim.casefold())
    if at >= 0:
        end = at + len(claim)
        touched = [(s, e) for s, e in sentences if s < end and e > at]
        if touched:
            return touched[0][0], touched[-1][1]
        return at, end
    # Not verbatim (the judge tidied punctuation or spacing): the sentence holding its words.
    wanted = f" {fold(claim)} "
    if wanted.strip():
        for s, e in sentences:
            if wanted in f" {fold(answer[s:e])} ":
                return s, e
    return None
