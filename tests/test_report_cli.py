"""`research-judge report` and ``write_report`` end to end: files, flags, labels, a browser."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from report_support import SECTIONS, scan
from research_judge.cli import main
from research_judge.errors import ConfigError
from research_judge.report import write_report
from research_judge.results.model import Result
from results_support import make_result, write_results

QUESTION = "Does <script>document.title='pwned'</script> run?"


def graded_run(n: int = 12) -> list[Result]:
    """``n`` sessions alternating pass/fail, scores falling with the index, one error."""
    out = [
        make_result(
            f"s{i:02d}",
            "pass" if i % 2 == 0 else "fail",
            scores=(3 - i % 3, 2, 3),
            question=QUESTION if i == 1 else f"Question {i}",
        )
        for i in range(n - 1)
    ]
    return [*out, make_result(f"s{n - 1:02d}", error="provider timed out")]


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    return write_results(tmp_path / "results.jsonl", graded_run())


def test_cli_writes_html_and_markdown(
    results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html, md = tmp_path / "out" / "report.html", tmp_path / "report.md"
    code = main(["report", str(results_file), "--html", str(html), "--md", str(md)])
    assert code == 0
    assert f"wrote {html}" in capsys.readouterr().out
    page = scan(html.read_text(encoding="utf-8"))
    assert set(SECTIONS) <= set(page.ids) and page.external == []
    assert "| 12 | 11 | 1 |" in md.read_text(encoding="utf-8")
    assert not list(tmp_path.glob("out/.report.html.*")), "temporary files are cleaned up"
    assert html.stat().st_mode & 0o044, "a shared report must not be private to its writer"


def test_cli_needs_an_output(results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(results_file)]) == 2
    assert "give --html OUT.html and/or --md OUT.md" in capsys.readouterr().err


def test_bad_results_line_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(make_result("a").to_json_line() + '{"session_id": 3}\n', encoding="utf-8")
    html = tmp_path / "r.html"
    assert main(["report", str(bad), "--html", str(html)]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err
    assert not html.exists()


def test_bad_baseline_exits_2(results_file: Path, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    missing = tmp_path / "missing.jsonl"
    assert main(["report", str(results_file), "--baseline", str(missing), "--md", str(html)]) == 2


def test_worst_flag_limits_the_sessions_shown(results_file: Path, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    assert main(["report", str(results_file), "--html", str(html), "--worst", "2"]) == 0
    ids = scan(html.read_text(encoding="utf-8")).ids
    assert [i for i in ids if i.startswith("worst-")] == ["worst-1", "worst-2"]


def test_write_report_with_baseline_shows_regressions(results_file: Path, tmp_path: Path) -> None:
    baseline = write_results(tmp_path / "old.jsonl", [make_result(f"s{i:02d}") for i in range(12)])
    md = tmp_path / "r.md"
    write_report(results_file, md=md, baseline=baseline)
    text = md.read_text(encoding="utf-8")
    assert "**Regressions (pass → fail): 5**" in text
    assert "- **critical**: pass\\_rate dropped by" in text
    for sid in ("s01", "s03", "s05", "s07", "s09"):
        assert f"- {sid} —" in text


def test_markdown_caps_a_long_regression_list(tmp_path: Path) -> None:
    current = write_results(
        tmp_path / "new.jsonl", [make_result(f"s{i:02d}", "fail") for i in range(25)]
    )
    baseline = write_results(tmp_path / "old.jsonl", [make_result(f"s{i:02d}") for i in range(25)])
    md = tmp_path / "r.md"
    write_report(current, md=md, baseline=baseline)
    text = md.read_text(encoding="utf-8")
    assert "**Regressions (pass → fail): 25**" in text
    lines = text.splitlines()
    assert "- s19" in lines and "- s20" not in lines
    assert "- … and 5 more (see the HTML report)" in text
    assert "| pass\\_rate | 1.000 | 0.000 | -1.000 | significant drop | &lt;0.001 |" in text


def test_write_report_refuses_no_output(results_file: Path) -> None:
    with pytest.raises(ConfigError):
        write_report(results_file)


def test_write_report_with_real_labels(results_file: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    # Humans agree with the judge except on s01 (judge fail, human pass).
    rows = [f"s{i:02d},{'pass' if i % 2 == 0 or i == 1 else 'fail'}" for i in range(11)]
    labels.write_text("session_id,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    html = tmp_path / "r.html"
    write_report(results_file, html=html, labels=labels)
    text = scan(html.read_text(encoding="utf-8")).visible_text
    section = text.split("Judge vs human labels", 1)[1].split("Worst sessions", 1)[0]
    assert "Labelled sessions compared: 11" in section
    assert "judge pass judge fail human pass 6 1 human fail 0 4" in section
    assert "Raw agreement 90.9%" in section
    assert "No human labels given" not in text


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def test_html_renders_in_a_headless_browser(results_file: Path, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on this machine: the headless render check needs it")
    html = tmp_path / "r.html"
    write_report(results_file, html=html, md=None)
    profile = tmp_path / "profile"
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", html.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    page = scan(dom)
    assert set(SECTIONS) <= set(page.ids)
    # The browser parsed the question as text: no script element, and the title was not changed.
    assert "script" not in page.tags and "pwned" not in dom.split("<body", 1)[0]
    assert QUESTION in page.visible_text
    shot = tmp_path / "shot.png"
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", "--window-size=1200,2000", html.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
