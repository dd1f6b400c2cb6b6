"""`research-judge label` in a real headless browser (Selenium driving Debian's chromium through
chromium-driver; CI installs both best-effort, and without them these tests skip and say why):
labelling by keys, undo, resume after kill -9, the blind default, hostile session text shown as
text, and the per-run token."""

from __future__ import annotations

import csv
import json
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

selenium = pytest.importorskip(
    "selenium", reason="selenium is not installed (pip install -e .[dev])"
)
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

HOSTILE_QUESTION = '<img src=x onerror="window.__pwned=1">Is this <b>safe</b>?'
HOSTILE_ANSWER = "</script><script>window.__pwned=2</script> It says so [h1], and more [h2, h1]."
SESSIONS = [
    {
        "id": "hostile",
        "question": HOSTILE_QUESTION,
        "answer": HOSTILE_ANSWER,
        "trajectory": [
            {
                "id": "h1",
                "title": "<i>title</i>",
                "url": "javascript:window.__pwned=3",
                "content": "<iframe src=about:blank></iframe> the grid alpha report",
                "tool": "web_search",
            },
            {"id": "h2", "title": "Second", "url": "https://example.org/x", "content": "beta"},
        ],
    },
    *(
        {"id": f"s-{i}", "question": f"Question {i}?", "answer": f"Answer {i}.", "trajectory": []}
        for i in range(1, 4)
    ),
]


def _chromium() -> tuple[str, str] | None:
    browser = next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))),
        None,
    )
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    found = _chromium()
    if found is None:
        pytest.skip("no chromium and chromedriver on this machine (apt install chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--disable-background-networking", "--disable-sync"]  # fmt: skip
    for flag in flags:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=found[1]), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


class Server:
    def __init__(self, tmp: Path, *extra: str, input_path: Path | None = None) -> None:
        self.labels = tmp / "labels.csv"
        sessions = tmp / "sessions.jsonl"
        if not sessions.exists():
            sessions.write_text("".join(json.dumps(s) + "\n" for s in SESSIONS), encoding="utf-8")
        inputs = input_path or sessions
        args = [sys.executable, "-m", "research_judge", "label", str(inputs), "--labels",
                str(self.labels), "--annotator", "ann", *extra]  # fmt: skip
        self.proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        assert first.startswith("labelling at http://127.0.0.1:"), first + self.proc.stderr.read()
        self.url = first.split()[-1]

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)

    def rows(self) -> list[dict[str, str]]:
        with self.labels.open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))

    def token(self) -> str:
        with urllib.request.urlopen(self.url, timeout=30) as response:
            page = response.read().decode()
        return page.split('name="label-token" content="', 1)[1].split('"', 1)[0]

    def request(self, path: str, body: Any = None, **headers: str) -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path.lstrip("/"), data=data, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    try:
        yield s
    finally:
        s.stop()


def wait_text(driver: webdriver.Chrome, element_id: str, text: str) -> None:
    WebDriverWait(driver, 30).until(
        lambda d: d.find_element(By.ID, element_id).text == text,
        message=f"#{element_id} never read {text!r}",
    )


def press(driver: webdriver.Chrome, *keys: str) -> None:
    body = driver.find_element(By.TAG_NAME, "body")
    for key in keys:
        body.send_keys(key)


def open_page(driver: webdriver.Chrome, server: Server, progress: str) -> None:
    driver.get(server.url)
    wait_text(driver, "progress", progress)


def test_labelling_by_keys_with_a_note_skip_undo_and_help(
    browser: webdriver.Chrome, server: Server
) -> None:
    open_page(browser, server, "0 / 4 labelled")
    assert browser.find_element(By.ID, "session-id").text == "hostile"
    press(browser, "p")
    wait_text(browser, "progress", "1 / 4 labelled")
    assert browser.find_element(By.ID, "session-id").text == "s-1"
    assert [(r["session_id"], r["label"], r["annotator"]) for r in server.rows()] == [
        ("hostile", "pass", "ann")
    ]
    # n focuses the note; keys typed there are text, not actions; Esc leaves it.
    press(browser, "n")
    note = browser.find_element(By.ID, "note")
    note.send_keys("=HYPERLINK(1) p f")
    note.send_keys(Keys.ESCAPE)
    assert server.rows()[-1]["session_id"] == "hostile"  # typing "p f" labelled nothing
    press(browser, "f")
    wait_text(browser, "progress", "2 / 4 labelled")
    last = server.rows()[-1]
    assert (last["session_id"], last["label"]) == ("s-1", "fail")
    assert last["note"] == "'=HYPERLINK(1) p f"  # neutralised for spreadsheets
    assert last["labelled_at"].endswith("Z")
    # s skips (no row), u undoes the last saved label and shows that session again.
    press(browser, "s")
    wait_text(browser, "session-id", "s-3")
    assert len(server.rows()) == 2
    press(browser, "u")
    wait_text(browser, "progress", "1 / 4 labelled")
    wait_text(browser, "session-id", "s-1")
    assert [r["session_id"] for r in server.rows()] == ["hostile"]
    help_box = browser.find_element(By.ID, "help")
    assert not help_box.is_displayed()
    press(browser, "?")
    WebDriverWait(browser, 10).until(lambda d: help_box.is_displayed())
    assert "undoes the last label" in help_box.text
    # The file is a labels file validate reads as it is.
    from research_judge.validate import read_labels

    assert read_labels(server.labels).annotations == {
        "hostile": {"ann": read_labels(server.labels).annotations["hostile"]["ann"]}
    }


def test_hostile_session_text_is_shown_as_text(browser: webdriver.Chrome, server: Server) -> None:
    open_page(browser, server, "0 / 4 labelled")
    assert browser.find_element(By.ID, "question").text == HOSTILE_QUESTION
    assert browser.find_element(By.ID, "answer").text == HOSTILE_ANSWER
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.find_elements(By.CSS_SELECTOR, "main img, main iframe, main b, main i") == []
    # Citation markers link to the references they cite; a click opens that reference.
    cites = browser.find_elements(By.CSS_SELECTOR, "#answer a.cite")
    assert [c.text for c in cites] == ["h1", "h2", "h1"]
    first = browser.find_element(By.ID, "ref-0")
    assert first.get_attribute("open") is None
    cites[0].click()
    WebDriverWait(browser, 10).until(lambda d: first.get_attribute("open") is not None)
    assert "<iframe src=about:blank></iframe> the grid alpha report" in first.text
    assert "<i>title</i>" in first.text and "tool: web_search" in first.text
    # A javascript: URL is text, never a link; a web URL is a link.
    hrefs = [
        a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#references a")
    ]
    assert hrefs == ["https://example.org/x"]
    assert "javascript:window.__pwned=3" in first.text
    # The trajectory is searchable.
    search = browser.find_element(By.ID, "search")
    search.send_keys("beta")
    WebDriverWait(browser, 10).until(lambda d: not first.is_displayed())
    assert browser.find_element(By.ID, "ref-1").is_displayed()
    assert browser.find_element(By.ID, "matches").text == "1 match"


def test_resume_after_kill_9_loses_nothing(browser: webdriver.Chrome, tmp_path: Path) -> None:
    first = Server(tmp_path)
    try:
        open_page(browser, first, "0 / 4 labelled")
        press(browser, "p")
        wait_text(browser, "progress", "1 / 4 labelled")
        press(browser, "f")
        wait_text(browser, "progress", "2 / 4 labelled")
    finally:
        first.stop(signal.SIGKILL)
    assert first.proc.returncode == -signal.SIGKILL
    assert [(r["session_id"], r["label"]) for r in first.rows()] == [
        ("hostile", "pass"),
        ("s-1", "fail"),
    ]
    again = Server(tmp_path)
    try:
        open_page(browser, again, "2 / 4 labelled")
        assert browser.find_element(By.ID, "session-id").text == "s-2"
        press(browser, "p")
        wait_text(browser, "progress", "3 / 4 labelled")
        assert [r["session_id"] for r in again.rows()] == ["hostile", "s-1", "s-2"]
    finally:
        again.stop()


def _results(tmp: Path) -> Path:
    path = tmp / "results.jsonl"
    lines = [
        {"session_id": s["id"], "verdict": "fail", "verdict_reasons": ["effectiveness 1 < 2"],
         "question": s["question"]}
        for s in SESSIONS
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("show", [False, True])
def test_the_judge_is_hidden_unless_asked(
    browser: webdriver.Chrome, tmp_path: Path, show: bool
) -> None:
    results = _results(tmp_path)
    flags = ["--show-judge"] if show else []
    sessions = ["--sessions", str(tmp_path / "sessions.jsonl")]
    s = Server(tmp_path, *sessions, "--order", "input", *flags, input_path=results)
    try:
        open_page(browser, s, "0 / 4 labelled")
        page = browser.find_element(By.TAG_NAME, "body").text
        judge = browser.find_element(By.ID, "judge")
        status, state = s.request("/api/state", **{"X-Label-Token": s.token()})
        assert status == 200
        if show:
            assert judge.is_displayed() and "Judge verdict: fail" in judge.text
            assert state["session"]["judge"]["verdict"] == "fail"
        else:
            assert not judge.is_displayed() and "verdict" not in page.lower()
            assert "judge" not in state["session"]  # never sent to the page at all
    finally:
        s.stop()


def test_state_changing_requests_need_the_runs_token(server: Server) -> None:
    token = server.token()
    label = {"session_id": "hostile", "label": "pass"}
    json_type = {"Content-Type": "application/json"}
    assert server.request("/api/state")[0] == 403
    assert server.request("/api/label", label, **json_type)[0] == 403
    assert server.request("/api/label", label, **json_type, **{"X-Label-Token": "guess"})[0] == 403
    # A page on another site: even with the token its Origin is refused.
    evil = {"Origin": "http://evil.example", "X-Label-Token": token, **json_type}
    assert server.request("/api/label", label, **evil)[0] == 403
    # A cross-site form post cannot send JSON without a preflight; form bodies are refused.
    form = {"Content-Type": "application/x-www-form-urlencoded", "X-Label-Token": token}
    assert server.request("/api/label", label, **form)[0] == 415
    # A label for a session that is not in INPUT is refused and writes nothing.
    ghost = {"session_id": "ghost", "label": "pass"}
    status, body = server.request("/api/label", ghost, **json_type, **{"X-Label-Token": token})
    assert status == 404 and "not in the input" in body["error"]
    assert server.rows() == []
    status, state = server.request("/api/label", label, **json_type, **{"X-Label-Token": token})
    assert status == 200 and state["progress"] == "1 / 4 labelled"
    assert [r["session_id"] for r in server.rows()] == ["hostile"]
    # The page names this server only: another Host (DNS rebinding) is refused.
    req = urllib.request.Request(server.url, headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=30)
    assert err.value.code == 403


def test_the_server_binds_loopback_only(server: Server) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    port = int(server.url.rsplit(":", 1)[1].strip("/"))
    out = subprocess.run(["ss", "-ltn"], capture_output=True, text=True, check=False).stdout
    if not out:
        pytest.skip("ss is not available to list listening sockets")
    listening = [line for line in out.splitlines() if f":{port} " in line]
    assert listening and all("127.0.0.1:" in line for line in listening), listening


def test_the_page_loads_nothing_from_elsewhere(server: Server) -> None:
    with urllib.request.urlopen(server.url, timeout=30) as response:
        page = response.read().decode()
        policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "img-src 'none'" in policy and "form-action 'none'" in policy
    # No external script, style, font or image: everything is inline in this one document.
    for attribute in (" src=", "<link", "@import", "url("):
        assert attribute not in page, attribute
