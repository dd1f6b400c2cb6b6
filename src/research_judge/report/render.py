"""Render a ``ReportData`` as one self-contained HTML page or as Markdown for CI comments.

HTML autoescapes every value (session text is data, never markup). Markdown has no autoescape,
so its environment escapes every ``{{ ... }}`` output through ``finalize`` instead: a template
cannot forget to escape a question or an evidence quote.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from .._format import NA, num, pct
from .._format import usd as dollars
from .._text import inline, inline_lines
from ..compare.model import JUDGE_CHANGED
from .data import ReportData

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")
# "@name" in a PR comment notifies that person or team. A word joiner (the character itself:
# an entity such as &#8203; would have its "#" escaped and show as text) keeps it readable and
# unlinked.
_MENTION = re.compile(r"@(?=[\w-])")
_WORD_JOINER = "\u2060"
MARKDOWN_WORST = 5
MARKDOWN_REGRESSIONS = 20  # a CI comment lists this many regressed ids, then counts the rest


def render_html(data: ReportData) -> str:
    return _environment("html").get_template("report.html.j2").render(r=data)


def render_markdown(data: ReportData, *, worst: int = MARKDOWN_WORST) -> str:
    template = _environment("md").get_template("report.md.j2")
    return template.render(
        r=data, worst=data.worst[: max(worst, 0)], max_regressions=MARKDOWN_REGRESSIONS
    )


@cache
def _environment(kind: str) -> Environment:
    env = Environment(
        loader=PackageLoader("research_judge", "report/templates"),
        autoescape=kind == "html",
        finalize=markdown_escape if kind == "md" else html_value,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["JUDGE_CHANGED"] = JUDGE_CHANGED
    env.filters.update(
        pct=pct, num=num, signed=signed, pvalue=pvalue, usd=usd, clip=clip, yesno=yesno
    )
    return env


def markdown_escape(value: Any) -> str:
    """Make any value inert inline Markdown: one line, no emphasis, links, tables, HTML or
    @mentions."""
    text = "" if value is None else str(value)
    text = inline(" ".join(text.split()))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MENTION.sub("@" + _WORD_JOINER, text)
    return _MD_SPECIAL.sub(r"\\\1", text)


def html_value(value: Any) -> Any:
    """Every value the HTML page prints, before autoescaping: multi-line text keeps its lines
    (quotes are shown as written), each line inert (``_text.inline``); markup built by the
    report itself (charts) passes."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return inline_lines(value)


def signed(value: float | None, digits: int = 3) -> str:
    return num(value, digits, signed=True)


def pvalue(value: float | None) -> str:
    if value is None:
        return NA
    return "<0.001" if value < 0.001 else f"{value:.3g}"


def usd(value: float | None) -> str:
    return "unknown" if value is None else dollars(value)


def clip(text: str, limit: int = 300) -> str:
    """Shorten long free text for the page; the full text stays in the results file."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def yesno(value: bool | None) -> str:
    return "unchecked" if value is None else ("verified" if value else "NOT FOUND")
