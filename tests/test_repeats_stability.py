"""`grade --repeats K` and `research-judge stability`: is the judge stable?

Fleiss' kappa is checked against statsmodels; the aggregation of samples against hand-worked
values; the cache keys against the single-sample keys they must not disturb.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from research_judge.cli import main
from research_judge.clients import ScriptedClient
from research_judge.clients.base import JudgeRequest, Message
from research_judge.clients.cache import CachingClient
from research_judge.engine.run import RunOptions, grade_file
from research_judge.judge.repeats import RepeatingJudge, combine
from research_judge.results.model import read_results
from research_judge.stats.fleiss import fleiss_kappa
from research_judge.validate.stability import stability
from results_support import make_result, write_results

from support import counting_reply, ref_ids_in, scoring_reply, session, write_sessions

# --- Fleiss' kappa -------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "categories", "seed"), [(3, 2, 0), (5, 2, 1), (4, 3, 2), (7, 3, 3)])
def test_fleiss_kappa_matches_statsmodels(k: int, categories: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(categories), size=60)
    table = np.array([rng.multinomial(k, p) for p in probs], dtype=np.int64)
    out = fleiss_kappa(table, n_boot=2000, rng=np.random.default_rng(0))
    assert out.kappa == pytest.approx(sm_fleiss_kappa(table, method="fleiss"), rel=1e-12)
    assert out.ci is not None and out.ci[0] < out.kappa < out.ci[1]


def test_fleiss_kappa_undefined_when_every_sample_agrees_on_one_category() -> None:
    table = np.array([[3, 0]] * 10, dtype=np.int64)
    out = fleiss_kappa(table, n_boot=100, rng=np.random.default_rng(0))
    assert out.kappa is None and out.undefined and "same category" in out.undefined


# --- combining samples ---------------------------------------------------------------------


def test_majority_verdict_mean_ratios_lower_median_scores() -> None:
    samples = [
        make_result("s", "pass", ratios=(1.0, 0.5, 0.9), scores=(3, 2, 3)),
        make_result("s", "fail", ratios=(0.5, 0.5, 0.6), scores=(1, 2, 3)),
        make_result("s", "pass", ratios=(1.0, None, 0.8), scores=(2, 3, 3)),
    ]
    out = combine(samples, 3)
    assert out.verdict == "pass"  # 2 of 3
    assert out.ratios is not None
    assert out.ratios.relevance == pytest.approx(0.8333)  # mean rounded to 4 places
    assert out.ratios.utilization == 0.5  # the sample without it is left out
    assert out.ratios.grounding == pytest.approx(0.7667)
    assert out.scores is not None
    assert {n: s.score for n, s in out.scores.items()} == {
        "effectiveness": 2,  # median of 3, 1, 2
        "fluff": 2,  # median of 2, 2, 3
        "structure": 3,
    }
    assert out.repeats is not None and out.repeats.k == 3
    assert [s.verdict for s in out.repeats.samples] == ["pass", "fail", "pass"]
    assert out.repeats.samples[1].scores == {"effectiveness": 1, "fluff": 2, "structure": 3}
    assert "majority" in out.repeats.aggregation


def test_a_tie_fails_and_errored_samples_are_left_out_but_recorded() -> None:
    tie = combine([make_result("s", "pass"), make_result("s", "fail")], 2)
    assert tie.verdict == "fail"
    out = combine(
        [make_result("s", "fail"), make_result("s", error="bad json"), make_result("s", "pass")],
        3,
    )
    assert out.verdict == "fail"  # 1 pass, 1 fail among graded: a tie
    assert out.repeats is not None and out.repeats.samples[1].error == "bad json"
    broken = combine([make_result("s", error="x"), make_result("s", error="y")], 2)
    assert broken.verdict is None and broken.error is not None and "every one of 2" in broken.error


def test_results_without_repeats_do_not_gain_the_key() -> None:
    assert "repeats" not in json.loads(make_result("s").to_json_line())


# --- keys ----------------------------------------------------------------------------------


def test_sample_zero_keeps_the_existing_key_and_samples_differ() -> None:
    request = JudgeRequest("scoring", "sys", (Message("user", "hi"),), "x", {"type": "object"})
    from research_judge._canonical import content_hash

    legacy = {k: v for k, v in request.canonical("p", "m").items() if k != "sample"}
    assert request.key("p", "m") == content_hash(legacy)
    from dataclasses import replace

    keys = {replace(request, sample=i).key("p", "m") for i in range(3)}
    assert len(keys) == 3


# --- grading with repeats ------------------------------------------------------------------


def varying_responder(request: JudgeRequest) -> dict[str, Any]:
    """Sample 1 of session s-1 scores effectiveness 1 (a fail); everything else passes."""
    if request.call == "counting":
        return counting_reply(ref_ids_in(request), grounded=[True, True])
    flaky = request.sample == 1 and request.session_id == "s-1"
    return scoring_reply(effectiveness=1 if flaky else 3)


async def test_repeats_sample_each_call_and_the_cache_keeps_samples_apart(tmp_path: Path) -> None:
    src = write_sessions(tmp_path / "in.jsonl", [session("s-1"), session("s-2")])
    inner = ScriptedClient(varying_responder)
    client = CachingClient(inner, tmp_path / "cache")
    await grade_file(src, tmp_path / "out.jsonl", RepeatingJudge(client, repeats=3), RunOptions())
    assert len(inner.history) == 2 * 2 * 3  # sessions x calls x samples
    assert sorted({r.sample for r in inner.history}) == [0, 1, 2]
    results = {r.session_id: r for r in read_results(tmp_path / "out.jsonl")}
    s1 = results["s-1"]
    assert s1.verdict == "pass" and s1.repeats is not None
    assert [s.verdict for s in s1.repeats.samples] == ["pass", "fail", "pass"]
    assert s1.usage.calls == 6
    # A second run answers every sample from the cache: each sample had its own entry.
    again = ScriptedClient(varying_responder)
    cached = CachingClient(again, tmp_path / "cache")
    await grade_file(src, tmp_path / "out2.jsonl", RepeatingJudge(cached, repeats=3), RunOptions())
    assert again.history == [] and cached.hits == 12
    assert read_results(tmp_path / "out2.jsonl")[0].repeats == s1.repeats


# --- the stability verb --------------------------------------------------------------------


def repeated(sid: str, verdicts: list[str], effectiveness: list[int], **kw: Any) -> Any:
    from research_judge.results.model import Result

    data = make_result(sid, max(set(verdicts), key=verdicts.count), **kw).model_dump()
    data["repeats"] = {
        "k": len(verdicts),
        "aggregation": "test",
        "samples": [
            {"verdict": v, "scores": {"effectiveness": e, "fluff": 2, "structure": 3}}
            for v, e in zip(verdicts, effectiveness, strict=True)
        ],
    }
    return Result.model_validate(data)


def stable_run() -> list[Any]:
    return [
        repeated("steady-pass", ["pass"] * 3, [3, 3, 3]),
        repeated("steady-fail", ["fail"] * 3, [1, 1, 1], ratios=(1, 1, 0.2), scores=(1, 1, 3)),
        repeated("wobbly-near", ["pass", "fail", "pass"], [2, 1, 2], ratios=(1, 1, 0.8)),
        repeated(
            "wobbly-far", ["fail", "pass", "fail"], [1, 3, 1], ratios=(1, 1, 0.3), scores=(1, 1, 3)
        ),
        repeated("steady-2", ["pass"] * 3, [3, 3, 3]),
        make_result("single"),  # graded without repeats: not counted
    ]


def test_stability_reports_fleiss_kappa_flip_rate_and_unstable_ids() -> None:
    results = stable_run()
    report = stability(results, n_boot=500).to_dict()
    votes = np.array([[3, 0], [0, 3], [2, 1], [1, 2], [3, 0]])
    assert report["fleiss_kappa"] == pytest.approx(sm_fleiss_kappa(votes))
    assert report["flip_rate"] == pytest.approx(2 / 5)
    # wobbly-near passes on a grounding of exactly 0.8 (margin 0); wobbly-far is 0.5 from passing
    assert report["unstable"] == ["wobbly-near", "wobbly-far"]
    assert report["unstable_detail"][0]["votes"] == {"pass": 2, "fail": 1}
    eff = np.array([[0, 0, 3], [3, 0, 0], [1, 2, 0], [2, 0, 1], [0, 0, 3]])
    assert report["criteria"]["effectiveness"]["fleiss_kappa"] == pytest.approx(
        sm_fleiss_kappa(eff)
    )
    assert report["criteria"]["fluff"]["fleiss_kappa"] is None  # every sample scored 2
    assert report["n_repeated"] == 5 and report["n_results"] == 6 and report["k"] == 3


def test_stability_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "r.jsonl", stable_run())
    assert main(["stability", str(path), "--json", "--bootstrap", "300"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"fleiss_kappa", "flip_rate", "unstable"} <= data.keys()
    assert main(["stability", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Fleiss' kappa" in text and "wobbly-near: 2 pass / 1 fail" in text
    plain = write_results(tmp_path / "plain.jsonl", [make_result("a"), make_result("b")])
    assert main(["stability", str(plain)]) == 2
    assert "grade --repeats K" in capsys.readouterr().err


def test_grade_repeats_through_the_cli_and_a_fake_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from research_judge.testing.fake_openai import FakeOpenAIServer

    from support import body_responder

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    src = write_sessions(tmp_path / "in.jsonl", [session("s-1"), session("s-2")])
    out = tmp_path / "out.jsonl"
    with FakeOpenAIServer(body_responder) as srv:
        code = main(
            ["grade", str(src), "--out", str(out), "--provider", "openai", "--model", "m",
             "--base-url", srv.base_url, "--cache-dir", str(tmp_path / "cache"), "--quiet",
             "--repeats", "3",]
        )  # fmt: skip
        assert code == 0 and srv.stats.requests == 2 * 2 * 3
    assert "temperature 0" in capsys.readouterr().err  # warned: samples would be identical
    results = read_results(out)
    assert all(r.repeats is not None and len(r.repeats.samples) == 3 for r in results)
    assert main(["stability", str(out), "--json", "--bootstrap", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["flip_rate"] == 0.0 and data["unstable"] == []
    assert main(["grade", str(src), "--out", str(out), "--provider", "openai", "--model", "m",
                 "--repeats", "0"]) == 2  # fmt: skip


def test_html_and_markdown_show_stability_for_repeated_runs() -> None:
    from research_judge.report import build_report, render_html, render_markdown

    data = build_report(stable_run())
    html, md = render_html(data), render_markdown(data)
    for page in (html, md):
        assert "Judge stability (repeated samples)" in page
        assert "wobbly-near: 2 pass / 1 fail" in page
    assert 'id="stability"' in html
    plain = build_report([make_result("a"), make_result("b")])
    assert "Judge stability" not in render_html(plain)


def test_cost_estimates_count_every_sample() -> None:
    from research_judge.cost.prices import PriceTable
    from research_judge.judge.estimate import Estimator
    from research_judge.judge.grader import Judge
    from research_judge.sessions.model import Session

    s = Session.model_validate(session("s-1"))
    prices = PriceTable.load(None)
    one = Estimator(Judge(ScriptedClient(varying_responder)), prices).session(s)
    three = Estimator(RepeatingJudge(ScriptedClient(varying_responder), repeats=3), prices)
    est = three.session(s)
    assert (est.input_tokens, est.output_tokens) == (3 * one.input_tokens, 3 * one.output_tokens)


# --- a jury --------------------------------------------------------------------------------


async def test_a_jury_gives_one_sample_per_juror_with_their_plain_keys(tmp_path: Path) -> None:
    from research_judge.clients.jury import JuryClient, parse_juror

    def juror(model: str, effectiveness: int) -> ScriptedClient:
        def reply(request: JudgeRequest) -> dict[str, Any]:
            if request.call == "counting":
                return counting_reply(ref_ids_in(request), grounded=[True, True])
            return scoring_reply(effectiveness=effectiveness)

        return ScriptedClient(reply, provider="openai", model=model)

    members = [juror("a", 3), juror("b", 1), juror("c", 3)]
    src = write_sessions(tmp_path / "in.jsonl", [session("s-1")])
    jury = JuryClient(members)
    await grade_file(src, tmp_path / "out.jsonl", RepeatingJudge(jury, repeats=3), RunOptions())
    for member in members:  # each juror answered both calls once, as an ordinary request
        assert [r.sample for r in member.history] == [0, 0]
    result = read_results(tmp_path / "out.jsonl")[0]
    assert result.verdict == "pass"  # a and c pass, b fails
    assert result.repeats is not None
    assert [s.juror for s in result.repeats.samples] == ["openai/a", "openai/b", "openai/c"]
    assert [s.verdict for s in result.repeats.samples] == ["pass", "fail", "pass"]
    assert result.judge is not None and result.judge.model == "openai/a+openai/b+openai/c"
    assert parse_juror("anthropic:claude-x", "openai") == ("anthropic", "claude-x")
    assert parse_juror("llama3:8b", "openai") == ("openai", "llama3:8b")


def test_grade_jury_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from research_judge.testing.fake_openai import FakeOpenAIServer

    from support import body_responder

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    src = write_sessions(tmp_path / "in.jsonl", [session("s-1"), session("s-2")])
    out = tmp_path / "out.jsonl"
    net = ["--provider", "openai", "--model", "m1", "--cache-dir", str(tmp_path / "c"), "--quiet"]
    with FakeOpenAIServer(body_responder) as srv:
        code = main(["grade", str(src), "--out", str(out), *net, "--base-url", srv.base_url,
                     "--jury", "m2,openai:m3",])  # fmt: skip
        assert code == 0 and srv.stats.requests == 2 * 2 * 3
    results = read_results(out)
    assert [s.juror for s in results[0].repeats.samples] == ["openai/m1", "openai/m2", "openai/m3"]
    capsys.readouterr()
    assert main(["stability", str(out), "--json", "--bootstrap", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["k"] == 3
    bad = ["grade", str(src), "--out", str(tmp_path / "x.jsonl"), *net]
    assert main([*bad, "--jury", "m2", "--repeats", "3"]) == 2
    assert main([*bad, "--jury", "m1"]) == 2  # the same juror twice


def test_no_complete_session_says_so() -> None:
    out = fleiss_kappa(np.zeros((0, 2), np.int64), n_boot=10, rng=np.random.default_rng(0))
    assert out.kappa is None and out.undefined == "no item with all its samples graded"


def test_repeats_below_one_is_refused_by_the_library_and_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import research_judge as rj
    from research_judge.errors import ConfigError

    src = write_sessions(tmp_path / "in.jsonl", [session("s-1")])
    with pytest.raises(ConfigError, match="--repeats must be 1 or more, got 0"):
        rj.grade(src, model="m", provider="scripted", replay=tmp_path, repeats=0)
    out = tmp_path / "out.jsonl"
    for extra in ([], ["--dry-run"]):
        code = main(["grade", str(src), "--out", str(out), "--provider", "scripted", "--model",
                     "m", "--replay", str(tmp_path), "--repeats", "0", *extra])  # fmt: skip
        assert code == 2
        assert "--repeats must be 1 or more, got 0" in capsys.readouterr().err
    assert not out.exists()
