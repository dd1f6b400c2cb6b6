"""A session far below the judge's window takes one counting call, however long its answer.

Every counting call carries a verdict for every claim, so splitting the references across calls
cannot shrink that part of the reply. A session of 2 references (1,468 trajectory tokens) whose
answer ran to 4,806 characters was split in two against a 128k window: the claims' worst-case
reply was over the 8,192-token output cap, and splitting only repeated it.
"""

from __future__ import annotations

from research_judge.clients import ScriptedClient
from research_judge.cost.windows import ModelLimits
from research_judge.judge.context import reference_tokens
from research_judge.judge.grader import Judge
from research_judge.judge.planning import guessed_claim_tokens, output_allowance
from research_judge.sessions.model import Session

GPT_4O = ModelLimits(context_window=128_000, max_output_tokens=16_384)


def _session(references: int, ref_chars: int, answer_chars: int) -> Session:
    sentence = "In the sampled fleet, winter range fell by 23 percent on average. "
    answer = (sentence * (answer_chars // len(sentence) + 1))[:answer_chars]
    text = ("Cold batteries deliver less energy and cabin heating draws power. " * 200)[:ref_chars]
    return Session.model_validate(
        {"id": "s", "question": "What limits the range of electric trucks in winter?",
         "answer": answer,
         "trajectory": [{"id": f"r{i}", "content": text} for i in range(1, references + 1)]}
    )  # fmt: skip


def _counting_calls(session: Session, limits: ModelLimits = GPT_4O) -> int:
    judge = Judge(ScriptedClient([]), limits=limits)
    counting, _ = judge.first_requests(session)
    return len(judge.planner.forecast(session, counting))


def test_the_reported_session_is_one_counting_call_with_the_whole_cap() -> None:
    session = _session(references=2, ref_chars=2936, answer_chars=4806)
    assert sum(reference_tokens(r) for r in session.trajectory) == 1468
    judge = Judge(ScriptedClient([]), limits=GPT_4O)
    # The claims' worst case alone is over the cap: the reason it used to be split.
    assert output_allowance(0, guessed_claim_tokens(session.answer)) > judge.planner.output_cap
    counting, _ = judge.first_requests(session)
    plan = judge.planner.first(session, counting)
    assert plan.single
    assert plan.pack.request == counting  # the request as built: same prompt, same cap


def test_a_session_far_below_the_window_is_never_split_whatever_its_answer() -> None:
    for references in (2, 5):
        for answer_chars in (500, 4806, 12_000, 30_000):
            session = _session(references, 3000, answer_chars)
            assert _counting_calls(session) == 1, (references, answer_chars)


def test_many_references_or_a_big_trajectory_still_split() -> None:
    # 120 short references: 240 verdicts at their longest are over the output cap.
    assert _counting_calls(_session(120, 200, 300)) > 1
    # A trajectory larger than a small window is still split.
    small = ModelLimits(context_window=16_000, max_output_tokens=4_096)
    assert _counting_calls(_session(8, 12_000, 600), small) > 1
