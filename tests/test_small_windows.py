"""Small windows (a local server started with 4,096 tokens) and the output caps.

``--counting-max-tokens`` and ``--scoring-max-tokens`` are caps: no request asks for more. When
the window has less room than a cap, the call goes out with the room left, down to the least its
reply needs (``settings.MIN_SCORING_TOKENS``; for a counting call that cannot be split further,
the expected size of its verdicts). A session that cannot fit even so is an error of kind
``context`` that says what window it would need, and nothing of it is sent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from research_judge.cli import main
from research_judge.clients import ScriptedClient
from research_judge.clients.base import JudgeRequest
from research_judge.clients.text_limits import TEXT_LIMITS
from research_judge.cost.tokens import planning_request_tokens, planning_tokens
from research_judge.cost.windows import ModelLimits, WindowTable
from research_judge.errors import ExitCode
from research_judge.judge.grader import Judge, JudgeSettings
from research_judge.judge.planning import SCORING_REPLY_TOKENS, output_allowance
from research_judge.judge.settings import MIN_SCORING_TOKENS
from research_judge.judge.verdicts import SCORE_NAMES
from research_judge.results import read_results
from research_judge.sessions.model import Session
from research_judge.testing import FakeJudge, FakeOpenAIServer, fake_judge_reply
from research_judge.testing.long_sessions import make_session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions.jsonl"
WINDOW = 4096  # the local lane's llama-cpp-python server: --n_ctx 4096


def shortest_fixtures(n: int = 3) -> list[dict[str, Any]]:
    """The sessions the local lane grades: the file's ``n`` shortest lines, in file order."""
    lines = FIXTURES.read_text(encoding="utf-8").splitlines()
    chosen = set(sorted(lines, key=len)[:n])
    return [json.loads(line) for line in lines if line in chosen]


def small_judge(
    client: ScriptedClient, counting: int = 8192, scoring: int = 2048, window: int = WINDOW
) -> Judge:
    limits = WindowTable.load().limits_for("smollm2-135m", window)
    settings = JudgeSettings(counting_max_tokens=counting, scoring_max_tokens=scoring)
    return Judge(client, settings=settings, limits=limits)


def caps_of(request: JudgeRequest, counting: int, scoring: int) -> int:
    return counting if request.call == "counting" else scoring


def long_answer(sentences: int) -> str:
    return " ".join(f"Finding {k} holds across the surveyed data [r1]." for k in range(sentences))


# --- short sessions fit a small window ---------------------------------------------------------


@pytest.mark.parametrize(("counting", "scoring"), [(768, 384), (8192, 2048)])
async def test_the_lanes_short_sessions_are_graded_whole_in_a_4096_token_window(
    counting: int, scoring: int
) -> None:
    client = ScriptedClient(fake_judge_reply)
    j = small_judge(client, counting, scoring)
    for raw in shortest_fixtures():
        result = await j.grade(Session.model_validate(raw))
        assert result.error is None, (raw["id"], result.error)
        assert result.context is not None
        assert result.context.references_judged == result.context.references
    assert client.history
    for request in client.history:
        assert request.max_output_tokens <= caps_of(request, counting, scoring)
        assert planning_request_tokens(request) + request.max_output_tokens <= j.planner.budget


def test_the_scoring_call_gets_the_room_left_when_its_cap_does_not_fit() -> None:
    raw = make_session("s", 1, 200).session
    raw["answer"] = long_answer(45)
    session = Session.model_validate(raw)
    j = small_judge(ScriptedClient(fake_judge_reply))
    _, scoring = j.first_requests(session)
    room = j.planner.budget - planning_request_tokens(scoring)
    assert MIN_SCORING_TOKENS <= room < scoring.max_output_tokens == 2048
    fitted = j.planner.fit_scoring(scoring)
    assert fitted.max_output_tokens == room
    assert fitted.messages == scoring.messages and fitted.schema == scoring.schema


async def test_a_session_that_fits_keeps_its_scoring_request_unchanged() -> None:
    session = Session.model_validate(make_session("s", 5, 1000).session)
    j = Judge(ScriptedClient(fake_judge_reply), limits=ModelLimits(128_000, 16_384))
    _, scoring = j.first_requests(session)
    assert j.planner.fit_scoring(scoring) is scoring  # same object: same cache key
    await j.grade(session)
    [sent] = [r for r in j.client.history if r.call == "scoring"]  # type: ignore[attr-defined]
    assert sent == scoring


def test_a_full_scoring_reply_is_sized_from_the_schemas_text_limits() -> None:
    # Every criterion's reasoning and evidence at their maxLength: the reply at its largest.
    full = {
        "scores": [
            {
                "criterion": name,
                "reasoning": "x" * TEXT_LIMITS["reasoning"],
                "evidence": "x" * TEXT_LIMITS["evidence"],
                "score": 3,
            }
            for name in SCORE_NAMES
        ]
    }
    assert planning_tokens(json.dumps(full, indent=1)) <= SCORING_REPLY_TOKENS
    # The default cap covers a full reply; the least is a reply with a few sentences a criterion.
    assert MIN_SCORING_TOKENS < SCORING_REPLY_TOKENS <= JudgeSettings().scoring_max_tokens


# --- caps are caps ----------------------------------------------------------------------------


def test_the_counting_cap_is_never_exceeded_a_session_needing_more_is_split() -> None:
    session = Session.model_validate(make_session("s", 60, 200).session)
    big = ModelLimits(1_000_000, 32_768)
    j = Judge(ScriptedClient(fake_judge_reply), limits=big)
    counting, _ = j.first_requests(session)
    packs = j.planner.forecast(session, counting)
    assert len(packs) > 1
    assert output_allowance(60, 0) > 8192  # what one call would need
    assert all(p.request.max_output_tokens <= 8192 for p in packs)
    # Raising the cap lets the same session go in one call.
    raised = Judge(
        ScriptedClient(fake_judge_reply),
        settings=JudgeSettings(counting_max_tokens=32_768),
        limits=big,
    )
    counting, _ = raised.first_requests(session)
    plan = raised.planner.first(session, counting)
    assert plan.single
    assert output_allowance(60, 0) <= plan.pack.request.max_output_tokens <= 32_768


async def test_a_lone_call_needing_more_than_the_cap_goes_with_the_cap() -> None:
    # One reference and a long answer: the worst case of its verdicts is over the cap, and the
    # call cannot be split further, so it is sent with the cap, never more.
    raw = make_session("s", 1, 500).session
    raw["answer"] = long_answer(30)
    client = ScriptedClient(fake_judge_reply)
    j = Judge(client, settings=JudgeSettings(counting_max_tokens=1000))
    result = await j.grade(Session.model_validate(raw))
    assert result.error is None, result.error
    [counting] = [r for r in client.history if r.call == "counting"]
    assert counting.max_output_tokens == 1000


# --- what truly cannot fit ------------------------------------------------------------------


@pytest.mark.parametrize("sentences", [120, 400])
async def test_a_session_that_cannot_fit_is_a_context_error_saying_what_it_needs(
    sentences: int,
) -> None:
    raw = make_session("s", 1, 200).session
    raw["answer"] = long_answer(sentences)
    client = ScriptedClient(fake_judge_reply)
    result = await small_judge(client).grade(Session.model_validate(raw))
    assert result.error_kind == "context" and result.error is not None
    assert client.history == []  # reported, never sent
    assert "4,096-token window" in result.error
    found = re.search(r"needs a window of about ([\d,]+) tokens", result.error)
    assert found, result.error
    assert int(found.group(1).replace(",", "")) > WINDOW


# --- from the command line, against a server with a 4,096-token window -------------------------


@pytest.mark.parametrize(
    "caps", [["--counting-max-tokens", "768", "--scoring-max-tokens", "384"], []]
)
def test_the_lanes_settings_grade_every_short_session_within_the_window_and_caps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caps: list[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = tmp_path / "s.jsonl"
    src.write_text("".join(json.dumps(s) + "\n" for s in shortest_fixtures()), encoding="utf-8")
    out = tmp_path / "r.jsonl"
    counting, scoring = (768, 384) if caps else (8192, 2048)
    # The server counts three characters a token, like the planner: more than a real tokenizer.
    with FakeOpenAIServer(FakeJudge(), context_window=WINDOW, chars_per_token=3.0) as server:
        code = main(["grade", str(src), "--out", str(out), "--model", "smollm2-135m",
                     "--base-url", server.base_url, "--mode", "json_object",
                     "--no-cache", "--quiet", "--context-window", str(WINDOW), *caps])  # fmt: skip
        sent = [(r.body["response_format"], r.body["max_tokens"]) for r in server.requests]
        refused, cut = server.stats.refused_context, server.stats.cut
    assert code == 0
    assert refused == 0 and cut == 0
    assert [r.error for r in read_results(out)] == [None, None, None]
    assert sent
    for response_format, cap in sent:
        is_counting = "verdicts" in response_format["schema"]["properties"]
        assert cap <= (counting if is_counting else scoring)


@pytest.mark.parametrize("flag", ["--counting-max-tokens", "--scoring-max-tokens"])
def test_a_cap_below_one_token_is_a_usage_error_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps(shortest_fixtures(1)[0]) + "\n", encoding="utf-8")
    argv = ["grade", str(src), "--out", str(tmp_path / "r.jsonl"), "--model", "m", "--dry-run"]
    code = main([*argv, flag, "0"])
    assert code == 2
    assert f"{flag} must be at least 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "r.jsonl").exists()


def grade_shortest_on(server: FakeOpenAIServer, tmp_path: Path, out: Path, *flags: str) -> int:
    """``grade`` the lane's shortest session against ``server`` (a model the window table does
    not know, so only the server's refusals can teach its window)."""
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps(shortest_fixtures(1)[0]) + "\n", encoding="utf-8")
    return main(["grade", str(src), "--out", str(out), "--model", "smollm2-135m",
                 "--base-url", server.base_url, "--no-cache", "--quiet",
                 *flags])  # fmt: skip


def test_a_call_refused_for_a_window_it_then_learns_is_sent_again_resized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server's window (4,096) is smaller than the one assumed for an unknown model
    # (128,000): the first counting call is refused, its error states the window, and the same
    # call, sized for that window, fits. It is sent again rather than the session lost.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "r.jsonl"
    with FakeOpenAIServer(FakeJudge(), context_window=WINDOW, chars_per_token=3.0) as server:
        code = grade_shortest_on(server, tmp_path, out)
        refused = server.stats.refused_context
    assert refused == 1
    assert [r.error for r in read_results(out)] == [None]
    assert code == 0


def test_a_scoring_call_refused_for_a_window_it_then_learns_is_sent_again_fitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A scoring cap that fits the assumed window but not the server's: the refusal states the
    # server's window, and the scoring call fitted to it is sent again (as a counting call is),
    # rather than the session ending on an API error.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "r.jsonl"
    with FakeOpenAIServer(FakeJudge(), context_window=WINDOW, chars_per_token=3.0) as server:
        code = grade_shortest_on(server, tmp_path, out, "--scoring-max-tokens", "3900")
        refused = server.stats.refused_context
        scoring_caps = [
            r.body["max_tokens"]
            for r in server.requests
            if r.body["response_format"]["json_schema"]["name"] == "criterion_scores"
        ]
    assert refused == 2  # the first counting call and the first scoring call
    assert scoring_caps[0] == 3900 and scoring_caps[-1] <= WINDOW // 2
    assert [r.error for r in read_results(out)] == [None]
    assert code == 0


def test_a_first_call_cut_at_a_tiny_cap_says_which_flag_to_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps(make_session("s", 2, 200).session) + "\n", encoding="utf-8")
    out = tmp_path / "r.jsonl"
    with FakeOpenAIServer(FakeJudge(), context_window=128_000) as server:  # cuts at the cap
        code = main(["grade", str(src), "--out", str(out), "--model", "gpt-4o",
                     "--base-url", server.base_url, "--no-cache",
                     "--quiet", "--counting-max-tokens", "20"])  # fmt: skip
        cut = server.stats.cut
    assert code == ExitCode.JUDGE_FAILED and cut == 1
    [result] = read_results(out)
    assert result.error_kind == "context" and result.error is not None
    assert "truncated at max_output_tokens" in result.error
    assert "20 output tokens" in result.error and "--counting-max-tokens" in result.error


async def test_a_scoring_call_refused_for_the_window_is_a_context_error_as_counting_is() -> None:
    # The refusal states no window to learn, so nothing can be re-fitted: the session ends with
    # kind ``context`` (as a counting call that cannot be split does), not ``api``, which a
    # resume would re-send to be refused again.
    from research_judge.errors import ContextLengthError

    def no_room_to_score(request: JudgeRequest) -> Any:
        if request.call == "scoring":
            return ContextLengthError("the prompt is too long for this model", 400)
        return fake_judge_reply(request)

    session = Session.model_validate(shortest_fixtures(1)[0])
    result = await small_judge(ScriptedClient(no_room_to_score)).grade(session)
    assert result.error_kind == "context"
    assert result.error is not None and result.error.startswith("scoring call: ")
    assert "too long" in result.error
