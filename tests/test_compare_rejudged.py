"""`compare BASELINE CURRENT --rejudged REJUDGED`: judge shift or agent change?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from research_judge.cli import main
from research_judge.compare import compare_runs
from research_judge.compare.rejudged import REJUDGE_HINT
from results_support import JUDGE, make_result, write_results

NEW_JUDGE: dict[str, Any] = {
    **JUDGE,
    "model": "judge-2",
    "prompts": {**JUDGE["prompts"], "scoring": {"name": "scoring", "sha256": "c" * 64}},
}


def runs(judge_drop: int, agent_drop: int, n: int = 20) -> tuple[list, list, list]:
    """Baseline by the old judge; the same answers rejudged by the new judge, which scores
    ``judge_drop`` sessions one effectiveness step lower; the current run (new judge) where
    ``agent_drop`` further sessions lost a step because the agent got worse."""
    baseline = [make_result(f"s{i}", "pass", scores=(3, 2, 3)) for i in range(n)]
    rejudged = [
        make_result(f"s{i}", "pass", scores=(2 if i < judge_drop else 3, 2, 3), judge=NEW_JUDGE)
        for i in range(n)
    ]
    current = [
        make_result(
            f"s{i}",
            "fail" if judge_drop <= i < judge_drop + agent_drop else "pass",
            scores=(2 if i < judge_drop else 1 if i < judge_drop + agent_drop else 3, 2, 3),
            judge=NEW_JUDGE,
        )
        for i in range(n)
    ]
    return baseline, current, rejudged


def test_a_stricter_judge_is_told_apart_from_an_unchanged_agent() -> None:
    baseline, current, rejudged = runs(judge_drop=12, agent_drop=0)
    out = compare_runs(baseline, current, rejudged=rejudged).to_dict()
    eff = out["criteria"]["effectiveness"]
    assert eff["judge_shift"] == pytest.approx(-0.5 * 12 / 20)
    assert eff["agent_change"] == 0.0
    assert eff["judge_shift"] + eff["agent_change"] == pytest.approx(eff["delta"])
    # Twelve equal one-step drops: the exact test is the sign test, 2 * 0.5^12.
    assert eff["judge_shift_test"]["p_value"] == pytest.approx(binomtest(0, 12).pvalue)
    assert eff["agent_change_test"]["p_value"] == 1.0
    assert eff["moved"] == "judge"
    assert out["pass_rate"]["moved"] == "neither"
    assert out["rejudged"]["n_sessions"] == 20
    assert not any(w == REJUDGE_HINT for w in out["warnings"])  # already separated


def test_an_agent_regression_under_the_same_new_judge_is_the_agents() -> None:
    baseline, current, rejudged = runs(judge_drop=0, agent_drop=8)
    out = compare_runs(baseline, current, rejudged=rejudged).to_dict()
    eff, pr = out["criteria"]["effectiveness"], out["pass_rate"]
    assert eff["judge_shift"] == 0.0 and eff["agent_change"] == pytest.approx(-1.0 * 8 / 20)
    assert eff["moved"] == "agent"
    assert pr["agent_change"] == pytest.approx(-8 / 20) and pr["judge_shift"] == 0.0
    assert pr["agent_change_test"]["test"] == "mcnemar_exact"
    assert pr["agent_change_test"]["p_value"] == pytest.approx(binomtest(8, 8).pvalue)
    assert pr["moved"] == "agent"


def test_both_moved_and_the_parts_add_up_to_the_delta() -> None:
    baseline, current, rejudged = runs(judge_drop=7, agent_drop=7)
    out = compare_runs(baseline, current, rejudged=rejudged).to_dict()
    for name in ("pass_rate", "effectiveness"):
        m = out["pass_rate"] if name == "pass_rate" else out["criteria"][name]
        assert m["judge_shift"] + m["agent_change"] == pytest.approx(m["delta"])
    assert out["criteria"]["effectiveness"]["moved"] == "both"


def test_a_judge_change_without_rejudged_suggests_the_two_commands() -> None:
    baseline, current, _ = runs(judge_drop=3, agent_drop=3)
    out = compare_runs(baseline, current).to_dict()
    assert out["judge"]["changed"] is True
    assert REJUDGE_HINT in out["warnings"]
    assert "--rejudged REJUDGED.jsonl" in REJUDGE_HINT and "research-judge grade" in REJUDGE_HINT
    assert "rejudged" not in out and "judge_shift" not in out["criteria"]["effectiveness"]


def test_rejudged_by_another_judge_than_the_current_one_is_warned_about() -> None:
    baseline, current, _ = runs(judge_drop=0, agent_drop=2)
    rejudged_old = [make_result(r.session_id, "pass", scores=(3, 2, 3)) for r in baseline]
    out = compare_runs(baseline, current, rejudged=rejudged_old[:15]).to_dict()
    warnings = "\n".join(out["warnings"])
    assert "not graded by the current run's judge" in warnings
    assert "5 baseline session(s) are not in the rejudged run" in warnings
    assert out["rejudged"]["n_sessions"] == 15


def test_cli_prints_the_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline, current, rejudged = runs(judge_drop=12, agent_drop=0)
    paths = [
        str(write_results(tmp_path / f"{name}.jsonl", rs))
        for name, rs in (("base", baseline), ("cur", current), ("rej", rejudged))
    ]
    code = main(["compare", paths[0], paths[1], "--rejudged", paths[2]])
    text = capsys.readouterr().out
    assert code == 1  # effectiveness dropped by 0.3: flagged whoever caused it
    assert "Judge shift (rejudged - baseline) or agent change (current - rejudged)" in text
    row = next(
        line
        for line in text.splitlines()
        if line.startswith("effectiveness") and "judge" in line.split()[-1:]
    )
    assert row.split()[1] == "-0.300" and row.split()[-1] == "judge"
    main(["compare", paths[0], paths[1], "--rejudged", paths[2], "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["criteria"]["effectiveness"]["moved"] == "judge"


def test_html_and_markdown_show_the_split() -> None:
    from research_judge.report import build_report, render_html, render_markdown

    baseline, current, rejudged = runs(judge_drop=12, agent_drop=0)
    data = build_report(current, baseline=baseline, rejudged=rejudged)
    html, md = render_html(data), render_markdown(data)
    assert 'id="split-table"' in html and "Judge shift or agent change" in md
    row = next(line for line in md.splitlines() if line.startswith("| effectiveness | -0.300"))
    assert row.rstrip().endswith("| judge |")


def test_the_python_api_takes_rejudged_and_validate_bars() -> None:
    import research_judge as rj

    baseline, current, rejudged = runs(judge_drop=12, agent_drop=0)
    cmp = rj.compare(baseline, current, rejudged=rejudged)
    assert cmp.decomposition is not None
    assert cmp.decomposition.metrics["effectiveness"].moved == "judge"
    labels = {r.session_id: "pass" for r in current[:10]} | {
        r.session_id: "fail" for r in current[10:]
    }
    report = rj.validate(current, labels, n_boot=0, min_kappa=0.5)
    assert report.gates_passed is False and report.gates[0].flag == "--min-kappa"
