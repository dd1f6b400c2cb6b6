"""The citation audit: each marker style, each status, and the precision/recall definitions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research_judge.judge.citations import Claim, audit_citations, find_citations
from research_judge.sessions.model import Session

REFS = [
    {"id": "r1", "content": "Winter losses were 37.4%.", "url": "https://example.org/survey"},
    {"id": "r2", "content": "Varroa is the leading cause.", "url": "https://example.com/varroa/"},
    {"id": "r3", "content": "Summer losses were 32%.", "title": "Summer report"},
    {"id": "doc/7", "content": "An id with a slash."},
]


def make(answer: str, citations: list[dict[str, Any]] | None = None) -> Session:
    return Session.model_validate(
        {"id": "s", "question": "q", "answer": answer, "trajectory": REFS,
         "citations": citations or []}
    )  # fmt: skip


def targets(answer: str, **kw: Any) -> list[str | None]:
    return [c.target for c in find_citations(make(answer, **kw))]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Losses were 37.4% [r1].", ["r1"]),
        ("Losses were 37.4% [r1, r2][r3].", ["r1", "r2", "r3"]),
        ("Losses were 37.4% [r9].", [None]),  # an id that is not in the trajectory
        ("Losses were 37.4% [2].", ["r2"]),  # numbered, no source list: the n-th reference
        ("Losses were 37.4% [7].", [None]),
        (
            "Losses were 37.4% [1]. Varroa [2].\n\nSources:\n[1] https://example.com/varroa\n"
            "[2] https://example.net/elsewhere",
            ["r2", None],  # the source list decides, by url
        ),
        ("Losses were 37.4%[^a].\n\n[^a]: Survey, http://www.example.org/survey/", ["r1"]),
        ("Losses were 37.4%[^b].", [None]),  # a footnote without a definition
        (
            "See [the survey](https://example.org/survey) and [x](https://example.net/x).",
            ["r1", None],
        ),
        ("Per https://example.org/survey, and https://example.net/made-up.", ["r1", None]),
        ("Losses [sic] were high [citation needed] [see 2 below].", []),  # not citations
        ("Per [doc/7; r1].", ["doc/7", "r1"]),  # any reference id, whatever its characters
    ],
)
def test_marker_styles(answer: str, expected: list[str | None]) -> None:
    assert targets(answer) == expected


def test_provider_annotations_count_on_their_span() -> None:
    notes = [{"start": 0, "end": 10, "reference": "r3"}, {"start": 0, "end": 10, "reference": None}]
    assert targets("Losses were high.", citations=notes) == ["r3", None]


def claim(cid: str, text: str, source: str | None) -> Claim:
    return Claim(cid, text, source is not None, source)


def test_every_status_and_the_two_ratios() -> None:
    session = make(
        "Winter losses were 37.4% [r1]. Varroa is the leading cause [r1]. "
        "Summer losses were 32% [r2]. Losses rose again [r9]. "
        "Varroa spreads viruses. Bees are doomed. A claim the judge made up."
    )
    audit = audit_citations(
        session,
        [
            claim("c1", "Winter losses were 37.4%", "r1"),  # correct
            claim("c2", "Varroa is the leading cause", "r2"),  # misattributed
            claim("c3", "Summer losses were 32%", None),  # unsupported
            claim("c4", "Losses rose again", None),  # fabricated
            claim("c5", "Varroa spreads viruses", "r2"),  # uncited
            claim("c6", "Bees are doomed", None),  # ungrounded
            claim("c7", "not in the answer at all", "r1"),  # unlocated
        ],
    )
    assert [(c.id, c.status) for c in audit.claims] == [
        ("c1", "correct"),
        ("c2", "misattributed"),
        ("c3", "unsupported"),
        ("c4", "fabricated"),
        ("c5", "uncited"),
        ("c6", "ungrounded"),
        ("c7", "unlocated"),
    ]
    assert audit.claims[1].cited == ["r1"] and audit.claims[1].source == "r2"
    # precision: correct / cited claims = 1 / 4; recall: correct / grounded located = 1 / 3.
    assert audit.precision == 0.25
    assert audit.recall == 0.3333
    assert audit.citations == 4 and audit.fabricated_citations == 1


def test_markers_after_the_full_stop_belong_to_the_sentence_before() -> None:
    session = make("Winter losses were 37.4%. [r1] Varroa is the leading cause. [r2]")
    audit = audit_citations(
        session,
        [
            claim("c1", "Winter losses were 37.4%", "r1"),
            claim("c2", "Varroa is the leading cause", "r2"),
        ],
    )
    assert [c.status for c in audit.claims] == ["correct", "correct"]


def test_an_abbreviation_or_a_url_in_parentheses_does_not_end_the_sentence() -> None:
    # "a.m." and "p.m." are not sentence ends, and a parenthesised URL after the full stop is the
    # sentence's own citation: the claim before it is cited (it was called uncited).
    session = make(
        "Losses peak from 11 a.m. to 8 p.m. (https://example.org/survey). "
        "Varroa is the leading cause (https://example.com/varroa/)."
    )
    audit = audit_citations(
        session,
        [
            claim("c1", "Losses peak from 11 a.m. to 8 p.m.", "r1"),
            claim("c2", "Varroa is the leading cause", "r2"),
        ],
    )
    assert [c.status for c in audit.claims] == ["correct", "correct"]
    assert [c.cited for c in audit.claims] == [["r1"], ["r2"]]


def test_a_claim_the_judge_tidied_is_still_found() -> None:
    session = make("Winter  losses were “37.4 %” [r1].")
    audit = audit_citations(session, [claim("c1", "winter losses were 37.4%", "r1")])
    assert audit.claims[0].status == "correct"


def test_undefined_ratios_are_none() -> None:
    audit = audit_citations(make("Bees are doomed."), [claim("c1", "Bees are doomed", None)])
    assert (audit.precision, audit.recall) == (None, None)
    assert audit_citations(make("No claims."), []).summary().precision is None


def test_an_uncited_answer_has_recall_zero_and_no_precision() -> None:
    audit = audit_citations(
        make("Winter losses were 37.4%."), [claim("c1", "Winter losses were 37.4%", "r1")]
    )
    assert (audit.precision, audit.recall) == (None, 0.0)


# --- in the results, the summary, compare and the report -------------------------------------


async def test_grading_records_the_audit_in_the_result() -> None:
    from research_judge.clients import ScriptedClient
    from research_judge.judge.grader import Judge

    from support import good_responder, session

    answer = "Fact 1 is true [r2]. Fact 9 is invented [r7]."
    result = await Judge(ScriptedClient(good_responder)).grade(
        Session.model_validate(session("s-1", answer=answer))
    )
    assert result.citations is not None
    assert [(c.id, c.status) for c in result.citations.claims] == [
        ("c1", "misattributed"),  # grounded by r1, cited to r2
        ("c2", "fabricated"),  # cites r7, which the agent never pulled
    ]
    assert (result.citations.precision, result.citations.recall) == (0.0, 0.0)
    assert result.criterion_value("citation_precision") == 0.0
    line = json.loads(result.to_json_line())
    assert line["citations"]["counts"]["fabricated"] == 1


def test_summary_compare_and_report_carry_the_citation_ratios() -> None:
    from research_judge.compare.core import compare_runs
    from research_judge.report.summary import headline
    from research_judge.results.summary import format_summary, summarize
    from results_support import make_result

    def audited(sid: str, precision: float | None, recall: float) -> Any:
        return make_result(sid, citations={"precision": precision, "recall": recall})

    base = [audited("a", 1.0, 0.5), audited("b", None, 1.0)]
    cur = [audited("a", 0.5, 0.5), audited("b", 0.5, 0.5)]
    s = summarize(cur)
    assert (s.means["citation_precision"], s.means["citation_recall"]) == (0.5, 0.5)
    assert "citations precision 0.50  recall 0.50" in format_summary(s)
    assert headline(base).citation_means == {"citation_precision": 1.0, "citation_recall": 0.75}
    cmp = compare_runs(base, cur)
    precision = cmp.criteria["citation_precision"]
    assert (precision.baseline, precision.current, precision.n_baseline) == (1.0, 0.5, 1)
    assert cmp.criteria["citation_recall"].delta == -0.25
    assert "citation_recall" in [f.metric for f in cmp.flags]
    # Results written before the audit existed: no citation rows, no warnings about them.
    old = compare_runs([make_result("a")], [make_result("a")])
    assert "citation_precision" not in old.criteria


def test_the_report_shows_each_worst_session_citation_problems(tmp_path: Path) -> None:
    from research_judge.cli import main
    from results_support import make_result, write_results

    audit = {
        "precision": 0.5,
        "recall": 0.6667,
        "claims": [
            {"id": "c1", "status": "correct", "cited": ["r1"], "source": "r1"},
            {"id": "c2", "status": "misattributed", "cited": ["r2"], "source": "r1"},
            {"id": "c4", "status": "fabricated", "cited": [None], "source": None},
        ],
    }
    results = write_results(tmp_path / "r.jsonl", [make_result("s-1", "fail", citations=audit)])
    html = tmp_path / "report.html"
    assert main(["report", str(results), "--html", str(html)]) == 0
    page = html.read_text(encoding="utf-8")
    assert "precision 0.50, recall 0.67" in page
    assert "c2 misattributed: cites r2, supported by r1" in page
    assert "c4 fabricated: cites (not in the trajectory)" in page
