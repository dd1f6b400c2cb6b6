"""Context diagnostics where people read them: the report (plot, heaviest sessions, not judged)
and compare (tokens pulled per session, beside the criteria, never flagged)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from research_judge.clients import ScriptedClient
from research_judge.clients.base import JudgeRequest
from research_judge.compare import compare_runs
from research_judge.compare.text import render_text
from research_judge.cost.windows import ModelLimits
from research_judge.judge.grader import Judge
from research_judge.report.data import build_report
from research_judge.report.render import render_html, render_markdown
from research_judge.results.model import Result
from research_judge.sessions.model import Session
from research_judge.testing.long_sessions import TruthfulJudge, make_session
from research_judge.testing.shown import RequestShown

LIMITS = ModelLimits(16_000, 8_192)


async def graded(
    sizes: list[tuple[str, int, int]], fails: Callable[[JudgeRequest], bool] | None = None
) -> list[Result]:
    """The sessions of ``sizes`` graded by the truthful judge, which answers "not json" to the
    requests ``fails`` picks."""
    sessions = [Session.model_validate(make_session(*size).session) for size in sizes]
    truthful = TruthfulJudge(sessions)

    def respond(request: JudgeRequest) -> Any:
        return "not json" if fails is not None and fails(request) else truthful(request)

    judge = Judge(ScriptedClient(respond), limits=LIMITS)
    return [await judge.grade(session) for session in sessions]


async def test_the_report_plots_size_against_utilization_and_lists_the_heaviest() -> None:
    results = await graded([("small", 3, 300), ("big", 40, 2000), ("mid", 8, 1000)])
    data = build_report(results)
    assert data.context is not None
    assert [h.session_id for h in data.context.heaviest] == ["big", "mid", "small"]
    assert data.context.split == 1
    html = render_html(data)
    section = html.split('<section id="context">')[1].split("</section>")[0]
    assert len(re.findall(r"<circle ", section)) == 3
    table = section.split("Heaviest sessions")[1]
    assert table.index("<code>big</code>") < table.index("<code>small</code>")
    assert "Every reference and claim was judged." in section


async def test_the_report_counts_what_was_not_judged() -> None:
    def later_call_with_r30(request: JudgeRequest) -> bool:
        if request.call != "counting":
            return False
        shown = RequestShown().read(request, TruthfulJudge.shows_claims)
        return shown.claims is not None and "r30" in [ref.id for ref in shown.references]

    results = await graded([("big", 40, 2000)], later_call_with_r30)
    data = build_report(results)
    assert data.context is not None and data.context.not_judged_references > 0
    assert any(line.startswith("not judged:") for line in data.problems)
    assert "Not judged:" in render_html(data)
    assert "not judged:" in render_markdown(data)


async def test_compare_shows_the_change_in_tokens_pulled_without_flagging_it() -> None:
    baseline = await graded([("a", 4, 500), ("b", 4, 500)])
    current = await graded([("a", 12, 1500), ("b", 4, 500)])
    cmp = compare_runs(baseline, current)
    rows = {m.metric: m for m in cmp.context}
    tokens = rows["tokens_pulled"]
    assert tokens.delta is not None and tokens.delta > 0 and tokens.test.n_pairs == 2
    assert all(f.metric not in rows for f in cmp.flags)
    assert "tokens_pulled" in render_text(cmp) and "tokens_pulled" in cmp.to_dict()["context"]
    assert "tokens_pulled" in render_html(build_report(current, baseline=baseline))


async def test_flat_rows_carry_the_context_columns() -> None:
    from research_judge.results.table import result_rows

    [row] = result_rows(await graded([("big", 40, 2000)]))
    assert row["context.references"] == row["context.references_judged"] == 40
    assert row["context.counting_calls"] > 1 and row["context.not_judged"] == 0
    assert 0 < row["context.used_token_share"] < 1
