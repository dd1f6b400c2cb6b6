"""Is the judge good enough to gate on, and what is the run's true pass rate?

`validate --min-kappa --min-fail-agreement` (exit 1 below a bar, 0 otherwise, 2 on bad input)
and the Rogan-Gladen corrected pass rate, checked against hand-derived values and an
independent delta-method interval.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.stats.intervals import wilson
from research_judge.validate.agreement import Table2x2
from research_judge.validate.labels import HumanLabel, Labels
from research_judge.validate.prevalence import corrected_pass_rate, rogan_gladen
from research_judge.validate.report import validate_run
from results_support import make_result


def run_with_unlabelled(
    table: tuple[int, int, int, int], unlabelled_pass: int, unlabelled_fail: int
) -> tuple[list, Labels]:
    a, b, c, d = table
    results, labels = [], {}
    for human, judge, count in (
        ("pass", "pass", a),
        ("pass", "fail", b),
        ("fail", "pass", c),
        ("fail", "fail", d),
    ):
        for _ in range(count):
            sid = f"s{len(results)}"
            results.append(make_result(sid, judge))
            labels[sid] = HumanLabel(sid, human)  # type: ignore[arg-type]
    for verdict, count in (("pass", unlabelled_pass), ("fail", unlabelled_fail)):
        results += [make_result(f"u{verdict}{i}", verdict) for i in range(count)]
    results.append(make_result("broken", error="judge said nothing"))  # never counted
    return results, Labels("labels.csv", labels)


def test_lenient_judges_85_percent_reads_as_what_it_is() -> None:
    # Sensitivity 45/50 = 0.9, specificity 30/50 = 0.6; 700 of the run's 1000 graded sessions
    # pass (the errored one is not counted). By hand: (0.70 + 0.6 - 1) / (0.9 + 0.6 - 1) = 0.6.
    results, labels = run_with_unlabelled((45, 5, 20, 30), 700 - 65, 300 - 35)
    report = validate_run(results, labels, n_boot=4000).to_dict()
    assert report["run_graded"] == 1000 and report["run_pass_rate"] == pytest.approx(0.7)
    assert report["corrected_pass_rate"] == pytest.approx(0.6)
    low, high = report["corrected_pass_rate_ci"]
    assert low < 0.6 < high
    assert "bootstrap" in report["corrected_pass_rate_method"]


def test_rogan_gladen_clips_to_the_unit_interval_and_refuses_a_chance_judge() -> None:
    assert rogan_gladen(0.95, 0.9, 0.8) == 1.0  # (0.95 + 0.8 - 1) / 0.7 = 1.07
    assert rogan_gladen(0.05, 0.9, 0.8) == 0.0  # (0.05 - 0.2) / 0.7 < 0
    assert rogan_gladen(0.5, 0.5, 0.5) is None  # no better than chance: nothing to invert
    out = corrected_pass_rate(50, 100, Table2x2(10, 10, 10, 10), seed=0, n_boot=100)
    assert out.value is None and out.undefined and "no better than chance" in out.undefined


@pytest.mark.parametrize("n_boot", [2000, 0])  # bootstrap, and the delta method (--bootstrap 0)
@pytest.mark.parametrize(
    ("passed", "graded", "table"),
    [(98, 100, (18, 2, 4, 16)), (9900, 10_000, (900, 100, 200, 800))],
)
def test_the_interval_is_clipped_like_the_estimate(
    passed: int, graded: int, table: tuple[int, int, int, int], n_boot: int
) -> None:
    # A run passing 98-99% with specificity 0.8 corrects to above 1 before clipping (the second
    # so precisely that the whole unclipped interval lies above 1): the interval stays inside
    # [0, 1], in order, and reaches its top, as the estimate does.
    out = corrected_pass_rate(passed, graded, Table2x2(*table), seed=3, n_boot=n_boot)
    assert out.value == 1.0
    assert out.ci is not None and 0.0 <= out.ci[0] <= out.ci[1] == 1.0


@pytest.mark.parametrize("table", [(400, 100, 150, 350), (900, 100, 200, 800)])
def test_bootstrap_interval_agrees_with_an_independent_delta_method(
    table: tuple[int, int, int, int],
) -> None:
    # Large samples, estimate well inside (0, 1): the percentile interval and the normal
    # interval from the delta method (derivatives of the Rogan-Gladen formula, by hand) agree.
    t = Table2x2(*table)
    passed, graded = 6000, 10_000
    boot = corrected_pass_rate(passed, graded, t, seed=1, n_boot=20_000)
    sens, spec, raw = t.a / (t.a + t.b), t.d / (t.c + t.d), passed / graded
    j = sens + spec - 1
    theta = (raw + spec - 1) / j
    sd = (
        math.sqrt(
            raw * (1 - raw) / graded
            + theta**2 * sens * (1 - sens) / (t.a + t.b)
            + (1 - theta) ** 2 * spec * (1 - spec) / (t.c + t.d)
        )
        / j
    )
    assert boot.value == pytest.approx(theta)
    assert boot.ci == pytest.approx((theta - 1.96 * sd, theta + 1.96 * sd), abs=0.006)
    delta = corrected_pass_rate(passed, graded, t, seed=1, n_boot=0)
    assert delta.ci == pytest.approx((theta - 1.959964 * sd, theta + 1.959964 * sd), rel=1e-5)
    assert delta.method.startswith("delta method")


def test_corrected_rate_is_null_with_a_reason_when_a_human_class_is_missing() -> None:
    results, labels = run_with_unlabelled((10, 2, 0, 0), 5, 5)
    report = validate_run(results, labels, n_boot=200).to_dict()
    assert report["corrected_pass_rate"] is None and report["corrected_pass_rate_ci"] is None
    assert "no human fails labelled" in report["corrected_pass_rate_undefined"]
    assert any(w.startswith("corrected_pass_rate undefined") for w in report["warnings"])


def write(tmp_path: Path, table: tuple[int, int, int, int]) -> tuple[str, str]:
    results, labels = run_with_unlabelled(table, 3, 2)
    rpath, lpath = tmp_path / "results.jsonl", tmp_path / "labels.csv"
    rpath.write_text("".join(r.model_dump_json() + "\n" for r in results), encoding="utf-8")
    rows = ["session_id,label", *(f"{k},{v.label}" for k, v in labels.items.items())]
    lpath.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(rpath), str(lpath)


def test_gates_exit_1_naming_the_bar_that_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, labels = write(tmp_path, (66, 2, 16, 16))  # kappa 0.53, 50% of human fails
    args = ["validate", results, "--labels", labels, "--bootstrap", "500"]
    assert main([*args, "--min-kappa", "0.5", "--min-fail-agreement", "0.8"]) == 1
    captured = capsys.readouterr()
    assert "gate failed: agreement on human fails 0.500" in captured.err
    assert "below the bar 0.8 (--min-fail-agreement)" in captured.err
    assert "--min-kappa" not in captured.err  # 0.53 meets 0.5
    assert "Gates: FAILED" in captured.out and "ok   kappa 0.532" in captured.out
    assert main([*args, "--min-kappa", "0.6", "--json"]) == 1
    gates = json.loads(capsys.readouterr().out)["gates"]
    assert gates["passed"] is False
    assert gates["bars"][0] | {"ci": None} == {
        "statistic": "cohen_kappa",
        "flag": "--min-kappa",
        "bar": 0.6,
        "value": pytest.approx(0.5322, abs=1e-4),
        "ci": None,
        "passed": False,
        "message": gates["bars"][0]["message"],
    }
    assert main([*args, "--min-kappa", "0.5", "--min-fail-agreement", "0.5"]) == 0
    assert "Gates: PASSED" in capsys.readouterr().out


def test_no_bars_no_gates_and_undefined_kappa_fails_its_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, labels = write(tmp_path, (20, 0, 10, 0))  # the judge passes everything
    args = ["validate", results, "--labels", labels, "--bootstrap", "0"]
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gates"] == {"passed": None, "bars": []}
    assert main([*args, "--min-kappa", "0.2"]) == 1
    assert "kappa undefined (judge used a single label)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "bad", [["--min-kappa", "1.5"], ["--min-fail-agreement", "-0.1"], ["--min-kappa", "nan"]]
)
def test_bad_bars_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: list[str]
) -> None:
    results, labels = write(tmp_path, (10, 2, 3, 9))
    assert main(["validate", results, "--labels", labels, *bad]) == 2
    assert bad[0] in capsys.readouterr().err


def test_html_and_markdown_show_the_bars_and_the_corrected_rate() -> None:
    from research_judge.report import build_report, render_html, render_markdown

    results, labels = run_with_unlabelled((66, 2, 16, 16), 10, 5)
    agreement = validate_run(results, labels, n_boot=500, min_kappa=0.6, min_fail_agreement=0.4)
    data = build_report(results, agreement=agreement)
    html, md = render_html(data), render_markdown(data)
    for page in (html, md):
        assert "Pass rate corrected for judge errors (Rogan-Gladen)" in page
        assert "FAILED: kappa 0.532" in page and "below the bar 0.6 (--min-kappa)" in page
        assert "ok: agreement on human fails 0.500" in page
        assert "Gates: FAILED" in page
        assert "do not trust this judge to catch failures" in page


def test_a_judge_perfect_on_few_labels_does_not_make_the_corrected_rate_certain() -> None:
    # No disagreement on 20 human passes and 10 human fails: sensitivity and specificity are
    # 1 as observed, but 10 of 10 only bounds specificity to its Wilson interval
    # [10 / (10 + z^2), 1] = [0.72, 1], and 20 of 20 bounds sensitivity to [0.84, 1]. By hand,
    # with the run's raw rate 0.7: specificity 0.72 gives (0.7 + 0.72 - 1) / 0.72 = 0.585,
    # sensitivity 0.84 gives 0.7 / 0.84 = 0.83. An interval that carries both uncertainties
    # must reach well beyond the raw rate's own Wilson interval [0.671, 0.728].
    t = Table2x2(20, 0, 0, 10)
    raw_low, raw_high = wilson(700, 1000) or (0.0, 0.0)
    boot = corrected_pass_rate(700, 1000, t, seed=3, n_boot=20_000)
    assert boot.value == pytest.approx(0.7)
    assert boot.ci is not None
    low, high = boot.ci
    assert low < 0.65 < raw_low and high > 0.75 > raw_high
    # The delta method has no derivative to carry at a rate of exactly 0 or 1: no interval,
    # with the reason, rather than the raw rate's interval passed off as the corrected one's.
    delta = corrected_pass_rate(700, 1000, t, seed=3, n_boot=0)
    assert delta.ci is None and delta.undefined is not None
    assert "0 or 1" in delta.undefined
