"""Citations a provider attached to the answer (Anthropic ``citations``, OpenAI ``url_citation``).

Converters carry them into the session as ``citations``: each names the span of the answer it
annotates (``start``/``end`` character offsets, when the provider gave them) and the reference it
points at, resolved at conversion time by url or title; ``reference`` is null when the cited
source is not in the trajectory (the citation audit counts that as fabricated).
"""

from __future__ import annotations

import re
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


# Query parameters that only say how a reader got to a page (campaign, click and mail ids):
# the same page cited without them is the same page.
_TRACKING = frozenset(
    {"fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "igshid", "twclid"}
    | {"mc_cid", "mc_eid", "_hsenc", "_hsmi", "mkt_tok", "ref_src", "ref_url", "_ga", "_gl"}
)
# A url in free text (a tool's JSON result list, a page's links). JSON writers that escape "/"
# as "\/", and HTML that writes "&" as "&amp;", are read too (unescaped first).
URL_IN_TEXT = re.compile(r"https?://[^\s<>()\[\]{}\"'`\\]+", re.IGNORECASE)
_TRAILING = ".,;:!?"


def normalise_url(url: str) -> str:
    """The form two urls of one page share: no fragment, lower-case scheme and host, no
    trailing slash, ``www.`` dropped, http taken as https, tracking parameters (``utm_*``,
    ``fbclid``, ``gclid``, ...) dropped."""
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    scheme = "https" if parts.scheme.lower() in ("http", "https") else parts.scheme.lower()
    path = parts.path.rstrip("/")
    query = "&".join(
        pair
        for pair in parts.query.split("&")
        if pair and not _is_tracking(pair.partition("=")[0].lower())
    )
    return urlunsplit((scheme, host, path, query, ""))


def _is_tracking(key: str) -> bool:
    return key.startswith("utm_") or key in _TRACKING


def urls_in_text(text: str) -> list[str]:
    """Every http(s) url written in ``text``, in order (trailing punctuation left off)."""
    if "http" not in text.lower():
        return []
    text = text.replace("\\/", "/").replace("&amp;", "&")
    return [m.group(0).rstrip(_TRAILING) for m in URL_IN_TEXT.finditer(text)]


def urls_of(reference: Mapping[str, Any]) -> list[str]:
    """A reference's url and, for a list of search results, each result's url (``urls``)."""
    found = [reference.get("url"), *(reference.get("urls") or [])]
    return [u for u in found if isinstance(u, str) and u]


class ReferenceIndex:
    """Finds the trajectory reference a url or title points at.

    A url resolves, in this order, to the reference whose own ``url`` it is, to one whose
    search-result list (``urls``) holds it, and to the first reference whose text contains it
    (a news or search tool that returns a JSON list of articles with their links): only a url
    found nowhere in the trajectory resolves to nothing.
    """

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
        # A reference's own url wins over a search-result list that merely mentions the page,
        # and both over a url written somewhere in a reference's text.
        for ref in refs:
            if isinstance(ref.get("url"), str) and ref["url"]:
                self.by_url.setdefault(normalise_url(ref["url"]), str(ref["id"]))
        for ref in refs:
            for url in urls_of(ref):
                self.by_url.setdefault(normalise_url(url), str(ref["id"]))
        for ref in refs:
            content = ref.get("content")
            if isinstance(content, str):
                for url in urls_in_text(content):
                    self.by_url.setdefault(normalise_url(url), str(ref["id"]))

    def for_url(self, url: str) -> str | None:
        return self.by_url.get(normalise_url(url))

    def find(self, url: str | None = None, title: str | None = None) -> str | None:
        if url and (found := self.for_url(url)):
            return found
        if title:
            return self.by_title.get(title.strip().casefold())
        return None
