"""Reading a rendered HTML report back: element ids, tags, outward references, visible text."""

from __future__ import annotations

from html.parser import HTMLParser

# The section ids docs/compare-and-report.md promises as stable.
SECTIONS = ("headline", "criteria", "agreement", "worst", "regressions", "errors", "cost", "judge")


class PageScan(HTMLParser):
    """Collects element ids, tags, outward references and visible text of an HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.tags: set[str] = set()
        self.external: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name == "id" and value:
                self.ids.append(value)
            outward = name in {"src", "href", "srcset", "action", "xlink:href", "poster", "data"}
            if outward and value and not value.startswith("#"):
                self.external.append(f"{tag}[{name}]={value}")

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def visible_text(self) -> str:
        return " ".join(" ".join(self.text).split())


def scan(html: str) -> PageScan:
    parser = PageScan()
    parser.feed(html)
    parser.close()
    return parser
