"""One session through the two-call judge: ratios, verdict, re-asks, errors, provenance."""

from __future__ import annotations

import json
from typing import Any

import pytest

from research_judge.clients import ScriptedClient, ScriptExhausted
from research_judge.clients.base import JudgeRequest, JudgeResponse, Usage
from research_judge.cost.prices import PriceTable
from research_judge.errors import ApiError, JudgeRefusal, ReplayMissError
from research_judge.judge.grader import Judge, JudgeSettings
from research_judge.judge.policy import VerdictPolicy
from research_judge.sessions.model import Session

from support import counting_reply, good_responder, ref_ids_in, scoring_reply, session


def make(raw: dict[str, Any]) -> Session:
    return Session.model_validate(raw)


async def test_two_calls_give_ratios_scores_and_a_verdict() -> None:
    client = ScriptedClient(good_responder)
    result = await Judge(client).grade(make(session()))

    assert [r.call for r in client.history] == ["counting", "scoring"]
    assert result.error is None
    assert result.ratios is not None
    # 2 refs both relevant, only r1 used, claims 1 of 2 grounded
    assert (result.ratios.relevance, result.ratios.utilization, result.ratios.grounding) == (
        1.0,
        0.5,
        0.5,
    )
    assert result.scores is not None and result.scores["fluff"].score == 3
    assert result.verdict == "fail"
    assert result.verdict_reasons == ["grounding 0.50 < 0.80"]
    assert result.usage.calls == 2


async def test_scoring_call_sees_question_and_answer_but_not_the_references() -> None:
    client = ScriptedClient(good_responder)
    await Judge(client).grade(make(session()))
    scoring = next(r for r in client.history if r.call == "scoring")
    counting = next(r for r in client.history if r.call == "counting")
    assert "Fact 2 is true here." not in scoring.messages[0].content
    assert "Fact 2 is true here." in counting.messages[0].content
    assert "Fact 9 is invented" in scoring.messages[0].content


async def test_result_records_prompt_names_hashes_and_judge() -> None:
    result = await Judge(ScriptedClient(good_responder)).grade(make(session()))
    assert result.judge is not None
    assert result.judge.provider == "scripted"
    assert set(result.judge.prompts) == {"counting", "counting_pack", "scoring", "reask"}
    assert all(len(p.sha256) == 64 for p in result.judge.prompts.values())
    assert len(result.judge.fingerprint) == 64


async def test_no_references_gives_null_relevance_and_utilization() -> None:
    def responder(request: JudgeRequest) -> dict[str, Any]:
        if request.call == "counting":
            return counting_reply([], grounded=[False])
        return scoring_reply()

    result = await Judge(ScriptedClient(responder)).grade(make(session(refs=0)))
    assert result.ratios is not None
    assert result.ratios.relevance is None and result.ratios.utilization is None
    assert result.ratios.grounding == 0.0


async def test_no_claims_gives_null_grounding_and_the_rule_is_skipped() -> None:
    def responder(request: JudgeRequest) -> dict[str, Any]:
        if request.call == "counting":
            return counting_reply(ref_ids_in(request), grounded=[])
        return scoring_reply()

    result = await Judge(ScriptedClient(responder)).grade(make(session()))
    assert result.ratios is not None and result.ratios.grounding is None
    assert result.verdict == "pass"


INVALID_COUNTING = {
    "not json": "this is not json",
    "missing reference": {"verdicts": []},
    "unknown id": None,  # built below
    "repeated pair": None,
    "answer not yes/no": None,
}


# What the re-ask must tell the judge for each kind (the parser's own words).
PROBLEM_SENT_BACK = {
    "not json": "the reply is not valid JSON",
    "missing reference": "reference 'r1' has no 'relevant' verdict",
    "unknown id": "unknown reference id 'r99'",
    "repeated pair": "2 'relevant' verdicts for id 'r1'",
    "answer not yes/no": "verdicts.0.answer: Input should be 'yes' or 'no'",
}


def _invalid(kind: str, ids: list[str]) -> Any:
    good = counting_reply(ids)
    if kind == "unknown id":
        good["verdicts"].append({"id": "r99", "check": "used", "answer": "no", "evidence": "x"})
    elif kind == "repeated pair":
        good["verdicts"].append(dict(good["verdicts"][0]))
    elif kind == "answer not yes/no":
        good["verdicts"][0]["answer"] = "maybe"
    else:
        return INVALID_COUNTING[kind]
    return good


@pytest.mark.parametrize("kind", list(INVALID_COUNTING))
async def test_each_invalid_counting_reply_is_reasked_with_the_problem(kind: str) -> None:
    def responder(request: JudgeRequest) -> Any:
        if request.call == "scoring":
            return scoring_reply()
        ids = ref_ids_in(request)
        return _invalid(kind, ids) if len(request.messages) == 1 else counting_reply(ids)

    client = ScriptedClient(responder)
    result = await Judge(client).grade(make(session()))
    assert result.error is None and result.verdict is not None
    reask = [r for r in client.history if r.call == "counting"][1]
    assert [m.role for m in reask.messages] == ["user", "assistant", "user"]
    assert "could not be used" in reask.messages[-1].content
    assert PROBLEM_SENT_BACK[kind] in reask.messages[-1].content
    assert result.usage.calls == 3


@pytest.mark.parametrize("kind", list(INVALID_COUNTING))
async def test_invalid_after_all_attempts_is_an_error_not_a_verdict(kind: str) -> None:
    def responder(request: JudgeRequest) -> Any:
        if request.call == "scoring":
            return scoring_reply()
        return _invalid(kind, ref_ids_in(request))

    client = ScriptedClient(responder)
    result = await Judge(client).grade(make(session()))
    assert result.verdict is None
    assert result.error_kind == "judge_output"
    assert result.error is not None and "after 3 attempts" in result.error
    assert result.scores is None
    assert result.ratios is not None
    assert (result.ratios.relevance, result.ratios.utilization, result.ratios.grounding) == (
        None,
        None,
        None,
    )
    assert sum(r.call == "counting" for r in client.history) == 3


@pytest.mark.parametrize(
    "bad_scoring",
    [
        {"scores": []},
        scoring_reply(effectiveness=4),
        {"scores": scoring_reply()["scores"] + [scoring_reply()["scores"][0]]},
        {"scores": [{**s, "score": "3"} for s in scoring_reply()["scores"]]},
    ],
    ids=["missing criteria", "score out of range", "extra criterion", "score as string"],
)
async def test_invalid_scoring_is_retried_then_errored(bad_scoring: Any) -> None:
    def responder(request: JudgeRequest) -> Any:
        if request.call == "counting":
            return counting_reply(ref_ids_in(request))
        return bad_scoring

    settings = JudgeSettings(max_attempts=2)
    client = ScriptedClient(responder)
    result = await Judge(client, settings=settings).grade(make(session()))
    assert result.error_kind == "judge_output" and result.verdict is None
    assert sum(r.call == "scoring" for r in client.history) == 2


async def test_refusal_is_reasked_without_echoing_the_partial_reply() -> None:
    calls = {"n": 0}

    def responder(request: JudgeRequest) -> Any:
        if request.call == "scoring":
            return scoring_reply()
        calls["n"] += 1
        if calls["n"] == 1:
            return JudgeRefusal("reply truncated at max_output_tokens")
        return counting_reply(ref_ids_in(request))

    client = ScriptedClient(responder)
    result = await Judge(client).grade(make(session()))
    assert result.error is None
    second = [r for r in client.history if r.call == "counting"][1]
    assert [m.role for m in second.messages] == ["user", "user"]


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (ApiError("HTTP 400: bad request", 400), "api"),
        (ReplayMissError("no exchange"), "replay_miss"),
        (ScriptExhausted("the script held 0"), "client"),
    ],
)
async def test_api_failures_become_session_errors(exc: Exception, kind: str) -> None:
    def responder(request: JudgeRequest) -> Any:
        return exc if request.call == "counting" else scoring_reply()

    client = ScriptedClient(responder)
    result = await Judge(client).grade(make(session()))
    assert result.error_kind == kind and result.verdict is None
    assert result.error is not None and result.error.startswith("counting call: ")
    assert str(exc) in result.error
    assert sum(r.call == "counting" for r in client.history) == 1  # not re-asked


async def test_strict_evidence_counts_unverifiable_yes_as_no() -> None:
    def responder(request: JudgeRequest) -> Any:
        if request.call == "scoring":
            return scoring_reply()
        reply = counting_reply(ref_ids_in(request), grounded=[True])
        for v in reply["verdicts"]:
            if v["check"] == "grounded":
                v["evidence"] = "a sentence that appears nowhere"
        return reply

    lenient = await Judge(ScriptedClient(responder)).grade(make(session()))
    strict = await Judge(
        ScriptedClient(responder), settings=JudgeSettings(strict_evidence=True)
    ).grade(make(session()))
    assert lenient.ratios is not None and strict.ratios is not None
    assert lenient.ratios.grounding == 1.0
    assert strict.ratios.grounding == 0.0
    grounded = [v for v in lenient.verdicts if v.check == "grounded"]
    assert grounded[0].evidence_verified is False
    assert lenient.evidence.total == lenient.evidence.verified + 1


async def test_policy_is_applied_and_changes_the_fingerprint() -> None:
    strict_policy = VerdictPolicy(min_effectiveness=3, min_grounding=None)

    def responder(request: JudgeRequest) -> Any:
        if request.call == "scoring":
            return scoring_reply(effectiveness=2)
        return counting_reply(ref_ids_in(request))

    default = Judge(ScriptedClient(responder))
    strict = Judge(ScriptedClient(responder), policy=strict_policy)
    result = await strict.grade(make(session()))
    assert result.verdict == "fail" and result.verdict_reasons == ["effectiveness 2 < 3"]
    assert default.fingerprint != strict.fingerprint


async def test_cost_counts_only_billable_replies() -> None:
    def responder(request: JudgeRequest) -> Any:
        body = json.dumps(good_responder(request))
        cached = request.call == "scoring"
        return JudgeResponse(body, Usage(1_000_000, 0, 0), "stop", cached=cached)

    prices = PriceTable.load()
    model_price = next(iter(prices.models.items()))
    client = ScriptedClient(responder, provider="openai", model=model_price[0])
    result = await Judge(client, prices=prices).grade(make(session()))
    assert result.usage.input_tokens == 2_000_000
    assert result.usage.cache_hits == 1
    assert result.usage.cost_usd == pytest.approx(model_price[1].input)


async def test_session_text_reaches_the_judge_verbatim() -> None:
    tricky = 'Use {{ user.name }} and {% if x %}y{% endif %}; it\'s "quoted" <b>&amp;</b>'
    raw = session(answer=tricky)
    raw["trajectory"][0]["content"] = tricky
    client = ScriptedClient(good_responder)
    await Judge(client).grade(make(raw))
    for request in client.history:
        assert tricky in request.messages[0].content


async def test_replies_that_cost_nothing_cost_zero_even_for_an_unpriced_model() -> None:
    def responder(request: JudgeRequest) -> Any:
        return JudgeResponse(json.dumps(good_responder(request)), Usage(500, 0, 80), cached=True)

    client = ScriptedClient(responder, model="no-such-model-in-the-table")
    result = await Judge(client, prices=PriceTable.load()).grade(make(session()))
    assert result.usage.cost_usd == 0.0 and result.usage.input_tokens == 1000


async def test_a_billable_reply_from_an_unpriced_model_has_unknown_cost() -> None:
    client = ScriptedClient(good_responder, model="no-such-model-in-the-table")
    result = await Judge(client, prices=PriceTable.load()).grade(make(session()))
    assert result.usage.cost_usd is None
