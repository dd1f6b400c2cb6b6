"""The ExpertQA validity benchmark: its reader, label rules, claim alignment, and whole runs.

The ExpertQA lines here are small and synthetic but in the published shape (README of
chaitanyamalaviya/ExpertQA: ``question``, ``answers.<system>`` with ``answer_string``,
``attribution``, ``claims[]`` of ``claim_string`` / ``evidence`` / ``support`` ...,
``usefulness``), as the shared copy of its validation split holds them.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from research_judge.baseline import BaselineClient
from research_judge.clients.base import CallKind, JudgeRequest, Message
from research_judge.judge.prompts import PromptSet
from research_judge.sessions.model import Session
from research_judge.testing import FakeJudge, FakeOpenAIServer
from research_judge.testing.fake_batches import FakeBatchServer

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def bench(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(f"validity.{name}")


expertqa, labels, align_mod, run = (bench(n) for n in ("expertqa", "labels", "align", "run"))

PASSAGE_1 = "Cold slows the chemical reactions inside lithium batteries, cutting their range."
PASSAGE_2 = "Heating the battery pack before driving restores most of the lost range."


def claim(text: str, support: str | None, *evidence: str) -> dict[str, Any]:
    return {
        "claim_string": text,
        "evidence": list(evidence),
        "support": support,
        "reason_missing_support": "",
        "informativeness": "Very relevant",
        "worthiness": "Yes",
        "correctness": "Definitely correct",
        "reliability": "Reliable",
        "revised_claim": text,
        "revised_evidence": "",
    }


def answer(text: str, claims: list[dict[str, Any]], usefulness: str = "Useful") -> dict[str, Any]:
    return {
        "answer_string": text,
        "attribution": ["[1] https://a.example/cold", "[2] https://b.example/heat"],
        "claims": claims,
        "revised_answer_string": text,
        "usefulness": usefulness,
        "annotation_time": 1000,
        "annotator_id": "x",
    }


def line(question: str, answers: dict[str, Any]) -> str:
    record = {
        "question": question,
        "annotator_id": "x",
        "answers": answers,
        "metadata": {"question_type": "Directed question", "field": "Engineering"},
    }
    return json.dumps(record)


EV1 = f"[1] https://a.example/cold\n\n{PASSAGE_1}"
EV2 = f"[2] https://b.example/heat\n\n{PASSAGE_2}"
GOOD = answer(
    "Cold slows the chemical reactions inside lithium batteries [1]. "
    "Heating the battery pack before driving restores most of the lost range [2].",
    [
        claim("Cold slows the chemical reactions inside lithium batteries [1].", "Complete", EV1),
        claim("Heating the battery pack before driving restores range [2].", "Partial", EV2),
    ],
)
BARE = answer(
    "Batteries dislike cold [1].",
    [claim("Batteries dislike cold [1].", "Complete", "[1] https://a.example/cold")],
)


def test_an_answer_with_its_evidence_text_becomes_a_session() -> None:
    reading = expertqa.read_lines([line("Why do batteries lose range?", {"sysA": GOOD})], "val")
    [item] = reading.items
    session = Session.model_validate(item.session)
    assert session.id == "val-001-sysA" and item.system == "sysA"
    assert [(r.id, r.url, r.content) for r in session.trajectory] == [
        ("1", "https://a.example/cold", PASSAGE_1),
        ("2", "https://b.example/heat", PASSAGE_2),
    ]
    assert session.answer == GOOD["answer_string"]
    assert [(c.support, c.cited) for c in item.claims] == [
        ("Complete", ("1",)),
        ("Partial", ("2",)),
    ]


def test_answers_without_passage_text_are_counted_out_and_bad_lines_named() -> None:
    lines = [
        line("Q one?", {"sysA": GOOD, "sysB": BARE}),
        "{not json",
        line("Q three?", {"sysA": answer("x [1].", [claim("x [1].", "Sure", EV1)])}),
        line("Q four?", {"sysA": answer("No cites.", [claim("No cites.", "Missing")])}),
    ]
    reading = expertqa.read_lines(lines, "val")
    assert [i.id for i in reading.items] == ["val-001-sysA"]
    assert reading.skipped == {"evidence without passage text": 1, "no cited evidence": 1}
    assert [e.split(":")[0] for e in reading.errors] == ["val line 2", "val line 3"]
    assert "'Sure' is unknown" in reading.errors[1]
    assert reading.answers == 3


def item(usefulness: str, *supports: str | None) -> Any:
    claims = [claim(f"Claim number {n} [1].", s, EV1) for n, s in enumerate(supports)]
    text = " ".join(c["claim_string"] for c in claims)
    [one] = expertqa.read_lines([line("Q?", {"s": answer(text, claims, usefulness)})], "v").items
    return one


@pytest.mark.parametrize(
    ("usefulness", "supports", "strict", "lenient"),
    [
        ("Useful", ["Complete"] * 4 + ["Partial"], "pass", "pass"),  # 4/5 = 80% Complete
        ("Useful", ["Complete"] * 3 + ["Partial", "Missing"], "fail", "pass"),
        ("Useful", ["Complete"] * 3 + ["Incomplete", "N/A"], "fail", "pass"),  # N/A not counted
        ("Useful", ["Complete", "N/A", None], "pass", "pass"),
        ("Partially useful", ["Complete"] * 5, "fail", "pass"),
        ("Not useful at all", ["Complete"] * 5, "fail", "fail"),
        ("Useful", ["Missing", "Missing", "Complete"], "fail", "fail"),
        ("Useful", ["N/A"], "pass", "pass"),  # no labelled claim: usefulness decides
    ],
)
def test_the_two_label_rules(
    usefulness: str, supports: list[str | None], strict: str, lenient: str
) -> None:
    one = item(usefulness, *supports)
    assert labels.answer_label(one, "strict") == strict
    assert labels.answer_label(one, "lenient") == lenient


def test_per_claim_labels() -> None:
    one = item("Useful", "Complete", "Partial", "Incomplete", "Missing", "N/A", None)
    assert [labels.claim_label(c, "strict") for c in one.claims] == [
        True, False, False, False, None, None,
    ]  # fmt: skip
    assert [labels.claim_label(c, "lenient") for c in one.claims] == [
        True, True, True, False, None, None,
    ]  # fmt: skip


def test_alignment_counts_what_the_judge_missed_and_what_it_invented() -> None:
    expert = [
        "Cold slows the chemical reactions inside lithium batteries [1].",
        "Heating the pack restores range [2].",
        "Range drops by a third in freezing weather [3].",
    ]
    judge = [
        "Heating the pack restores the range.",  # matches expert 1
        "cold slows chemical reactions inside lithium batteries",  # matches expert 0
        "The moon is made of rock.",  # invented
    ]
    found = align_mod.align(judge, expert)
    assert found.pairs == ((0, 1), (1, 0))
    assert found.missed == (2,)
    assert found.invented == (2,)


def test_alignment_is_one_to_one_best_first() -> None:
    expert = ["Cold slows lithium batteries."]
    judge = ["Cold slows lithium batteries down.", "Cold slows lithium batteries."]
    found = align_mod.align(judge, expert)
    assert found.pairs == ((1, 0),) and found.invented == (0,) and found.missed == ()


def write_data(folder: Path) -> Path:
    folder.mkdir()
    # Its own text: two identical requests share one recording (the fake judge answers by
    # session id, a real one by content), and the replay could not tell them apart.
    useless = answer(GOOD["answer_string"] + " Drive less.", GOOD["claims"], "Not useful at all")
    lines = [
        line("Why do lithium batteries lose range in cold weather?", {"sysA": GOOD, "sysB": BARE}),
        line("How can drivers get back range lost to the cold?", {"sysA": useless, "sysC": GOOD}),
    ]
    (folder / "rand_val.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def table_of(out: str) -> str:
    return out[out.index("ExpertQA validity benchmark") :]


def test_a_baseline_run_prints_the_same_table_twice_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_data(tmp_path / "data")
    out = tmp_path / "out"
    assert run.main(["--data", str(data), "--out", str(out)]) == 0
    first = table_of(capsys.readouterr().out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge"] == {"provider": "baseline", "model": "lexical-1"}
    assert summary["measures"]["graded"] == 3 and summary["reading"]["skipped"] == {
        "evidence without passage text": 1
    }
    assert summary["measures"]["answer_level"]["strict"]["n"] == 3
    assert summary["measures"]["claims"]["strict"]["expert_labelled"] == 6
    assert (out / "recordings").is_dir()
    assert run.main(["--data", str(data), "--out", str(out)]) == 0  # resumed: nothing regraded
    assert table_of(capsys.readouterr().out) == first
    assert run.main(["--data", str(data), "--out", str(tmp_path / "fresh")]) == 0  # regraded
    assert table_of(capsys.readouterr().out) == first
    replayed = tmp_path / "replayed"
    replay = ["--replay", str(out / "recordings")]
    assert run.main(["--data", str(data), "--out", str(replayed), *replay]) == 0
    assert table_of(capsys.readouterr().out) == first


def test_a_run_against_serve_fake_and_its_replay_agree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = write_data(tmp_path / "data")
    judge = ["--provider", "openai", "--model", "gpt-4.1-mini"]
    with FakeOpenAIServer(FakeJudge()) as server:
        live = ["--base-url", server.base_url]
        assert run.main(["--data", str(data), "--out", str(tmp_path / "a"), *judge, *live]) == 0
        assert server.stats.failed == 0
        first = table_of(capsys.readouterr().out)
        replay = ["--base-url", server.base_url, "--replay", str(tmp_path / "a" / "recordings")]
        sent = len(server.requests)
        assert run.main(["--data", str(data), "--out", str(tmp_path / "b"), *judge, *replay]) == 0
        assert len(server.requests) == sent  # the replay sent nothing
    assert "judge openai/gpt-4.1-mini" in first
    assert table_of(capsys.readouterr().out) == first


def test_the_dry_run_estimates_and_grades_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_data(tmp_path / "data")
    out = tmp_path / "out"
    args = ["--data", str(data), "--out", str(out), "--provider", "openai"]
    assert run.main([*args, "--model", "gpt-4.1-mini", "--dry-run"]) == 0
    assert "dry run: 3 session(s)" in capsys.readouterr().out
    assert not (out / "results.jsonl").exists()


def test_missing_data_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["--data", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "rand_val.jsonl" in capsys.readouterr().err


def test_the_fit_keeps_the_threshold_with_the_best_kappa_and_checks_the_shipped_one() -> None:
    fit = bench("fit_baseline")
    # Supported claims score 0.3 and up, unsupported ones below 0.3 except one at 0.5.
    scored = [(0.3, True), (0.45, True), (0.9, True), (0.1, False), (0.25, False), (0.5, False)]
    rows = fit.sweep(scored)
    threshold, kappa, agreement = fit.winner(rows)
    assert (threshold, agreement) == (0.3, 5 / 6) and kappa == pytest.approx(2 / 3)
    rows = {t: k for t, k, _ in rows}
    assert rows[0.05] == pytest.approx(0.0)  # every claim grounded: no better than chance


REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EXPERTQA_DIR", REPO.parent / "shared" / "data" / "expertqa"))


@pytest.mark.skipif(
    not (SHARED / "rand_val.jsonl").is_file(), reason="ExpertQA's validation split not here"
)
def test_the_figures_the_docs_quote_are_what_a_run_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run.main(["--data", str(SHARED), "--out", str(tmp_path)]) == 0
    table = table_of(capsys.readouterr().out)
    docs = (REPO / "docs" / "validity-benchmark.md").read_text(encoding="utf-8")
    quoted = docs.split("## The baseline judge on the validation split")[1].split("```")[1]
    assert quoted.strip("\n") == table.split("\n\n", 1)[1].strip("\n")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("**Against ExpertQA's experts**")[1].split("Barely above")[0]
    cells = [
        c.strip() for row in section.splitlines() if row.startswith("| ") for c in row.split("|")
    ]
    figures = [c.split(", kappa ")[0] for c in cells if c[:1] in "+-0123456789" and "[" in c]
    assert len(figures) == 8
    assert all(f in table for f in figures), [f for f in figures if f not in table]


def baseline_behind_http(body: dict[str, Any]) -> str:
    """A batch line answered by the baseline rules, read from the body as any server reads it."""
    messages = body["messages"]
    system = next(m["content"] for m in messages if m["role"] == "system")
    user = next(m["content"] for m in messages if m["role"] == "user")
    name = body["response_format"]["json_schema"]["name"]
    call: CallKind = "counting" if name == "counting_verdicts" else "scoring"
    request = JudgeRequest(call, system, (Message("user", user),), name, {})
    return BaselineClient(PromptSet()).reply(request)


def test_a_batch_run_answered_by_the_baseline_rules_gives_the_baselines_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = write_data(tmp_path / "data")
    assert run.main(["--data", str(data), "--out", str(tmp_path / "local")]) == 0
    local = table_of(capsys.readouterr().out)
    with FakeBatchServer(baseline_behind_http) as server:
        batch = ["--provider", "openai", "--model", "gpt-4o-mini", "--batch"]
        batch += ["--batch-poll", "0.02", "--base-url", server.openai_base_url]
        assert run.main(["--data", str(data), "--out", str(tmp_path / "batch"), *batch]) == 0
    remote = table_of(capsys.readouterr().out)
    assert "judge openai/gpt-4o-mini" in remote
    assert remote.split("\n", 1)[1] == local.split("\n", 1)[1]


def test_a_judge_error_is_counted_and_left_out_of_every_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_data(tmp_path / "data")
    out = tmp_path / "out"
    assert run.main(["--data", str(data), "--out", str(out)]) == 0
    capsys.readouterr()
    # Drop the recorded counting reply of one answer: replaying, that answer is a judge error.
    for path in (out / "recordings").glob("*.json"):
        record = json.loads(path.read_text())
        if record["session_id"] == "rand_val-002-sysC" and record["request"]["call"] == "counting":
            path.unlink()
    replay = ["--replay", str(out / "recordings")]
    assert run.main(["--data", str(data), "--out", str(tmp_path / "again"), *replay]) == 0
    table = table_of(capsys.readouterr().out)
    assert "graded 2, judge errors 1 (left out of every figure)" in table
    summary = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert summary["measures"]["answer_level"]["strict"]["n"] == 2
    assert summary["measures"]["claims"]["strict"]["expert_labelled"] == 4


def test_it_never_writes_into_a_folder_it_did_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_data(tmp_path / "data")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "sessions.jsonl").write_text("my own sessions\n", encoding="utf-8")
    assert run.main(["--data", str(data), "--out", str(mine)]) == 2
    assert "did not write" in capsys.readouterr().err
    assert (mine / "sessions.jsonl").read_text(encoding="utf-8") == "my own sessions\n"
