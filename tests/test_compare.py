"""compare_runs semantics (contract section 8) and its text rendering."""

from __future__ import annotations

import json
import math

import pytest

from research_judge.compare import compare_runs, render_text
from research_judge.errors import ConfigError
from research_judge.results.model import Result
from results_support import JUDGE, make_result


def test_identical_runs_flag_nothing() -> None:
    run = [make_result("s1"), make_result("s2", "fail", scores=(1, 1, 2)), make_result("s3")]
    cmp = compare_runs(run, run)
    out = cmp.to_dict()
    assert out["n_common"] == 3
    assert out["flags"] == [] and not cmp.flagged
    assert out["regressions"] == [] and out["fixed"] == []
    assert out["pass_rate"]["delta"] == 0.0 and out["pass_rate"]["p_value"] == 1.0
    assert all(c["delta"] == 0.0 for c in out["criteria"].values())
    assert out["judge"]["changed"] is False
    assert not any("judge changed" in w for w in out["warnings"])


def test_means_skip_nulls_and_scores_use_zero_to_one_scale() -> None:
    baseline = [
        make_result("s1", ratios=(1.0, 0.5, None), scores=(3, 1, 2)),
        make_result("s2", ratios=(0.5, 0.5, 0.5), scores=(1, 1, 2)),
        make_result("s3", ratios=(0.0, 0.5, 1.0), scores=(2, 1, 2)),
    ]
    current = [
        make_result("s1", ratios=(1.0, 0.5, 0.2), scores=(2, 3, 2)),
        make_result("s2", ratios=(0.5, 0.5, None), scores=(2, 3, 2)),
        make_result("s3", ratios=(0.0, 0.5, None), scores=(2, 3, 2)),
    ]
    crit = compare_runs(baseline, current).to_dict()["criteria"]
    # grounding: baseline mean of 0.5 and 1.0 (null skipped), current only 0.2.
    assert crit["grounding"]["baseline"] == pytest.approx(0.75)
    assert crit["grounding"]["n_baseline"] == 2 and crit["grounding"]["n_current"] == 1
    assert crit["grounding"]["current"] == pytest.approx(0.2)
    assert crit["grounding"]["delta"] == pytest.approx(0.2 - 0.75)
    # No session has grounding on both sides: the means exist, the paired test does not.
    assert crit["grounding"]["n_pairs"] == 0 and crit["grounding"]["p_value"] is None
    # effectiveness 3,1,2 -> (1 + 0 + 0.5) / 3; current all 2 -> 0.5: equal means.
    assert crit["effectiveness"]["baseline"] == pytest.approx(0.5)
    assert crit["effectiveness"]["current"] == pytest.approx(0.5)
    assert crit["fluff"]["baseline"] == 0.0 and crit["fluff"]["current"] == 1.0
    assert crit["relevance"]["delta"] == 0.0


def test_a_mean_of_nothing_is_null_with_a_warning() -> None:
    baseline = [make_result("s1", ratios=(0.5, 0.5, None))]
    current = [make_result("s1", ratios=(0.5, 0.5, 0.4))]
    out = compare_runs(baseline, current).to_dict()
    assert out["criteria"]["grounding"]["baseline"] is None
    assert out["criteria"]["grounding"]["delta"] is None
    assert out["criteria"]["grounding"]["p_value"] is None
    assert any(w.startswith("grounding: no values in the baseline") for w in out["warnings"])
    json.dumps(out, allow_nan=False)  # raises on NaN


def test_regressions_and_fixes_by_id_in_current_order() -> None:
    baseline = [
        make_result("a", "pass"),
        make_result("b", "fail"),
        make_result("c", "pass"),
        make_result("d", "fail"),
        make_result("e", "pass"),
    ]
    current = [
        make_result("e", "fail"),
        make_result("d", "pass"),
        make_result("c", "pass"),
        make_result("b", "pass"),
        make_result("a", "fail"),
    ]
    out = compare_runs(baseline, current).to_dict()
    assert out["regressions"] == ["e", "a"]
    assert out["fixed"] == ["d", "b"]
    assert out["pass_rate"]["pass_to_fail"] == 2 and out["pass_rate"]["fail_to_pass"] == 2


def test_only_in_lists_and_common_count() -> None:
    baseline = [make_result(s) for s in ("x", "a", "b", "y")]
    current = [make_result(s) for s in ("b", "z", "a")]
    out = compare_runs(baseline, current).to_dict()
    assert out["n_common"] == 2
    assert out["only_in_baseline"] == ["x", "y"]
    assert out["only_in_current"] == ["z"]
    assert any("2 sessions only in the baseline and 1 only in" in w for w in out["warnings"])


def _runs_with_pass_rates(n: int, base_pass: int, cur_pass: int) -> tuple[list[Result], ...]:
    baseline = [make_result(f"s{i}", "pass" if i < base_pass else "fail") for i in range(n)]
    current = [make_result(f"s{i}", "pass" if i < cur_pass else "fail") for i in range(n)]
    return baseline, current


def test_pass_rate_drop_beyond_ten_points_is_critical() -> None:
    baseline, current = _runs_with_pass_rates(20, 16, 12)  # 0.80 -> 0.60
    out = compare_runs(baseline, current).to_dict()
    assert out["pass_rate"]["delta"] == pytest.approx(-0.2)
    assert [(f["metric"], f["severity"]) for f in out["flags"]] == [("pass_rate", "critical")]
    assert out["regressions"] == ["s12", "s13", "s14", "s15"]


def test_pass_rate_drop_between_threshold_and_ten_points_is_a_warning() -> None:
    baseline, current = _runs_with_pass_rates(25, 20, 18)  # 0.80 -> 0.72
    flags = compare_runs(baseline, current).to_dict()["flags"]
    assert [(f["metric"], f["severity"]) for f in flags] == [("pass_rate", "warning")]
    assert flags[0]["delta"] == pytest.approx(-0.08)


def test_pass_rate_drop_of_exactly_ten_points_is_not_critical() -> None:
    baseline, current = _runs_with_pass_rates(20, 16, 14)  # 0.80 -> 0.70
    flags = compare_runs(baseline, current).to_dict()["flags"]
    assert [(f["metric"], f["severity"]) for f in flags] == [("pass_rate", "warning")]


def test_drop_equal_to_threshold_is_not_flagged_despite_float_noise() -> None:
    # 0.70 - 0.75 is -0.05000000000000004 in floating point.
    baseline = [make_result("s1", ratios=(0.75, 0.6, 0.9))]
    current = [make_result("s1", ratios=(0.70, 0.6, 0.9))]
    assert compare_runs(baseline, current).flags == []
    current = [make_result("s1", ratios=(0.6999, 0.6, 0.9))]
    assert [f.metric for f in compare_runs(baseline, current).flags] == ["relevance"]


def test_criterion_drop_is_never_critical_and_rises_are_never_flagged() -> None:
    baseline = [make_result(f"s{i}", scores=(3, 1, 1)) for i in range(4)]
    current = [make_result(f"s{i}", scores=(1, 3, 3)) for i in range(4)]
    out = compare_runs(baseline, current).to_dict()
    assert out["criteria"]["effectiveness"]["delta"] == -1.0
    assert out["criteria"]["fluff"]["delta"] == 1.0
    # Four equal drops: the exact signed-rank test's two-sided p is 2 / 2^4.
    assert out["flags"] == [
        {
            "metric": "effectiveness",
            "delta": -1.0,
            "severity": "warning",
            "p_value": pytest.approx(2 / 2**4),
            "significant": False,
        }
    ]
    assert out["criteria"]["effectiveness"]["p_value"] == pytest.approx(2 / 2**4)
    # Four moved sessions cannot reach p < 0.05: the output says so.
    assert any("effectiveness dropped by 1.000 but only 4" in w for w in out["warnings"])


def test_threshold_is_configurable() -> None:
    baseline, current = _runs_with_pass_rates(20, 16, 14)
    assert compare_runs(baseline, current, threshold=0.15).flags == []
    with pytest.raises(ConfigError):
        compare_runs(baseline, current, threshold=-0.1)
    with pytest.raises(ConfigError):
        compare_runs(baseline, current, threshold=math.nan)


def test_errored_sessions_are_left_out_of_pass_rate_and_means() -> None:
    baseline = [make_result("s1", "pass"), make_result("s2", "pass"), make_result("s3", "fail")]
    current = [
        make_result("s1", "pass"),
        make_result("s2", error="judge kept returning invalid JSON"),
        make_result("s3", "fail", scores=(1, 1, 1)),
    ]
    out = compare_runs(baseline, current).to_dict()
    assert out["n_common"] == 3 and out["n_graded_both"] == 2
    assert out["pass_rate"]["baseline"] == 0.5 and out["pass_rate"]["current"] == 0.5
    assert out["regressions"] == []  # an error is not a failing verdict
    assert out["newly_errored"] == ["s2"]
    assert out["errored"] == {"baseline": 0, "current": 1}
    assert out["criteria"]["relevance"]["n_baseline"] == 2
    assert any("errored in the current run: s2" in w for w in out["warnings"])


def test_mcnemar_exact_p_on_a_known_table() -> None:
    # 2 pass->fail, 16 fail->pass, 30 concordant: exact two-sided p = 2 * P(X <= 2 | 18, 1/2).
    baseline = (
        [make_result(f"r{i}", "pass") for i in range(2)]
        + [make_result(f"f{i}", "fail") for i in range(16)]
        + [make_result(f"c{i}", "pass") for i in range(30)]
    )
    current = (
        [make_result(f"r{i}", "fail") for i in range(2)]
        + [make_result(f"f{i}", "pass") for i in range(16)]
        + [make_result(f"c{i}", "pass") for i in range(30)]
    )
    pr = compare_runs(baseline, current).to_dict()["pass_rate"]
    expected = 2 * sum(math.comb(18, k) for k in range(3)) / 2**18
    assert pr["p_value"] == pytest.approx(expected) and expected == pytest.approx(0.0013, abs=1e-4)
    assert pr["n_pairs"] == 48 and pr["n_moved"] == 18 and pr["significant"] is True
    assert pr["test"] == "mcnemar_exact"


def test_signed_rank_on_criteria_tells_noise_from_a_real_drop() -> None:
    base6 = [make_result(f"s{i}", scores=(3, 2, 3)) for i in range(6)]
    cur6 = [make_result(f"s{i}", scores=(2, 2, 3)) for i in range(6)]
    eff = compare_runs(base6, cur6).to_dict()["criteria"]["effectiveness"]
    assert eff["test"] == "wilcoxon_signed_rank_exact"
    assert eff["p_value"] == pytest.approx(2 / 2**6) and eff["significant"] is True
    # Nine drops, one rise, one unchanged session (dropped from the test as a zero). With equal
    # magnitudes the signed-rank test is a sign test: p = 2 * P(X <= 1 | 10, 1/2).
    base = [make_result(f"s{i}", scores=(2, 2, 3)) for i in range(11)]
    cur = [make_result(f"s{i}", scores=(1, 2, 3)) for i in range(9)]
    cur += [make_result("s9", scores=(3, 2, 3)), make_result("s10", scores=(2, 2, 3))]
    eff = compare_runs(base, cur).to_dict()["criteria"]["effectiveness"]
    assert eff["n_pairs"] == 11 and eff["n_moved"] == 10
    assert eff["p_value"] == pytest.approx(2 * 11 / 2**10) and eff["significant"] is True


def test_judge_change_is_reported_loudly() -> None:
    other = {**JUDGE, "model": "judge-2"}
    baseline = [make_result("s1"), make_result("s2")]
    current = [make_result("s1", judge=other), make_result("s2", judge=other)]
    cmp = compare_runs(baseline, current)
    out = cmp.to_dict()
    assert out["judge"]["changed"] is True
    assert out["judge"]["baseline"]["model"] == "judge-1"
    assert out["judge"]["current"]["model"] == "judge-2"
    assert out["judge"]["current"]["prompts"] == {"counting": "a" * 64, "scoring": "b" * 64}
    warning = next(w for w in out["warnings"] if w.startswith("judge changed"))
    assert "these deltas mix agent and judge changes" in warning
    assert "openai/judge-1 -> openai/judge-2" in warning
    text = render_text(cmp)
    assert text.splitlines()[1].startswith("!! judge changed")


def test_prompt_hash_change_counts_as_judge_change() -> None:
    prompts = {**JUDGE["prompts"], "scoring": {"name": "scoring", "sha256": "c" * 64}}
    other = {**JUDGE, "prompts": prompts}
    out = compare_runs([make_result("s1")], [make_result("s1", judge=other)]).to_dict()
    assert out["judge"]["changed"] is True
    assert any("scoring prompt bbbbbbbbbbbb -> cccccccccccc" in w for w in out["warnings"])


def test_missing_judge_info_is_unknown_not_unchanged() -> None:
    out = compare_runs([make_result("s1", judge=None)], [make_result("s1")]).to_dict()
    assert out["judge"]["changed"] is None and out["judge"]["baseline"] is None
    assert any("the baseline run records no judge" in w for w in out["warnings"])


def test_movers_sorted_by_size_of_move() -> None:
    baseline = [make_result(s, scores=(3, 3, 3)) for s in ("a", "b", "c", "d")]
    current = [
        make_result("a", scores=(3, 3, 3)),
        make_result("b", scores=(2, 3, 3)),
        make_result("c", scores=(1, 1, 1)),
        make_result("d", ratios=(1.0, 1.0, 1.0), scores=(3, 3, 3)),
    ]
    movers = compare_runs(baseline, current).to_dict()["movers"]
    assert [m["session_id"] for m in movers] == ["c", "d", "b"]
    assert movers[0]["criteria"] == {"effectiveness": -1.0, "fluff": -1.0, "structure": -1.0}
    assert movers[0]["delta"] == pytest.approx(-0.5)


def test_no_common_sessions_is_a_warning_not_a_crash() -> None:
    out = compare_runs([make_result("a")], [make_result("b")]).to_dict()
    assert out["n_common"] == 0 and out["pass_rate"]["baseline"] is None
    assert out["flags"] == []
    assert any("share no session ids" in w for w in out["warnings"])
    json.dumps(out, allow_nan=False)


def test_text_table_shows_every_metric_and_the_flags() -> None:
    baseline, current = _runs_with_pass_rates(20, 16, 12)
    text = render_text(compare_runs(baseline, current))
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    for metric in ("pass_rate", "relevance", "utilization", "grounding", "effectiveness"):
        assert metric in rows
    assert rows["pass_rate"].split()[1:4] == ["0.800", "0.600", "-0.200"]
    assert "CRITICAL" in rows["pass_rate"]
    assert "s12, s13, s14, s15" in text
    assert text.rstrip().splitlines()[-1].startswith("CRITICAL: 1 metric dropped")
