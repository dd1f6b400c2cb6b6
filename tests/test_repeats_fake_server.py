"""`grade --repeats 3` end to end over HTTP: the fake OpenAI server answers each sample of a call
differently, and the samples must stay apart in the cache and in recordings, combine to the
majority verdict, and give `stability` the Fleiss' kappa statsmodels computes from the votes.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from research_judge.cli import main
from research_judge.results.model import read_results
from research_judge.testing.shown import RequestShown

from support import counting_reply, scoring_reply, session, write_sessions

# How many of a session's three scoring samples the fake answers with effectiveness 1 (a fail).
FAILS = {"s-0": 0, "s-1": 1, "s-2": 2, "s-3": 3}
# A request carries no session id: the fake tells the sessions apart by their questions.
BY_QUESTION = {session(sid)["question"]: sid for sid in FAILS}


class SampleVaryingResponder:
    """Counts scoring requests per session: the first FAILS[sid] of them get a failing score.

    The three samples of a call have identical bodies on the wire, so the server can only tell
    them apart by arrival; whichever arrives first, each session gets exactly FAILS[sid] fails.
    """

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.shown = RequestShown()

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> str:
        # What the request shows, read back from its body: the call, question and references.
        shown = self.shown.read_body(body)
        sid = BY_QUESTION[shown.question]
        if shown.call == "counting":
            ids = [ref.id for ref in shown.references]
            return json.dumps(counting_reply(ids, grounded=[True, True]))
        with self.lock:
            nth = self.seen[sid]
            self.seen[sid] += 1
        return json.dumps(scoring_reply(effectiveness=1 if nth < FAILS[sid] else 3))


def grade(tmp_path: Path, out: Path, *extra: str) -> int:
    src = write_sessions(tmp_path / "in.jsonl", [session(s) for s in FAILS])
    return main(
        ["grade", str(src), "--out", str(out), "--provider", "openai", "--model", "m",
         "--quiet", "--repeats", "3", "--temperature", "0.7", *extra]
    )  # fmt: skip


def votes(path: Path) -> dict[str, list[str | None]]:
    return {
        r.session_id: sorted((s.verdict for s in r.repeats.samples), key=str)
        for r in read_results(path)
        if r.repeats is not None
    }


def test_repeats_over_http_keep_samples_apart_and_stability_matches_statsmodels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from research_judge.testing.fake_openai import FakeOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    out, rec, cache = tmp_path / "out.jsonl", tmp_path / "rec", tmp_path / "cache"
    with FakeOpenAIServer(SampleVaryingResponder()) as srv:
        net = ["--base-url", srv.base_url, "--cache-dir", str(cache)]
        assert grade(tmp_path, out, *net, "--record", str(rec)) == 0
        assert srv.stats.requests == 4 * 2 * 3  # sessions x calls x samples
        # Same command again into a new file: every sample answered from its own cache entry.
        assert grade(tmp_path, tmp_path / "again.jsonl", *net) == 0
        assert srv.stats.requests == 4 * 2 * 3
    results = {r.session_id: r for r in read_results(out)}
    expected = {sid: ["fail"] * n + ["pass"] * (3 - n) for sid, n in FAILS.items()}
    assert votes(out) == expected
    assert votes(tmp_path / "again.jsonl") == expected  # a shared cache entry would repeat one
    # Majority of three: two or three failing samples fail the session.
    assert {sid: r.verdict for sid, r in results.items()} == {
        "s-0": "pass",
        "s-1": "pass",
        "s-2": "fail",
        "s-3": "fail",
    }
    assert results["s-1"].scores is not None
    assert results["s-1"].scores["effectiveness"].score == 3  # median of 1, 3, 3
    assert results["s-2"].scores is not None
    assert results["s-2"].scores["effectiveness"].score == 1  # median of 1, 1, 3

    # Replaying the recordings, with no network, gives every sample back as it was recorded.
    replayed = tmp_path / "replayed.jsonl"
    # Recordings are keyed on the endpoint too: replay names the one they were recorded from.
    assert grade(tmp_path, replayed, "--replay", str(rec), "--no-cache", *net[:2]) == 0
    assert [r.repeats for r in read_results(replayed)] == [r.repeats for r in read_results(out)]

    capsys.readouterr()
    assert main(["stability", str(out), "--json", "--bootstrap", "500"]) == 0
    report = json.loads(capsys.readouterr().out)
    table = np.array([[3 - n, n] for n in FAILS.values()])  # pass and fail votes per session
    assert report["fleiss_kappa"] == pytest.approx(sm_fleiss_kappa(table, method="fleiss"))
    assert report["flip_rate"] == pytest.approx(2 / 4)
    assert sorted(report["unstable"]) == ["s-1", "s-2"]
    eff = np.array([[n, 0, 3 - n] for n in FAILS.values()])  # effectiveness 1, 2, 3 counts
    assert report["criteria"]["effectiveness"]["fleiss_kappa"] == pytest.approx(
        sm_fleiss_kappa(eff, method="fleiss")
    )
