"""`research_judge.pytest`: gates inside a team's own test suite, run through pytester."""

from __future__ import annotations

from pathlib import Path

import pytest

from research_judge.pytest import assert_judge_trusted, assert_no_regressions
from results_support import JUDGE, make_result, write_results

pytest_plugins = ["pytester"]


def run_file(path: Path, n_pass: int, n: int = 10, judge: dict[str, object] = JUDGE) -> str:
    results = [
        make_result(f"s{i}", "pass" if i < n_pass else "fail", judge=judge) for i in range(n)
    ]
    return str(write_results(path, results))


def test_fixtures_are_registered_by_the_entry_point(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    same = run_file(tmp_path / "b.jsonl", 8)
    worse = run_file(tmp_path / "c.jsonl", 6)
    # No verdict flips; structure one step lower on 3 of 10: a drop within noise.
    noisy = str(
        write_results(
            tmp_path / "n.jsonl",
            [
                make_result(f"s{i}", "pass" if i < 8 else "fail", scores=(3, 2, 2 if i < 3 else 3))
                for i in range(10)
            ],
        )
    )
    # The judge passes everything: it agrees on human passes only, so kappa is 0.
    lenient = write_results(tmp_path / "r.jsonl", [make_result(f"s{i}") for i in range(10)])
    labels = tmp_path / "labels.csv"
    rows = [f"s{i},{'pass' if i < 5 else 'fail'}" for i in range(10)]
    labels.write_text("session_id,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    pytester.makepyfile(
        f"""
        def test_unchanged(assert_no_regressions):
            cmp = assert_no_regressions({same!r}, {same!r})
            assert cmp.n_common == 10

        def test_worse(assert_no_regressions):
            assert_no_regressions({same!r}, {worse!r})

        def test_worse_but_within_noise(assert_no_regressions):
            assert_no_regressions({same!r}, {noisy!r})

        def test_within_noise_fails_on_any(assert_no_regressions):
            assert_no_regressions({same!r}, {noisy!r}, fail_on="any")

        def test_trusted(assert_judge_trusted):
            assert_judge_trusted({str(lenient)!r}, {str(labels)!r}, min_kappa=0.6)
        """
    )
    # A subprocess: numpy cannot be imported twice in one process, as an in-process run would.
    result = pytester.runpytest_subprocess("-p", "no:asyncio")
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*research-judge: 1 gate(s) failed on 10 common sessions",
            "*no regressions: 2 sessions passed in the baseline and fail now",
            "*regressions (pass -> fail): s6, s7",
        ]
    )
    result.stdout.fnmatch_lines(["*structure: structure dropped by 0.150 (warning, threshold*"])
    result.stdout.fnmatch_lines(
        [
            "*the judge is not trusted on 10 labelled sessions",
            "*min-kappa: kappa undefined (judge used a single label): below 0.6",
        ]
    )


def test_helpers_import_and_return_the_reports(tmp_path: Path) -> None:
    base = run_file(tmp_path / "b.jsonl", 8)
    results = [make_result(f"s{i}", "pass" if i < 5 else "fail") for i in range(10)]
    labels = {f"s{i}": "pass" if i < 5 else "fail" for i in range(10)}

    assert assert_no_regressions(base, base).regressions == []
    report = assert_judge_trusted(results, labels, min_kappa=0.9, min_fail_agreement=1.0)
    assert report.pass_fail.cohen_kappa == pytest.approx(1.0)


def test_a_changed_judge_fails_unless_allowed(tmp_path: Path) -> None:
    base = run_file(tmp_path / "b.jsonl", 8)
    other = run_file(tmp_path / "c.jsonl", 8, judge={**JUDGE, "model": "judge-2"})
    with pytest.raises(AssertionError, match="judge unchanged: judge changed"):
        assert_no_regressions(base, other)
    assert_no_regressions(base, other, allow_judge_change=True)


def test_nothing_compared_is_a_failure_and_no_bar_is_a_mistake(tmp_path: Path) -> None:
    a = run_file(tmp_path / "a.jsonl", 5)
    b = write_results(tmp_path / "b.jsonl", [make_result("other")])
    with pytest.raises(AssertionError, match="share no session"):
        assert_no_regressions(a, b)
    with pytest.raises(TypeError, match="no bar"):
        assert_judge_trusted(a, {"s0": "pass"})


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    # pytest loads the plugin in every test run of a project that installed research-judge.
    import subprocess
    import sys

    heavy = ("numpy", "pydantic", "scipy", "sklearn", "openai", "anthropic", "jinja2")
    code = (
        "import sys, research_judge.pytest\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
