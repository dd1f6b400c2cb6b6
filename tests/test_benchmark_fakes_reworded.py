"""The benchmarks' fake judges answer from the request, never from the prompt's wording.

Requests are rendered from ``tests/reworded_prompts/`` (every sentence and marker of the shipped
prompts changed), and every fake the benchmarks use, given that folder, answers them as it
answers the shipped ones: the fake server's ``BodyReplies`` (from the body), ``KnownSessions``
(batch lines) and the in-process ``InstantClient``. They read each request back through the
templates that rendered it; a fake that read reference ids from the prompt's wording would
answer these with no verdicts, and the runs below would not be clean.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from research_judge.clients.base import JudgeRequest
from research_judge.clients.chain import ClientSettings, build_client
from research_judge.clients.openai import OpenAIClient
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.evidence import EvidenceChecker
from research_judge.judge.grader import Judge, JudgeSettings
from research_judge.judge.prompts import PromptSet
from research_judge.judge.verdicts import parse_counting, parse_scoring
from research_judge.results.model import Result, read_results
from research_judge.sessions.model import Session, iter_sessions
from research_judge.testing import FakeBatchServer, FakeOpenAIServer
from research_judge.testing.shown import UnknownRequest

BENCH_DIR = Path(__file__).resolve().parents[1] / "benchmarks"
REWORDED = Path(__file__).resolve().parent / "reworded_prompts"


def bench(name: str) -> ModuleType:
    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    return importlib.import_module(name)


@pytest.fixture
def sessions_file(tmp_path: Path) -> Path:
    return Path(bench("judge_replies").write_sessions(tmp_path / "bench.sessions.jsonl", 12))


def reworded_requests(src: Path) -> list[tuple[Session, tuple[JudgeRequest, JudgeRequest]]]:
    judge = Judge(bench("instant_client").InstantClient(), prompts=PromptSet(REWORDED))
    out = []
    for _, item in iter_sessions(src):
        assert isinstance(item, Session)
        out.append((item, judge.first_requests(item)))
    return out


def assert_fits(session: Session, counting: str, scoring: str) -> None:
    """A reply to each call that parses, judges every reference, and quotes what is there."""
    verdicts = parse_counting(counting, session.reference_ids)
    assert {v.id for v in verdicts if v.check == "relevant"} == set(session.reference_ids)
    checker = EvidenceChecker(session)
    assert all(checker.check(v).evidence_verified for v in verdicts)
    assert {v.answer for v in verdicts} == {True, False}
    assert set(parse_scoring(scoring)) == {"effectiveness", "fluff", "structure"}


def test_the_requests_are_really_reworded(sessions_file: Path) -> None:
    (_, (counting, _)), *_ = reworded_requests(sessions_file)
    prompt = counting.messages[0].content
    assert "[[begin answer " in prompt
    # The line the benchmarks' fake used to read its reference ids from is gone.
    assert "The trajectory holds" not in prompt and "references:" not in prompt


async def test_every_benchmark_fake_answers_reworded_requests(sessions_file: Path) -> None:
    reworded = PromptSet(REWORDED)
    replies, instant = bench("judge_replies"), bench("instant_client").InstantClient(reworded)
    body_fake = replies.BodyReplies(reworded)
    batch_fake = bench("known_sessions").KnownSessions.from_file(sessions_file, PromptSet(REWORDED))
    wire = OpenAIClient("gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    rendered = reworded_requests(sessions_file)
    assert len(batch_fake) == 2 * len(rendered) == 24
    for session, pair in rendered:
        answers: list[list[str]] = []
        for request in pair:
            body = wire.request_body(request)
            answers.append(
                [
                    body_fake.respond(body, {}),  # the fake server, over HTTP
                    batch_fake(body),  # a batch line: the body alone
                    (await instant.complete(request)).content,  # in process
                ]
            )
        (counting, *other_counting), (scoring, *other_scoring) = answers
        assert other_counting == [counting, counting] and other_scoring == [scoring, scoring]
        assert_fits(session, counting, scoring)


def test_the_fakes_refuse_what_they_cannot_read(sessions_file: Path) -> None:
    wire = OpenAIClient("gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    (_, (counting, _)), *_ = reworded_requests(sessions_file)
    body = wire.request_body(counting)
    # Rendered from other prompts than the fake reads: refused (HTTP 400 from the server).
    with pytest.raises(UnknownRequest, match="not those of the prompts folder"):
        bench("judge_replies").BodyReplies().respond(body, {})
    # A batch line rendered from other prompts than the fake knows: an error, not a guess.
    shipped = bench("known_sessions").KnownSessions.from_file(sessions_file)
    with pytest.raises(KeyError, match="no session this fake knows"):
        shipped(body)


async def test_the_in_process_fake_refuses_what_it_cannot_read(sessions_file: Path) -> None:
    (_, (counting, scoring)), *_ = reworded_requests(sessions_file)
    instant = bench("instant_client").InstantClient()  # reads the shipped prompts
    for request in (counting, scoring):  # never answered as if it showed no references
        with pytest.raises(UnknownRequest, match="not those of the prompts folder"):
            await instant.complete(request)


def clean(results: list[Result], src: Path) -> list[Result]:
    ids = [json.loads(line)["id"] for line in src.read_text().splitlines()]
    assert [r.session_id for r in results] == ids
    assert [(r.session_id, r.error) for r in results if r.error] == []
    for r in results:
        assert r.evidence.total > 0 and r.evidence.verified == r.evidence.total
    return results


async def instant_results(src: Path, tmp_path: Path) -> list[Any]:
    """The ratios of the same sessions graded in process with the shipped prompts."""
    out = tmp_path / "instant.out.jsonl"
    judge = Judge(bench("instant_client").InstantClient())
    await grade_file(src, out, judge, RunOptions())
    return [r.ratios for r in clean(read_results(out), src)]


async def test_the_benchmark_chain_grades_reworded_prompts_over_http(
    sessions_file: Path, tmp_path: Path
) -> None:
    pipeline = bench("pipeline")
    out = tmp_path / "http.out.jsonl"
    with FakeOpenAIServer(bench("judge_replies").BodyReplies(PromptSet(REWORDED))) as server:
        judge, client = pipeline.build_chain(server.base_url, 4)
        reworded = Judge(judge.client, prompts=PromptSet(REWORDED), settings=one_attempt())
        try:
            await grade_file(sessions_file, out, reworded, RunOptions(concurrency=4))
        finally:
            await client.aclose()
    assert server.stats.failed == 0 and server.stats.completed == 2 * 12
    results = clean(read_results(out), sessions_file)
    assert [r.ratios for r in results] == await instant_results(sessions_file, tmp_path)


def test_the_bare_loops_send_what_the_fake_answers_from(sessions_file: Path) -> None:
    fake = bench("judge_replies").BodyReplies()
    for pair in bench("bare_loop").render_calls(sessions_file):
        for body, headers in pair:
            assert headers == {}  # the body alone, as the pipeline sends it
            assert fake.respond(body, headers)


async def test_the_batch_benchmarks_fake_grades_reworded_prompts(
    sessions_file: Path, tmp_path: Path
) -> None:
    known = bench("known_sessions").KnownSessions.from_file(sessions_file, PromptSet(REWORDED))
    out = tmp_path / "batch.out.jsonl"
    with FakeBatchServer(known, polls_to_finish=1) as server:
        settings = ClientSettings(
            model="gpt-4o-mini",
            base_url=server.openai_base_url,
            api_key="sk-test",
            cache=False,
            batch=True,
            batch_poll=0.02,
            batch_dir=f"{out}.batches",
        )
        client = build_client(settings)
        judge = Judge(client, prompts=PromptSet(REWORDED), settings=one_attempt())
        try:
            await grade_file(sessions_file, out, judge, RunOptions(concurrency=100, window=100))
        finally:
            await client.aclose()
    assert server.stats.batches_created == 1 and sum(server.stats.batched.values()) == 24
    results = clean(read_results(out), sessions_file)
    assert [r.ratios for r in results] == await instant_results(sessions_file, tmp_path)


def one_attempt() -> JudgeSettings:
    # A reply the judge had to re-ask for would be an error: every first answer must fit.
    return JudgeSettings(max_attempts=1)
