"""Report data assembly and rendering: numbers, charts, worst sessions, escaping, sections."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from report_support import SECTIONS, scan
from research_judge.report import build_report, render_html, render_markdown
from research_judge.report.agreement import agreement_view
from research_judge.report.context import scatter
from research_judge.report.distributions import ratio_bin
from research_judge.report.svg import bar_chart
from research_judge.report.worst import MAX_PROBLEMS_SHOWN, problems_of
from research_judge.results.model import Result, VerdictRecord
from research_judge.validate.agreement import McNemar, PassFailStats, Table2x2
from research_judge.validate.dataset import ExcludedGroup, Exclusions
from research_judge.validate.guidance import RULE_OF_THUMB, Guidance
from research_judge.validate.length_bias import LengthBias
from research_judge.validate.ordinal import CriterionAgreement
from research_judge.validate.prevalence import CorrectedPassRate
from research_judge.validate.report import ValidationReport
from results_support import make_result

EVIL = 'Why <script>alert("x")</script> & <img src="http://evil.example/p.png"> | *bold*?'


def verdicts_for(session: str) -> list[dict[str, Any]]:
    return [
        {"id": "r1", "check": "relevant", "answer": "yes", "evidence": "on topic",
         "evidence_verified": True},
        {"id": "r1", "check": "used", "answer": "no", "evidence": "never cited",
         "evidence_verified": True},
        {"id": "r2", "check": "relevant", "answer": "no", "evidence": "about boats",
         "evidence_verified": None},
        {"id": "c1", "check": "grounded", "answer": "yes", "claim": "made up quote",
         "evidence": "fabricated words", "source": "r1", "evidence_verified": False,
         "claim_verified": True},
        {"id": "c2", "check": "grounded", "answer": "no", "claim": f"{session} claim <b>x</b>",
         "evidence": "no reference says this", "source": None, "evidence_verified": None,
         "claim_verified": True},
    ]  # fmt: skip


@pytest.fixture
def run() -> list[Result]:
    usage = {
        "input_tokens": 1000,
        "cached_input_tokens": 200,
        "output_tokens": 50,
        "calls": 2,
        "cache_hits": 1,
    }
    return [
        make_result("good", ratios=(1.0, 1.0, 1.0), scores=(3, 3, 3), question="Fine question",
                    usage={**usage, "cost_usd": 0.5}, evidence={"verified": 4, "total": 4}),
        make_result("evil", "fail", ratios=(0.5, 0.0, None), scores=(1, 2, 1), question=EVIL,
                    verdict_reasons=["utilization 0.0 < 0.5", "effectiveness 1 < 2"],
                    verdicts=verdicts_for("evil"), usage={**usage, "cost_usd": 0.25},
                    evidence={"verified": 1, "total": 3}),
        make_result("meh", "fail", ratios=(0.5, 0.5, 0.5), scores=(2, 2, 2), question="Meh",
                    usage={**usage, "cost_usd": 0.25}, evidence={"verified": 2, "total": 3}),
        make_result("broken", error="judge returned invalid JSON 3 times <oops>",
                    usage={**usage, "cost_usd": 0.125}),
    ]  # fmt: skip


def test_headline_numbers(run: list[Result]) -> None:
    h = build_report(run).headline
    assert (h.sessions, h.graded, h.errors, h.passed, h.failed) == (4, 3, 1, 1, 2)
    assert h.pass_rate == pytest.approx(1 / 3)
    assert h.ratio_means["relevance"] == pytest.approx(2 / 3)
    assert h.ratio_means["grounding"] == pytest.approx(0.75)  # null left out
    assert h.score_means["effectiveness"] == pytest.approx(2.0)  # on the 1-3 scale
    assert h.score_means["fluff"] == pytest.approx(7 / 3)
    assert (h.evidence_verified, h.evidence_total) == (7, 10)
    assert h.evidence_share == pytest.approx(0.7)


def test_cost_sums_usage_and_unknown_cost_stays_unknown(run: list[Result]) -> None:
    c = build_report(run).cost
    assert (c.input_tokens, c.cached_input_tokens, c.output_tokens) == (4000, 800, 200)
    assert (c.calls, c.cache_hits) == (8, 4)
    assert c.total_cost_usd == pytest.approx(1.125)
    run.append(make_result("no-price"))
    c = build_report(run).cost
    assert c.total_cost_usd is None and c.known_cost_usd == pytest.approx(1.125)
    assert c.sessions_without_cost == 1
    page = scan(render_html(build_report(run)))
    assert "unknown ($1.12 known; 1 sessions without a price)" in page.visible_text


def test_score_distributions_and_ratio_histograms(run: list[Result]) -> None:
    charts = build_report(run).criteria
    effectiveness = {b.label: b.value for b in charts.scores[0].bars}
    assert charts.scores[0].title == "effectiveness" and effectiveness == {"1": 1, "2": 1, "3": 1}
    grounding = charts.ratios[2]
    assert grounding.title == "grounding"
    assert [b.value for b in grounding.bars] == [0, 0, 1, 0, 1]  # 0.5 and 1.0; null aside
    assert grounding.note == "1 undefined (nothing to count)"
    assert [ratio_bin(v) for v in (0.0, 0.19, 0.2, 0.5, 0.99, 1.0)] == [0, 0, 1, 2, 4, 4]


def test_bar_geometry_scales_to_the_tallest_bar() -> None:
    chart = bar_chart("x", [("a", 2), ("b", 4), ("c", 0)], width=200, height=100)
    a, b, c = chart.bars
    assert b.height == pytest.approx(2 * a.height) and c.height == 0
    assert b.y + b.height == pytest.approx(chart.axis_y) == a.y + a.height
    assert all(bar.x >= 0 and bar.x + bar.width <= 200 for bar in chart.bars)
    assert a.x + a.width < b.x  # bars do not overlap
    empty = bar_chart("y", [("a", 0)])
    assert empty.bars[0].height == 0 and empty.description == "y: a: 0"


def test_worst_sessions_fail_first_then_lowest_combined(run: list[Result]) -> None:
    worst = build_report(run, worst=3).worst
    # evil (fail, combined ~0.25) and meh (fail, 0.5) before good (pass); broken never listed.
    assert [w.session_id for w in worst] == ["evil", "meh", "good"]
    assert worst[0].combined == pytest.approx((0.5 + 0.0 + 0 + 0.5 + 0) / 5)
    assert [w.session_id for w in build_report(run, worst=1).worst] == ["evil"]


def test_problems_are_no_answers_and_unverified_quotes_most_serious_first() -> None:
    problems = problems_of([VerdictRecord.model_validate(v) for v in verdicts_for("s")])
    assert [(p.label, p.ref_id) for p in problems] == [
        ("ungrounded claim", "c2"),
        ("not used", "r1"),
        ("not relevant", "r2"),
        ("quote not found", "c1"),
    ]
    assert problems[0].claim == "s claim <b>x</b>" and problems[3].evidence_verified is False


def test_problems_beyond_the_cap_are_counted_not_dropped_silently() -> None:
    many = [
        {"id": f"c{i}", "check": "grounded", "answer": "no", "claim": f"claim {i}", "evidence": ""}
        for i in range(MAX_PROBLEMS_SHOWN + 3)
    ]
    worst = build_report([make_result("s", "fail", verdicts=many)]).worst[0]
    assert len(worst.problems) == MAX_PROBLEMS_SHOWN and worst.problems_hidden == 3
    assert "… and 3 more findings" in scan(render_html(build_report([make_result(
        "s", "fail", verdicts=many)]))).visible_text  # fmt: skip


def test_html_is_self_contained_and_holds_every_section(run: list[Result]) -> None:
    baseline = [make_result(r.session_id) for r in run]
    html = render_html(build_report(run, baseline=baseline, agreement=validation_report()))
    page = scan(html)
    for section in SECTIONS:
        assert section in page.ids, section
    assert len(page.ids) == len(set(page.ids)), "ids must be unique"
    assert page.external == [], page.external
    assert not page.tags & {"script", "link", "iframe", "img", "object", "embed", "base"}
    assert "svg" in page.tags and "rect" in page.tags
    assert not re.search(r"url\(|@import|https?://", html.split("</style>")[0])


def test_session_text_is_escaped_in_html(run: list[Result]) -> None:
    html = render_html(build_report(run))
    page = scan(html)
    assert "<script>" not in html and "<img" not in html and "<b>x</b>" not in html
    assert "&lt;script&gt;" in html
    assert EVIL in page.visible_text  # shown to the reader as text, exactly
    assert "evil claim <b>x</b>" in page.visible_text
    assert "judge returned invalid JSON 3 times <oops>" in page.visible_text


def test_worst_section_shows_findings_quotes_and_verification(run: list[Result]) -> None:
    text = scan(render_html(build_report(run))).visible_text
    worst_part = text.split("Failing sessions first", 1)[1].split("Distributions", 1)[0]
    assert "ungrounded claim c2 Claim: evil claim <b>x</b> no reference says this" in worst_part
    assert "quote not found c1 Claim: made up quote fabricated words r1 NOT FOUND" in worst_part
    assert "not used r1 never cited verified" in worst_part
    # Each card leads with why it is there.
    assert "fail combined 0.200 Fails: utilization 0.0 < 0.5; effectiveness 1 < 2" in worst_part


def test_errors_cost_and_judge_sections(run: list[Result]) -> None:
    text = scan(render_html(build_report(run))).visible_text
    assert "broken judge_output judge returned invalid JSON 3 times <oops>" in text
    assert "Cost $1.12" in text
    assert "openai judge-1 counting: " + "a" * 64 in text


def test_sections_without_data_say_so(run: list[Result]) -> None:
    text = scan(render_html(build_report(run))).visible_text
    assert "No human labels given" in text
    assert "No baseline given" in text
    clean = scan(render_html(build_report([make_result("a")]))).visible_text
    assert "No judge errors" in clean


def test_regressions_section_against_a_baseline(run: list[Result]) -> None:
    baseline = [make_result(r.session_id, "pass") for r in run]
    data = build_report(run, baseline=baseline)
    text = scan(render_html(data)).visible_text
    section = text.split("Comparison with the baseline", 1)[1].split("Judge errors", 1)[0]
    assert "Regressions: pass → fail (2)" in section
    assert f"evil — {EVIL}" in section and "meh — Meh" in section
    assert re.search(r"pass_rate 1\.000 0\.333 -0\.667 \S+ 3 critical", section)
    assert "1 session(s) graded in the baseline errored in the current run: broken" in section
    assert data.comparison is not None and data.comparison.regressions == ["evil", "meh"]


def test_judge_change_is_loud_in_both_formats(run: list[Result]) -> None:
    other = {"provider": "anthropic", "model": "judge-9"}
    baseline = [make_result(r.session_id, judge=other) for r in run]
    data = build_report(run, baseline=baseline)
    assert "judge changed: these deltas mix agent and judge changes" in render_html(data)
    assert "judge changed: these deltas mix agent and judge changes" in render_markdown(data)


def validation_report(**stats: Any) -> ValidationReport:
    """A typed validation report holding ``stats`` (the numbers a run of validate would give)."""
    table = stats.pop("table", Table2x2(66, 2, 16, 16))
    criteria = stats.pop("criteria", {})
    return ValidationReport(
        headline=stats.pop("headline", "Judge agrees with people on 82% (kappa 0.52, moderate)"),
        pass_fail=PassFailStats(table=table, **stats),
        criteria=criteria,
        length_bias=LengthBias(unit=None),
        guidance=Guidance(
            target_half_width=0.1,
            half_widths={},
            labels_needed_for_kappa=None,
            human_passes_needed=0,
            human_fails_needed=0,
            have={},
            lines=["kappa known to +/-0.18"],
        ),
        excluded=Exclusions(ExcludedGroup("a"), ExcludedGroup("b"), ExcludedGroup("c")),
        n_results=100,
        n_labels=100,
        seed=0,
        n_boot=0,
        corrected=CorrectedPassRate(raw=None, raw_ci=None, n_graded=0),
        warnings=["only 32 human fails"],
    )


def test_agreement_section_renders_from_the_validation_report(run: list[Result]) -> None:
    agreement = validation_report(
        raw_agreement=0.82,
        raw_agreement_ci=(0.73, 0.88),
        cohen_kappa=0.5319,
        cohen_kappa_ci=(0.35, 0.71),
        agreement_on_human_pass=66 / 68,
        mcnemar=McNemar(16, 2, 0.0013, "lenient"),
        criteria={
            "fluff": CriterionAgreement(
                criterion="fluff",
                n=40,
                table=[[0, 0, 0], [0, 0, 0], [0, 0, 0]],
                exact_agreement=0.5,
                linear_kappa=0.41,
                mean_shift=0.35,
            )
        },
    )
    text = scan(render_html(build_report(run, agreement=agreement))).visible_text
    section = text.split("Judge vs human labels", 1)[1].split("Worst sessions", 1)[0]
    assert "Judge agrees with people on 82% (kappa 0.52, moderate)" in section
    assert "Raw agreement 82.0% [73.0%, 88.0%]" in section
    assert "Cohen's kappa 0.532 (moderate) [0.350, 0.710]" in section
    assert "Agreement on human passes 97.1% n/a" in section
    assert "Agreement on human fails n/a n/a" in section  # undefined: n/a, not a crash
    assert "judge pass judge fail human pass 66 2 human fail 16 16" in section
    assert "p = 0.0013 (lenient)" in section
    assert "kappa known to +/-0.18" in section and "only 32 human fails" in section
    assert RULE_OF_THUMB.split(".")[0] in section
    assert "fluff 40 50.0% n/a 0.410 +0.35" in section


def test_undefined_statistics_show_as_n_a() -> None:
    view = agreement_view(
        validation_report(table=Table2x2(0, 0, 0, 0), raw_agreement=math.nan, mcnemar=None)
    )
    assert view.n == "0" and view.mcnemar == "n/a"
    assert view.confusion == (("0", "0"), ("0", "0"))
    assert all(row.value == "n/a" and row.interval == "n/a" for row in view.rows)


def test_markdown_holds_the_answer_flags_regressions_and_worst(run: list[Result]) -> None:
    baseline = [make_result(r.session_id, "pass") for r in run]
    md = render_markdown(build_report(run, baseline=baseline))
    assert md.index("**Worse than the baseline: 2 sessions regressed") < md.index("| metric |")
    assert "Pass rate 33.3% (was 100.0%, -66.7 points); 3 of 4 sessions graded, 1 errors." in md
    assert "| pass\\_rate | 1.000 | 0.333 | -0.667 | drop within noise |" in md
    assert "- **critical**: pass\\_rate dropped by 0.667 (within noise: a warning" in md
    assert "**Regressions (pass → fail): 2**" in md
    assert "**Judge errors: 1** (broken)" in md
    assert (
        "- evil: Fails: utilization 0.0 &lt; 0.5; effectiveness 1 &lt; 2. First finding: "
        "ungrounded claim" in md
    )
    worst_lines = [line for line in md.splitlines() if re.match(r"- \w+: (Fails|Passes)", line)]
    assert len(worst_lines) == 3
    # The same order as the HTML page: answer, trust, worst, distributions, cost.
    order = ["Worse than the baseline", "**Worst 3 sessions**", "**Criterion means**", "**Cost**"]
    assert [md.index(x) for x in order] == sorted(md.index(x) for x in order)


def test_markdown_escapes_session_text(run: list[Result]) -> None:
    baseline = [make_result(r.session_id, "pass") for r in run]
    md = render_markdown(build_report(run, baseline=baseline))
    line = next(line for line in md.splitlines() if line.startswith("- evil —"))
    assert "<" not in line and ">" not in line and "*bold*" not in line
    assert "&lt;script&gt;" in line and "\\|" in line and "\\*bold\\*" in line


def test_markdown_without_baseline_lists_criterion_means(run: list[Result]) -> None:
    md = render_markdown(build_report(run))
    assert "| grounding | 0.750 |" in md and "| effectiveness (1-3) | 2.00 |" in md
    assert "Regressions" not in md


def test_the_scatters_y_labels_read_the_value_they_sit_at() -> None:
    g = scatter([])
    for tick in g.y_ticks:
        value = float(tick.label)
        assert tick.at == pytest.approx(g.bottom - value * (g.bottom - g.top))
    assert [t.label for t in g.y_ticks] == ["0", "0.25", "0.5", "0.75", "1"]


def _structure_run(lowered: int, n: int = 20, flip: int = 0) -> list[Result]:
    """n passing sessions, structure one step lower on the first ``lowered``, the last ``flip``
    failing."""
    return [
        make_result(
            f"s{i}", "fail" if i >= n - flip else "pass", scores=(3, 2, 2 if i < lowered else 3)
        )
        for i in range(n)
    ]


@pytest.mark.parametrize(
    ("lowered", "flip", "worse", "verdict"),
    [
        (0, 0, False, "no change"),
        (3, 0, False, "drop within noise"),
        (12, 0, True, "significant drop"),
        (0, 1, True, "no change"),
    ],
    ids=["same", "noise", "significant", "one-regression"],
)
def test_the_answer_reads_the_comparison_as_compares_default_gate_does(
    lowered: int, flip: int, worse: bool, verdict: str
) -> None:
    from research_judge.ci.gates import compare_gates, failed

    data = build_report(_structure_run(lowered, flip=flip), baseline=_structure_run(0))
    assert data.answer is not None and data.comparison is not None
    assert data.answer.worse is worse
    assert worse is bool(failed(compare_gates(data.comparison)))
    [structure] = [m for m in data.answer.metrics if m.metric == "structure"]
    assert structure.verdict == verdict
    html = render_html(data)
    sentence = "Worse than the baseline" if worse else "Not worse than the baseline"
    assert html.index(sentence) < html.index('id="deltas"') < html.index('id="worst"')
    if verdict == "drop within noise":
        assert "Within noise (a warning, not a failure): structure dropped." in html
