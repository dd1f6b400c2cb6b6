"""Citations a provider attached to the answer (Anthropic ``citations``, OpenAI ``url_citation``).

Converters carry them into the session as ``citations``: each names the span of the answer it
annotates (``start``/``end`` character offsets, when the provider gave them) and the reference it
points at, resolved at conversion time by url or title; ``reference`` is null when the cited
source is not in the trajectory (the citation audit counts that as fabricated).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field


class AnswerCitation(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=0)
    reference: str | None = None
    url: str | None = None
    title: str | None = None
    cited_text: str | None = None


def normalise_url(url: str) -> str:
    """The form two urls of one page share: no fragment, lower-case scheme and host, no
    trailing slash, ``www.`` dropped, http taken as https."""
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    scheme = "https" if parts.scheme.lower() in ("http", "https") else parts.scheme.lower()
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, host, path, parts.query, ""))


def urls_of(reference: Mapping[str, Any]) -> list[str]:
    """A reference's url and, for a list of search results, each result's url (``urls``)."""
    found = [reference.get("url"), *(reference.get("urls") or [])]
    return [u for u in found if isinstance(u, str) and u]


class ReferenceIndex:
    """Finds the trajectory reference a url or title points at."""

    def __init__(self, references: Iterable[Mapping[str, Any]]) -> None:
        self.ids: set[str] = set()
        self.by_url: dict[str, str] = {}
        self.by_title: dict[str, str] = {}
        refs = list(references)
        for ref in refs:
            ref_id = str(ref["id"])
            self.ids.add(ref_id)
            title = ref.get("title")
            if isinstance(title, str) and title.strip():
                self.by_title.setdefault(title.strip().casefold(), ref_id)
        # A reference's own url wins over a search-result list that merely mentions the page.
        for ref in refs:
            if isinstance(ref.get("url"), str) and ref["url"]:
                self.by_url.setdefault(normalise_url(ref["url"]), str(ref["id"]))
        for ref in refs:
            for url in urls_of(ref):
                self.by_url.setdefault(normalise_url(url), str(ref["id"]))

    def for_url(self, url: str) -> str | None:
        return self.by_url.get(normalise_url(url))

    def find(self, url: str | None = None, title: str | None = None) -> str | None:
        if url and (found := self.for_url(url)):
            return found
        if title:
            return self.by_title.get(title.strip().casefold())
        return None
