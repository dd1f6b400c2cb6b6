"""A Markdown report pasted into a PR comment pings nobody and runs no HTML."""

from __future__ import annotations

import re

import pytest

from research_judge.report import build_report, render_markdown
from research_judge.report.render import markdown_escape
from results_support import make_result

HOSTILE_QUESTIONS = {
    "mention": "Ping @octocat and @org/team about this",
    "html": "<img src=x onerror=alert(1)> <details open><summary>hi</summary></details>",
    "comment": "<!-- hidden --> visible",
    "entity": "&lt;script&gt; spelled as entities",
    "issue link": "closes #1 and GH-2",
}


@pytest.mark.parametrize("what", list(HOSTILE_QUESTIONS))
def test_session_text_in_the_markdown_report_is_inert(what: str) -> None:
    question = HOSTILE_QUESTIONS[what]
    run = [make_result("evil", "fail", question=question), make_result("ok", "pass")]
    baseline = [make_result("evil", "pass"), make_result("ok", "pass")]
    md = render_markdown(build_report(run, baseline=baseline))
    lines = [line for line in md.splitlines() if line.startswith("- evil")]
    assert any(" — " in line for line in lines)  # the question is shown, made inert
    for line in lines:
        assert "<" not in line and ">" not in line  # no raw HTML, no comments
        assert not re.search(r"(?<![\w&#;])@\w", line)  # no live @mention
        assert "&lt;script" not in line  # an entity the session wrote is shown, not decoded


def test_a_mention_stays_readable() -> None:
    shown = markdown_escape("ask @octocat")
    assert shown.startswith("ask @") and "octocat" in shown
    assert "@octocat" not in shown


def test_a_neutralised_mention_renders_as_plain_text() -> None:
    # What GitHub shows is the CommonMark rendering: an escaped entity (``@&\#8203;``) renders as
    # the literal text "@&#8203;user". The word joiner is a character, invisible when rendered.
    from markdown_it import MarkdownIt

    md = render_markdown(
        build_report(
            [make_result("evil", "fail", question="Ping @octocat now")],
            baseline=[make_result("evil", "pass")],
        )
    )
    html = MarkdownIt("commonmark").render(md)
    assert "Ping @\u2060octocat now" in html
    assert "8203" not in html and "&amp;" not in html
    assert not re.search(r"@[A-Za-z0-9]", html)  # nothing GitHub would link as a mention
