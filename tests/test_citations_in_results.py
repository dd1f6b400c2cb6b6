"""A cited url resolves to the reference whose url it is, or whose text holds it (a search or news
tool returning a JSON list of results); only a url found nowhere in the trajectory is fabricated.
Provider excerpts are appended to the reference they resolve to, so the judge reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import MessageParam
from pydantic import TypeAdapter

from research_judge.clients import ScriptedClient
from research_judge.judge.citations import Claim, audit_citations, find_citations
from research_judge.judge.evidence import EvidenceChecker
from research_judge.judge.grader import Judge
from research_judge.judge.verdicts import Verdict
from research_judge.sessions.citations import ReferenceIndex, normalise_url, urls_in_text
from research_judge.sessions.convert import ConvertOptions, convert_files
from research_judge.sessions.model import Session

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "agent_logs"

# The shape DuckDuckGo's news search returns (and an Agno team's news tool passes on): a JSON list
# of articles, each with its link. Thirteen articles, as in the log where 13 of 13 were misread.
ARTICLES = [
    {
        "date": f"2025-05-{10 + i:02d}T08:00:00+00:00",
        "title": f"Grid battery report {i}",
        "body": f"Installed grid storage grew {20 + i}% in quarter {i}.",
        "url": f"https://www.example{i % 3}.com/energy/storage-{i}/"
        + ("?utm_source=ddg&utm_medium=news" if i % 2 else ""),
        "image": f"https://img.example.com/{i}.jpg",
        "source": f"Example Wire {i}",
    }
    for i in range(1, 14)
]


def _cited(i: int) -> str:
    # How an answer writes the link: scheme, www., trailing slash and tracking parameters vary.
    return f"http://example{i % 3}.com/energy/storage-{i}" + ("/" if i % 4 == 0 else "")


def agno_like_record() -> dict[str, Any]:
    lines = [f"Storage grew {20 + i}% in quarter {i} ([{i}]({_cited(i)}))." for i in range(1, 14)]
    return {
        "id": "team-news-01",
        "metadata": {"framework": "agno", "team": "news-team"},
        "messages": [
            {"role": "user", "content": "How fast is grid battery storage growing?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_news", "type": "function",
                 "function": {"name": "duckduckgo_news",
                              "arguments": json.dumps({"query": "grid battery storage"})}}]},
            {"role": "tool", "tool_call_id": "call_news", "content": json.dumps(ARTICLES)},
            {"role": "assistant", "content": "\n".join(lines)},
        ],
    }  # fmt: skip


def test_urls_in_a_result_list_tool_resolve_and_none_is_fabricated(tmp_path: Path) -> None:
    log = tmp_path / "team.jsonl"
    log.write_text(json.dumps(agno_like_record()) + "\n", encoding="utf-8")
    out = tmp_path / "s.jsonl"
    assert convert_files("openai-chat", [log], out).errors == []
    session = Session.model_validate_json(out.read_text(encoding="utf-8"))
    found = find_citations(session)
    assert len(found) == 13
    assert [c.target for c in found] == ["call_news"] * 13
    claims = [Claim(f"c{i}", f"Storage grew {20 + i}% in quarter {i}", True, "call_news")
              for i in range(1, 14)]  # fmt: skip
    audit = audit_citations(session, claims)
    assert audit.fabricated_citations == 0
    assert audit.counts["correct"] == 13 and audit.precision == 1.0


def test_a_url_found_nowhere_is_still_fabricated() -> None:
    session = Session.model_validate(
        {"id": "s", "question": "q", "trajectory": [
            {"id": "news", "content": json.dumps(ARTICLES[:2])}],
         "answer": f"Grew 21% ({_cited(1)}) and 30% (https://example0.com/energy/storage-99)."}
    )  # fmt: skip
    assert [c.target for c in find_citations(session)] == ["news", None]


def test_a_references_own_url_wins_over_one_whose_text_mentions_it() -> None:
    refs = [
        {"id": "list", "content": "See https://example.org/page and https://example.org/other"},
        {"id": "page", "content": "The page itself.", "url": "https://example.org/page"},
    ]
    index = ReferenceIndex(refs)
    assert index.for_url("https://www.example.org/page/") == "page"
    assert index.for_url("https://example.org/other") == "list"
    assert index.for_url("https://example.org/missing") is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://www.Example.com/a/", "https://example.com/a"),
        ("https://example.com/a?utm_source=x&utm_campaign=y", "https://example.com/a"),
        ("https://example.com/a?id=3&fbclid=abc&gclid=d", "https://example.com/a?id=3"),
        ("https://example.com/a#section", "https://example.com/a"),
    ],
)
def test_normalised_urls(a: str, b: str) -> None:
    assert normalise_url(a) == normalise_url(b)


def test_a_different_query_is_a_different_page() -> None:
    assert normalise_url("https://example.com/a?id=3") != normalise_url(
        "https://example.com/a?id=4"
    )


def test_urls_in_text_read_escaped_json_and_html() -> None:
    text = 'x {"u": "https:\\/\\/example.org\\/a"} <a href="https://example.org/b?x=1&amp;y=2">.'
    assert urls_in_text(text) == ["https://example.org/a", "https://example.org/b?x=1&y=2"]


# --- provider excerpts ---------------------------------------------------------------------------


def test_anthropic_cited_text_is_appended_to_the_search_reference_as_an_excerpt(
    tmp_path: Path,
) -> None:
    out = tmp_path / "s.jsonl"
    convert_files("anthropic", [LOGS / "anthropic_turns.jsonl"], out, ConvertOptions())
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    (search,) = first["trajectory"]
    assert search["unreadable"] == "encrypted page content of 2 search result(s)"
    assert search["excerpts"] == [
        {"text": "Saturday: high 6:42 AM 1.8 m; low 12:58 PM 0.2 m; high 7:15 PM 1.5 m.",
         "kind": "quoted"}
    ]  # fmt: skip
    # The judge is shown it, inside the reference's markers, marked as the provider's quote.
    session = Session.model_validate(first)
    rendered = _counting_prompt(session)
    ref_block = rendered[rendered.index('<<reference id="srvtoolu_t1"') :]
    assert "quoted by the provider from this source: Saturday: high 6:42 AM" in ref_block
    assert ref_block.index("Saturday: high") < ref_block.index('<</reference id="srvtoolu_t1"')
    # A verdict quoting the excerpt is a verified quote of that reference.
    checker = EvidenceChecker(session)
    verdict = Verdict("c1", "grounded", True, "high 6:42 AM 1.8 m", "High tide", "srvtoolu_t1")
    assert checker.check(verdict).evidence_verified


def test_anthropic_fixture_citation_is_a_messages_api_citation() -> None:
    record = json.loads((LOGS / "anthropic_turns.jsonl").read_text(encoding="utf-8"))
    TypeAdapter(MessageParam).validate_python(record["messages"][1], strict=True)


def test_openai_url_citation_span_is_attributed_not_quoted(tmp_path: Path) -> None:
    answer = "Hyperion is 116 m tall."
    record = {
        "id": "o1",
        "messages": [
            {"role": "user", "content": "How tall is the tallest tree?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "k1", "type": "function",
                 "function": {"name": "web_search", "arguments": '{"query": "tallest tree"}'}}]},
            {"role": "tool", "tool_call_id": "k1",
             "content": '[{"title": "Hyperion", "url": "https://example.org/hyperion"}]'},
            {"role": "assistant", "content": answer, "annotations": [
                {"type": "url_citation", "url_citation": {
                    "start_index": 0, "end_index": 22, "url": "https://example.org/hyperion",
                    "title": "Hyperion"}}]},
        ],
    }  # fmt: skip
    log = tmp_path / "o.jsonl"
    log.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = tmp_path / "s.jsonl"
    convert_files("openai-chat", [log], out)
    session = json.loads(out.read_text(encoding="utf-8"))
    (ref,) = session["trajectory"]
    assert ref["excerpts"] == [{"text": "Hyperion is 116 m tall", "kind": "attributed"}]
    assert session["citations"][0]["reference"] == "k1"  # resolved through the result list
    rendered = _counting_prompt(Session.model_validate(session))
    assert "attributed (the answer's words that the provider says come from this source" in rendered


def test_a_reference_without_excerpts_renders_as_before() -> None:
    plain = Session.model_validate(
        {"id": "s", "question": "q", "answer": "a", "trajectory": [{"id": "r1", "content": "c"}]}
    )
    rendered = _counting_prompt(plain)
    assert "excerpt" not in rendered
    assert "content:\nc\n<</reference" in rendered


def _counting_prompt(session: Session) -> str:
    counting, _ = Judge(ScriptedClient([])).first_requests(session)
    return counting.messages[0].content
