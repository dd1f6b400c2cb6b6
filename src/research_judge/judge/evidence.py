"""Evidence verification: does each quote the judge gives really occur where it must?

A judge that invents quotes looks exactly like one that read carefully, unless the quotes are
checked. Matching tolerates case, whitespace, quote styles and minor punctuation, and accepts an
ellipsis between fragments that appear in order; it does not tolerate changed words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from ..sessions.model import Session
from .verdicts import Verdict

# A number keeps its sign, decimal point and thousands separators, so "5 million" is not found in
# "1.5 million", nor "20 °C" in "-20 °C"; everything else that is not a word character separates.
_WORD = re.compile(r"(?:(?<!\w)[-\u2212])?\d+(?:[.,]\d+)*\w*|\w+")
_ELLIPSIS = re.compile(r"\.\.\.|…|\[\.\.\.\]")


def _normalise(text: str) -> str:
    """Width- and case-folded, with the unicode minus as a hyphen: the start of both forms."""
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2212", "-")


def fold(text: str) -> str:
    """Case-, width- and punctuation-insensitive form: words separated by single spaces."""
    return " ".join(_WORD.findall(_normalise(text)))


def occurs_in(quote: str, folded_sources: Iterable[str]) -> bool:
    """True when every ellipsis-separated fragment of ``quote`` occurs, in order, in a source."""
    fragments = [fold(part) for part in _ELLIPSIS.split(quote)]
    fragments = [f for f in fragments if f]
    if not fragments:
        return False
    for source in folded_sources:
        # Pad with spaces so fragments match on word boundaries ("cat" is not in "concatenate").
        padded, position = f" {source} ", 0
        for fragment in fragments:
            found = padded.find(f" {fragment} ", position)
            if found < 0:
                break
            position = found + len(fragment) + 1
        else:
            return True
    return False


class _Text:
    """One session text, prepared for quote lookups.

    Most quotes are copied verbatim, so a cheap form (casefolded, whitespace-split tokens) is
    tried first; the full ``fold`` of a long reference is only computed when that fails. A hit on
    whole whitespace tokens is always a hit on the folded text too, so the result is the same.
    """

    __slots__ = ("_folded", "_light", "raw")

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self._light = f" {_light(raw)} "
        self._folded: str | None = None

    def contains_verbatim(self, light_quote: str | None) -> bool:
        """The cheap test, given ``_light_quote(quote)``: whole whitespace tokens, casefolded."""
        return light_quote is not None and light_quote in self._light

    @property
    def folded(self) -> str:
        """``fold(raw)``, computed on first use."""
        if self._folded is None:
            self._folded = fold(self.raw)
        return self._folded


# Characters ``fold`` always treats as separators; dropping them keeps the cheap form consistent
# with the full one. "." and "," only count when a space follows (inside "1.5" they matter).
_LIGHT_SEPARATORS = str.maketrans(dict.fromkeys("\"'“”‘’()[]{}<>;:!?…—–*|/\\\n\r\t", " "))


def _light_quote(quote: str) -> str | None:
    """The padded cheap form of a quote, or None when only the full fold can judge it."""
    if _ELLIPSIS.search(quote):
        return None
    light = _light(quote)
    return f" {light} " if light else None


def _light(text: str) -> str:
    text = _normalise(text).translate(_LIGHT_SEPARATORS) + " "
    return " ".join(text.replace(". ", " ").replace(", ", " ").split())


@dataclass(frozen=True)
class CheckedVerdict:
    verdict: Verdict
    evidence_verified: bool
    claim_verified: bool | None  # None for relevant/used verdicts, which quote no claim


class EvidenceChecker:
    """Folds a session's texts once, then checks each verdict against the right ones."""

    def __init__(self, session: Session) -> None:
        self._answer = _Text(session.answer)
        self._refs = {
            # A provider's excerpts are shown with the reference, so a quote from them counts.
            ref.id: _Text("\n".join(filter(None, (ref.title, ref.content, *ref.excerpt_texts))))
            for ref in session.trajectory
        }
        self._everything = [self._answer, _Text(session.question), *self._refs.values()]

    def check(self, verdict: Verdict) -> CheckedVerdict:
        return CheckedVerdict(verdict, self._evidence_ok(verdict), self._claim_ok(verdict))

    def _evidence_ok(self, v: Verdict) -> bool:
        if not v.answer:
            # A "no" quotes the closest passage checked: it must come from the session somewhere.
            return _found(v.evidence, self._everything)
        if v.check == "relevant":
            return _found(v.evidence, [self._refs[v.id]])
        if v.check == "used":
            return _found(v.evidence, [self._refs[v.id], self._answer])
        # grounded "yes": the quote must come from the reference named as its source.
        source = self._refs.get(v.source or "")
        return source is not None and _found(v.evidence, [source])

    def _claim_ok(self, v: Verdict) -> bool | None:
        if v.check != "grounded":
            return None
        return bool(v.claim) and _found(v.claim or "", [self._answer])


def _found(quote: str, texts: list[_Text]) -> bool:
    # Cheap test on every text first; only when no text has the quote verbatim are the texts
    # folded (each once per checker, lazily) and the quote folded (once, not once per text).
    light = _light_quote(quote)
    return any(t.contains_verbatim(light) for t in texts) or occurs_in(
        quote, (t.folded for t in texts)
    )
