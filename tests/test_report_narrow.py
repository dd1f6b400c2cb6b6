"""The HTML report carries the run date and the judge's hashes, and fits a 390 px phone screen
(checked in headless chromium when it is installed; CI installs it best-effort)."""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.report import write_report
from research_judge.results.model import read_results

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPLAY = ["--provider", "scripted", "--model", "authored-lenient-judge", "--quiet",
          "--replay", str(FIXTURES / "recordings")]  # fmt: skip
# Runs inside a 390 px iframe (headless chromium will not make a window that narrow) and reports
# to the page around it everything that sticks out past the right edge, outside the tables
# (which scroll inside themselves on purpose).
PROBE = """<script>
const w = document.documentElement.clientWidth;
const wide = [...document.querySelectorAll("body *")].filter(
  e => !e.closest("table") && e.getBoundingClientRect().right > w + 1);
parent.document.body.setAttribute("data-probe", JSON.stringify({
  scroll: document.documentElement.scrollWidth, width: w,
  wide: wide.slice(0, 5).map(e => e.tagName + "." + e.className + "#" + e.id)}));
</script>"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("narrow")
    results, baseline = tmp / "results.jsonl", tmp / "baseline.jsonl"
    assert main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(results), *REPLAY]) == 0
    main(["grade", str(FIXTURES / "baseline" / "sessions.jsonl"), "--out", str(baseline), *REPLAY])
    page = tmp / "report.html"
    write_report(results, html=page, labels=FIXTURES / "labels.csv", baseline=baseline)
    return page


def test_the_report_names_the_run_date_and_the_judge_hashes(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    results = read_results(report.parent / "results.jsonl")
    judge = results[0].judge
    assert re.search(r"written \d{4}-\d\d-\d\d \d\d:\d\d UTC", text)
    assert re.search(r"report made \d{4}-\d\d-\d\d \d\d:\d\d UTC", text)
    [line] = re.findall(r'<p class="muted" id="judge-line">(.*?)</p>', text)
    assert f"{judge.provider}/{judge.model}" in html_lib.unescape(line)
    assert judge.fingerprint[:12] in line
    for ref in judge.prompts.values():
        assert ref.sha256[:12] in line


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


def test_the_report_fits_a_390_px_screen(report: Path, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on this machine: the 390 px layout check needs it")
    # A copy that may run the probe: the report's own policy forbids every script.
    text = report.read_text(encoding="utf-8")
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    framed = html_lib.escape(text.replace("</body>", PROBE + "</body>"), quote=True)
    probe_page = tmp_path / "probe.html"
    probe_page.write_text(
        '<!DOCTYPE html><html><body style="margin:0">'
        f'<iframe srcdoc="{framed}" style="width:390px;height:844px;border:0"></iframe>'
        "</body></html>",
        encoding="utf-8",
    )
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=800,900"]  # fmt: skip
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", probe_page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    [raw] = re.findall(r'data-probe="([^"]*)"', dom)
    probe = json.loads(html_lib.unescape(raw))
    assert probe["width"] <= 390
    assert probe["wide"] == [], probe
    assert probe["scroll"] <= probe["width"], probe
