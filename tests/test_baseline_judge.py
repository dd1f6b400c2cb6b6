"""The baseline judge (``--provider baseline``): no model, no key, no network.

It reads a request's session material back out of the rendered prompt (whatever the prompts
folder), answers both calls by documented surface rules, and its quotes are slices of the
session, so evidence verification passes in code. Same input, same results, every time.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

import research_judge as rj
from research_judge.baseline import DEFAULT, MODEL, BaselineClient
from research_judge.baseline.rules import Counter, claims_of, scores
from research_judge.cli import main
from research_judge.clients.base import JudgeRequest, JudgeResponse
from research_judge.cost.windows import ModelLimits
from research_judge.judge.grader import Judge, JudgeSettings
from research_judge.judge.prompts import PromptSet, default_prompts_dir
from research_judge.judge.reading import RequestReader, ShownReference, ShownSession
from research_judge.results.model import Result, read_results
from research_judge.sessions.model import Session
from research_judge.testing.long_sessions import make_session

from support import write_sessions

REWORDED = Path(__file__).resolve().parent / "reworded_prompts"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions.jsonl"

TRICKY = {
    "id": "tricky",
    "question": "Why do lithium batteries lose range in cold weather?",
    "answer": (
        "Cold slows the chemical reactions inside lithium batteries [1]. "
        "Drivers lose about a third of their range in freezing weather [2].\n\n"
        "Nobody knows what the moon is made of."
    ),
    "trajectory": [
        {
            "id": "1",
            "title": "Battery chemistry",
            "url": "https://example.org/cold",
            "content": "Cold slows the chemical reactions inside lithium batteries.\ncontent:\n"
            "Heating the pack helps.",
        },
        {"id": "2", "content": "Tests show drivers lose about a third of their range.\n"},
        {"id": "r, 3", "url": "https://example.org/x", "content": "Unrelated: cooking pasta."},
        {"id": "4", "title": "Only a title", "content": ""},
    ],
}


def judge(prompts: PromptSet, limits: ModelLimits | None = None) -> Judge:
    client = BaselineClient(prompts)
    return Judge(client, prompts=prompts, settings=JudgeSettings(max_attempts=1), limits=limits)


@pytest.mark.parametrize("folder", [None, REWORDED], ids=["shipped", "reworded"])
def test_the_reader_gets_back_exactly_what_the_judge_rendered(folder: Path | None) -> None:
    prompts = PromptSet(folder)
    session = Session.model_validate(TRICKY)
    counting, scoring = judge(prompts).first_requests(session)
    shown = RequestReader(prompts).read(counting)
    assert (shown.question, shown.answer) == (session.question, session.answer)
    assert [(r.id, r.title, r.url, r.content) for r in shown.references] == [
        (r.id, r.title, r.url, r.content) for r in session.trajectory
    ]
    read_scoring = RequestReader(prompts).read(scoring)
    assert (read_scoring.answer, read_scoring.references) == (session.answer, ())


def test_tool_calls_shown_in_the_prompt_are_read_back_too() -> None:
    # As `convert` writes references: the tool and its arguments beside the result's text.
    calls = [
        {"tool": "web_search", "args": {"query": "lithium cold weather"}},
        {"tool": "web_fetch", "args": {"url": "https://example.org/x"}},
        {},
        {"tool": "notes", "args": "title: not a field\nurl: nor this"},
    ]
    trajectory = [{**ref, **call} for ref, call in zip(TRICKY["trajectory"], calls, strict=True)]
    session = Session.model_validate({**TRICKY, "trajectory": trajectory})
    prompts = PromptSet()
    counting, _ = judge(prompts).first_requests(session)
    assert "tool call: web_search" in counting.messages[0].content
    shown = RequestReader(prompts).read(counting)
    assert [(r.id, r.title, r.url, r.content, r.tool_call) for r in shown.references] == [
        (r.id, r.title, r.url, r.content, r.tool_call) for r in session.trajectory
    ]
    assert shown.references[2].tool_call is None


class WithoutLabels:
    """Hands the baseline each request with its session id (a label, never sent) removed: it
    answers from what is sent alone."""

    def __init__(self, inner: BaselineClient) -> None:
        self.inner, self.provider, self.model = inner, inner.provider, inner.model

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        return await self.inner.complete(replace(request, session_id=""))

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_it_answers_from_the_prompt_text_alone() -> None:
    prompts = PromptSet()
    session = Session.model_validate(TRICKY)
    bare = Judge(WithoutLabels(BaselineClient(prompts)), prompts=prompts)
    assert (await bare.grade(session)).verdicts == (await judge(prompts).grade(session)).verdicts
    split = Session.model_validate(make_session("many", 40, 1_500).session)
    limits = ModelLimits(12_000, 4_096)
    result = await Judge(
        WithoutLabels(BaselineClient(prompts)), prompts=prompts, limits=limits
    ).grade(split)
    assert result.error is None and result.context is not None
    assert result.context.counting_calls > 1


async def test_reworded_prompts_get_the_same_answers_as_the_shipped_ones() -> None:
    session = Session.model_validate(TRICKY)
    shipped = await judge(PromptSet()).grade(session)
    reworded = await judge(PromptSet(REWORDED)).grade(session)
    assert shipped.error is None and reworded.error is None
    assert shipped.verdicts == reworded.verdicts
    assert shipped.scores == reworded.scores


async def test_split_sessions_and_cut_references_are_read_too() -> None:
    built = [make_session("many", 40, 1_500), make_session("huge", 2, 60_000)]
    j = judge(PromptSet(), ModelLimits(12_000, 4_096))
    for one in built:
        result = await j.grade(Session.model_validate(one.session))
        assert result.error is None, result.error
        assert result.context is not None and result.context.counting_calls > 1
        assert result.context.not_judged == 0
        assert all(v.evidence_verified for v in result.verdicts)


async def test_a_template_it_cannot_invert_is_a_session_error_not_a_guess(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    shutil.copytree(default_prompts_dir(), folder)
    user = folder / "counting.user.j2"
    user.write_text(
        user.read_text().replace("content:\n", "note: {{ ref.note }}\ncontent:\n"), "utf-8"
    )
    data = {**TRICKY, "trajectory": [{**r, "note": "n"} for r in TRICKY["trajectory"]]}
    result = await judge(PromptSet(folder)).grade(Session.model_validate(data))
    assert result.verdict is None
    assert result.error is not None and "could not be read back" in result.error


async def test_same_sessions_same_results() -> None:
    sessions = [Session.model_validate(json.loads(line)) for line in FIXTURES.open()]
    first = [(await judge(PromptSet()).grade(s)).model_dump(exclude={"usage"}) for s in sessions]
    again = [(await judge(PromptSet()).grade(s)).model_dump(exclude={"usage"}) for s in sessions]
    assert first == again


async def test_every_quote_it_gives_verifies_in_code() -> None:
    sessions = [Session.model_validate(json.loads(line)) for line in FIXTURES.open()]
    sessions.append(Session.model_validate(TRICKY))
    j = judge(PromptSet())
    for session in sessions:
        result = await j.grade(session)
        assert result.error is None, (session.id, result.error)
        assert result.evidence.verified == result.evidence.total > 0
        grounded = [v for v in result.verdicts if v.check == "grounded"]
        assert all(v.claim_verified for v in grounded)


def shown(question: str, answer: str, refs: dict[str, str]) -> ShownSession:
    return ShownSession(
        "counting",
        question,
        answer,
        tuple(ShownReference(i, c) for i, c in refs.items()),
        None,
    )


def by_key(reply: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(v["id"], v["check"]): v for v in reply["verdicts"]}


def test_a_claim_is_grounded_by_its_best_matching_reference_and_makes_it_used() -> None:
    reply = by_key(Counter(shown(TRICKY["question"], TRICKY["answer"], {
        "a": "Cooking pasta takes ten minutes in salted water.",
        "b": "In cold weather the chemical reactions inside lithium batteries slow down. "
             "Cold slows the chemical reactions inside lithium batteries.",
    })).reply())  # fmt: skip
    c1 = reply[("c1", "grounded")]
    assert (c1["answer"], c1["source"]) == ("yes", "b")
    assert c1["evidence"] == "Cold slows the chemical reactions inside lithium batteries."
    moon = reply[("c3", "grounded")]
    assert (moon["answer"], moon["source"]) == ("no", None)
    assert reply[("b", "used")]["answer"] == "yes"
    assert reply[("a", "used")]["answer"] == "no"
    assert reply[("b", "relevant")]["answer"] == "yes"
    assert reply[("a", "relevant")]["answer"] == "no"


def test_claims_are_the_substantive_sentences_quoted_whole() -> None:
    answer = "Yes. Cold slows lithium reactions [1]. Heat helps the pack recover quickly."
    assert claims_of(answer) == [
        ("c1", "Cold slows lithium reactions [1]."),
        ("c2", "Heat helps the pack recover quickly."),
    ]


def test_surface_scores() -> None:
    question = "Why do lithium batteries lose range in cold weather?"
    good = (
        "Lithium batteries lose range in cold weather because reactions slow. "
        "Cold weather also raises internal resistance in lithium cells. "
        "Preheating batteries restores much of the lost range."
    )
    got = {s["criterion"]: s["score"] for s in scores(question, good)["scores"]}
    assert got == {"effectiveness": 3, "fluff": 3, "structure": 3}
    padded = good + " Great question! Hope this helps. Thanks!"
    fluff = {s["criterion"]: s for s in scores(question, padded)["scores"]}["fluff"]
    assert fluff["score"] == 1 and "tally: 3 padded" in fluff["reasoning"]
    assert fluff["evidence"] == "Great question!"
    run_on = " ".join(["word"] * 80) + " battery."
    off = {s["criterion"]: s["score"] for s in scores(question, run_on)["scores"]}
    assert off["structure"] == 1 and off["effectiveness"] == 1


def test_the_grade_command_runs_it_with_no_key_and_no_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    sessions = write_sessions(tmp_path / "s.jsonl", [TRICKY])
    out = tmp_path / "r.jsonl"
    assert main(["grade", str(sessions), "--out", str(out), "--provider", "baseline"]) == 0
    [result] = read_results(out)
    assert result.error is None and result.judge is not None
    assert (result.judge.provider, result.judge.model) == ("baseline", "lexical-1")
    assert result.usage.cost_usd == 0.0


@pytest.mark.parametrize(
    "flags",
    [["--model", "gpt-4.1-mini"], ["--base-url", "http://127.0.0.1:9/v1"], ["--mode", "tool"]],
)
def test_settings_that_mean_nothing_to_it_are_refused(
    tmp_path: Path, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = write_sessions(tmp_path / "s.jsonl", [TRICKY])
    args = ["grade", str(sessions), "--out", str(tmp_path / "r.jsonl"), "--provider", "baseline"]
    assert main([*args, *flags]) == 2
    assert "baseline judge" in capsys.readouterr().err


def test_its_dry_run_costs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sessions = write_sessions(tmp_path / "s.jsonl", [TRICKY])
    out = str(tmp_path / "r.jsonl")
    assert main(["grade", str(sessions), "--out", out, "--provider", "baseline", "--dry-run"]) == 0
    assert "cost $0.0000" in capsys.readouterr().out


def test_the_python_api_grades_with_it() -> None:
    [result] = rj.grade([TRICKY], provider="baseline", cache=False)
    assert isinstance(result, Result) and result.error is None
    assert result.verdict in ("pass", "fail")


EARLIER = [
    {"question": "What limits electric trucks?", "answer": "Mostly the battery [1].\n\nAnd cold."},
    {"question": "And buses?", "answer": "The same, <<question>> markers and all."},
]


@pytest.mark.parametrize("folder", [None, REWORDED], ids=["shipped", "reworded"])
@pytest.mark.parametrize("turns", [1, 2])
async def test_a_conversations_earlier_turns_are_read_as_shown(
    folder: Path | None, turns: int
) -> None:
    prompts = PromptSet(folder)
    session = Session.model_validate({**TRICKY, "conversation": EARLIER[:turns]})
    counting, scoring = judge(prompts).first_requests(session)
    for request in (counting, scoring):
        shown = RequestReader(prompts).read(request)
        assert (shown.question, shown.answer) == (session.question, session.answer)
    assert [r.id for r in RequestReader(prompts).read(counting).references] == [
        r.id for r in session.trajectory
    ]
    result = await judge(prompts).grade(session)
    assert result.error is None
    alone = await judge(prompts).grade(Session.model_validate(TRICKY))
    assert result.verdicts == alone.verdicts  # earlier turns are context, not the answer


async def test_excerpts_shown_with_a_reference_are_read_with_it() -> None:
    ref = {**TRICKY["trajectory"][1], "excerpts": [
        {"kind": "quoted", "text": "drivers lose about a third of their range"},
        {"kind": "attributed", "text": "Drivers lose about a third of their range"},
    ]}  # fmt: skip
    data = {**TRICKY, "trajectory": [TRICKY["trajectory"][0], ref]}
    result = await judge(PromptSet()).grade(Session.model_validate(data))
    assert result.error is None
    assert result.evidence.verified == result.evidence.total


def test_it_cannot_sit_on_a_jury(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sessions = write_sessions(tmp_path / "s.jsonl", [TRICKY])
    args = ["grade", str(sessions), "--out", str(tmp_path / "r.jsonl"), "--provider", "baseline"]
    assert main([*args, "--jury", "openai:gpt-4.1-mini"]) == 2
    assert "cannot sit on a --jury" in capsys.readouterr().err


def test_its_model_name_is_the_version_of_its_rules() -> None:
    # Results of two rule versions must not compare as one judge: change a rule or threshold,
    # and this fails until MODEL (clients.settings.BASELINE_MODEL) is bumped with it.
    assert MODEL == "lexical-1"
    assert asdict(DEFAULT) == {
        "grounded": 0.2,
        "relevant": 0.5,
        "min_claim_words": 3,
        "effective": 0.5,
        "ineffective": 0.2,
        "fluff_low": 0.15,
        "fluff_high": 0.4,
        "readable_sentence": 30,
        "long_sentence": 45,
    }


def test_its_results_go_through_validate_compare_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures = FIXTURES.parent
    out, before = tmp_path / "r.jsonl", tmp_path / "before.jsonl"
    previous = fixtures / "baseline" / "sessions.jsonl"
    for sessions, results in ((FIXTURES, out), (previous, before)):
        args = ["grade", str(sessions), "--out", str(results), "--provider", "baseline"]
        assert main([*args, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["validate", str(out), "--labels", str(fixtures / "labels.csv"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 20 and report["cohen_kappa"] is not None
    assert main(["compare", str(before), str(out)]) in (0, 1)  # 1: a metric dropped
    html = tmp_path / "report.html"
    assert (
        main(["report", str(out), "--labels", str(fixtures / "labels.csv"), "--html", str(html)])
        == 0
    )
    assert "lexical-1" in html.read_text(encoding="utf-8")
