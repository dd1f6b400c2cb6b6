"""Results read as slim records (``results.rows``): the same numbers as the full ``Result`` of
each line, the same errors at the same lines, and the full result back for the few shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_judge.errors import InputFileError
from research_judge.results.model import CITATION_NAMES, CRITERIA, SCORE_NAMES, read_results
from research_judge.results.rows import ResultRow, ResultsRun, iter_rows, read_rows
from research_judge.testing.scale_results import write_results

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _generated(tmp_path: Path) -> Path:
    return write_results(tmp_path / "r.jsonl", 300, variant=1, repeats=3)


def test_every_row_holds_what_its_full_result_holds(tmp_path: Path) -> None:
    path = _generated(tmp_path)
    rows = read_rows(path)
    full = read_results(path)
    assert [r.session_id for r in rows] == [r.session_id for r in full]
    assert rows == [ResultRow.of(r, line=i) for i, r in enumerate(full, start=1)]
    for row, result in zip(rows, full, strict=True):
        assert row.ok == result.ok
        for name in (*CRITERIA, *CITATION_NAMES):
            assert row.criterion_value(name) == result.criterion_value(name)
        for name in SCORE_NAMES:
            expected = result.scores[name].score if result.scores else None
            assert row.score(name) == expected
        assert row.judge == result.judge
        assert row.repeats == result.repeats


def test_rows_of_one_file_share_their_judge_objects(tmp_path: Path) -> None:
    rows = read_rows(write_results(tmp_path / "r.jsonl", 2000))
    judges = {id(r.judge) for r in rows}
    assert len(judges) == len({r.judge.model_dump_json() for r in rows if r.judge}) == 2


def test_a_bad_value_in_a_field_a_row_keeps_is_named_at_its_line(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", 5)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = json.loads(lines[2])
    bad["ratios"] = {"relevance": 7.5, "utilization": None, "grounding": None}
    lines[2] = json.dumps(bad) + "\n"
    lines[3] = "{not json\n"
    path.write_text("".join(lines), encoding="utf-8")
    items = list(iter_rows(path))
    errors = [i for i in items if isinstance(i, InputFileError)]
    assert [e.line for e in errors] == [3, 4]
    assert "relevance" in str(errors[0]) and str(errors[0]).startswith(f"{path}:3:")
    with pytest.raises(InputFileError, match=":3:"):
        read_rows(path)
    # read_results names the same line for the same damage.
    with pytest.raises(InputFileError, match=":3:"):
        read_results(path)


def test_duplicate_ids_are_refused_as_read_results_refuses_them(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", 3)
    first = path.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(first)
    with pytest.raises(InputFileError, match=r":4: duplicate session id 'sess-0000000'"):
        read_rows(path)


def test_the_sessions_shown_are_read_back_in_full_from_their_lines(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", 50, skip_every=7)
    run = ResultsRun.load(path)
    by_id = {r.session_id: r for r in read_results(path)}
    wanted = ["sess-0000003", "sess-0000049", "sess-0000021", "sess-0000020"]  # 20: skipped
    got = run.full(wanted)
    assert set(got) == set(wanted[:3])
    for sid, result in got.items():
        assert result == by_id[sid]
    assert run.questions(wanted[:2]) == {s: by_id[s].question for s in wanted[:2]}
    # Results held in memory answer from the objects themselves.
    held = ResultsRun.of(by_id.values())
    assert held.full(wanted) == got
    assert held.rows == [ResultRow.of(r) for r in by_id.values()]


def test_a_file_changed_under_the_second_pass_is_an_error_not_a_wrong_session(
    tmp_path: Path,
) -> None:
    path = write_results(tmp_path / "r.jsonl", 10)
    run = ResultsRun.load(path)
    write_results(path, 10, seed=1, skip_every=2)  # other ids at the same lines
    with pytest.raises(InputFileError, match="changed while it was being read"):
        run.full(["sess-0000003"])


def test_the_fixture_results_read_the_same_as_rows() -> None:
    # The demo's graded fixtures carry real grader output (citations, context, usage).
    for path in FIXTURES.rglob("*.jsonl"):
        try:
            full = read_results(path)
        except InputFileError:
            continue  # sessions, labels, replies: not results files
        assert read_rows(path) == [ResultRow.of(r, line=i) for i, r in enumerate(full, 1)]


def test_a_pooled_file_repeats_its_first_sessions_under_new_ids(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", 40, pool=9, skip_every=5, variant=1)
    plain = write_results(tmp_path / "p.jsonl", 9, skip_every=5, variant=1)
    rows = read_rows(path)
    first = {r.session_id: r for r in read_rows(plain)}
    assert len(rows) == 32 and len({r.session_id for r in rows}) == 32
    for row in rows:
        k = int(row.session_id.removeprefix("sess-")) % 9
        template = first.get(f"sess-{k:07d}")
        if template is not None:  # a skipped template's sessions are made afresh
            assert (row.verdict, row.relevance, row.input_tokens) == (
                template.verdict, template.relevance, template.input_tokens,
            )  # fmt: skip
