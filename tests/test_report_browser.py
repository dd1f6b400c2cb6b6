"""The HTML report's first screen, measured in a real browser at 390 and 1280 px.

Selenium drives Debian's chromium through chromium-driver (``apt install chromium
chromium-driver``); the test is skipped, saying why, when either is missing. It measures, not
screenshots: where each part of the page starts, that the daily answer is on the first screen,
that its links lead to the sessions' cards, that nothing sticks out past the right edge, and that
no table cell is squeezed into letter-by-letter wrapping.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.report import write_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPLAY = ["--provider", "scripted", "--model", "authored-lenient-judge", "--quiet",
          "--replay", str(FIXTURES / "recordings")]  # fmt: skip
WIDTHS = (390, 1280)
HEIGHT = 844  # a phone's screen; the desktop check uses the same first screen
# The page in reading order: the answer against the baseline (verdict, per-metric deltas,
# regressed and fixed sessions), the judge-trust sentence, then the worst sessions, the
# distributions, the context and the cost.
ORDER = (
    "answer",
    "deltas",
    "regressed-list",
    "fixed-list",
    "trust",
    "worst",
    "criteria",
    "context",
    "cost",
)

MEASURE = """
const top = id => { const e = document.getElementById(id);
  return e ? e.getBoundingClientRect().top + window.scrollY : null; };
const width = document.documentElement.clientWidth;
const sticking = [...document.querySelectorAll("body *")].filter(
  e => !e.closest("table") && e.getBoundingClientRect().right > width + 1);
// Lines a cell's text takes against the words it holds: squeezed letter by letter, a cell
// takes more lines than it has words.
const lines = el => { const tops = new Set();
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const r = document.createRange(); r.selectNodeContents(n);
    for (const x of r.getClientRects()) if (x.width > 0) tops.add(Math.round(x.top)); }
  return tops.size; };
// A word may break at its hyphens; a hash or URL (a token past 30 characters) has to break
// somewhere and is left out.
const words = text => text.split(/[\\s-]+/).filter(w => w);
const squeezed = [...document.querySelectorAll("td, th, .card")]
  .map(e => ({text: e.innerText.trim(), lines: lines(e)}))
  .filter(c => c.text && !words(c.text).some(w => w.length > 30))
  .filter(c => c.lines > words(c.text).length)
  .slice(0, 5);
const links = [...document.querySelectorAll("#headline ul.ids a")].map(a => {
  const target = document.getElementById(a.getAttribute("href").slice(1));
  return {id: a.innerText, card: target ? target.className : null,
          heading: target ? target.querySelector("h3").innerText : null}; });
return {tops: Object.fromEntries(arguments[0].map(id => [id, top(id)])),
        width: width, scroll: document.documentElement.scrollWidth,
        viewport: window.innerHeight,
        sticking: sticking.slice(0, 5).map(e => e.tagName + "#" + e.id + "." + e.className),
        squeezed: squeezed, links: links};
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    results, baseline = tmp / "results.jsonl", tmp / "baseline.jsonl"
    assert main(["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(results), *REPLAY]) == 0
    base = FIXTURES / "baseline" / "sessions.jsonl"
    assert main(["grade", str(base), "--out", str(baseline), *REPLAY]) == 0
    page = tmp / "report.html"
    write_report(results, html=page, labels=FIXTURES / "labels.csv", baseline=baseline)
    return page


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("chromium and chromium-driver are not installed (apt install both)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--disable-background-networking",
        "--no-first-run",
    ):
        options.add_argument(flag)  # fmt: skip
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def measured(request: pytest.FixtureRequest, browser: Any, report: Path) -> dict[str, Any]:
    browser.set_window_size(request.param, HEIGHT)
    browser.get(report.as_uri())
    found: dict[str, Any] = browser.execute_script(MEASURE, list(ORDER))
    assert found["width"] == request.param  # the viewport really is this narrow
    return found


def test_the_first_screen_is_the_daily_answer_in_reading_order(measured: dict[str, Any]) -> None:
    tops = measured["tops"]
    assert None not in tops.values(), tops
    assert [tops[part] for part in ORDER] == sorted(tops[part] for part in ORDER), tops
    # The verdict against the baseline is on the first screen, without scrolling.
    assert tops["answer"] < measured["viewport"], tops


def test_the_regressed_and_fixed_sessions_link_to_their_cards(measured: dict[str, Any]) -> None:
    links = measured["links"]
    assert {link["id"] for link in links} == {"s-0016", "s-0013", "s-0019"}
    for link in links:
        assert link["card"] == "session", link
        assert link["heading"].startswith(link["id"]), link


def test_nothing_sticks_out_past_the_right_edge(measured: dict[str, Any]) -> None:
    assert measured["sticking"] == []
    assert measured["scroll"] <= measured["width"]


def test_no_table_cell_wraps_letter_by_letter(measured: dict[str, Any]) -> None:
    assert measured["squeezed"] == []
