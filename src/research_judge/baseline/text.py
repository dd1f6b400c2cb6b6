"""Surface text for the baseline judge: sentences with their places, and content words.

Everything here is plain string work on the session's own text, so the judge's quotes are
slices of that text and verify exactly.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

# Common English function words: they carry no topic, so overlap on them means nothing.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves may might must
    shall one two many much however therefore thus often well like used use using""".split()  # noqa: SIM905 (a word list reads better as text)
)

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# A sentence ends at . ! or ? (and any closing quotes or brackets) followed by white space, or
# at a line break. Citation markers such as "[2]" after the full stop stay with their sentence.
_END = re.compile(r"[.!?][\"'”’)\]]*(?:\s*\[[^\]\n]{1,12}\])*(?=\s)|\n")
_MARKER = re.compile(r"\[[^\]\n]{1,12}\]")


@dataclass(frozen=True)
class Span:
    """A piece of a text: ``text == source[start:end]``."""

    start: int
    end: int
    text: str


def words(text: str) -> list[str]:
    """Lower-cased content words, citation markers and function words left out; a crude
    plural/verb suffix is dropped so "batteries" meets "battery" halfway."""
    out = []
    for word in _WORD.findall(_MARKER.sub(" ", text).casefold()):
        if word in STOPWORDS or (len(word) < 3 and not word.isdigit()):
            continue
        out.append(_stem(word))
    return out


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def sentences(text: str) -> list[Span]:
    """The text's sentences, stripped of surrounding white space, empty ones dropped."""
    out: list[Span] = []
    start = 0
    for match in _END.finditer(text):
        _add(out, text, start, match.end())
        start = match.end()
    _add(out, text, start, len(text))
    return out


def _add(out: list[Span], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    first = start + (len(piece) - len(piece.lstrip()))
    out.append(Span(first, first + len(stripped), stripped))


def recall(needles: list[str], haystack: AbstractSet[str]) -> float:
    """Share of ``needles`` (content words) found in ``haystack``; 0 when there are none."""
    if not needles:
        return 0.0
    return sum(1 for w in needles if w in haystack) / len(needles)


def bigrams(items: list[str]) -> list[tuple[str, str]]:
    return list(itertools.pairwise(items))
