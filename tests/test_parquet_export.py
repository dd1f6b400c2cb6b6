"""``research-judge export`` and ``grade --parquet``: the results as two Parquet tables, read
back here with pyarrow and checked field by field against the JSONL they came from."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from research_judge.cli import main
from research_judge.errors import ExitCode
from research_judge.results.model import read_results
from research_judge.results.parquet import SESSION_COLUMNS, VERDICT_COLUMNS
from research_judge.testing.scale_results import write_results

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPLAY = ["--provider", "scripted", "--model", "authored-lenient-judge", "--quiet",
          "--replay", str(FIXTURES / "recordings")]  # fmt: skip


def test_export_writes_one_row_per_session_and_one_per_verdict(tmp_path: Path) -> None:
    src = write_results(tmp_path / "results.jsonl", 120, variant=1, repeats=2)
    out = tmp_path / "tables" / "run.parquet"
    assert main(["export", str(src), "--parquet", str(out)]) == ExitCode.OK
    sessions = pq.read_table(out)
    verdicts = pq.read_table(tmp_path / "tables" / "run.verdicts.parquet")
    assert sessions.schema.names == [name for name, _ in SESSION_COLUMNS]
    assert verdicts.schema.names == [name for name, _ in VERDICT_COLUMNS]
    results = read_results(src)
    rows = sessions.to_pylist()
    assert [r["session_id"] for r in rows] == [r.session_id for r in results]
    for row, r in zip(rows, results, strict=True):
        assert row["verdict"] == r.verdict and row["error"] == r.error
        assert row["error_kind"] == (None if r.error_kind is None else str(r.error_kind))
        for name in ("relevance", "utilization", "grounding"):
            # An undefined ratio stays null: it is not a zero.
            assert row[name] == (None if r.ratios is None else getattr(r.ratios, name))
        for name in ("effectiveness", "fluff", "structure"):
            assert row[name] == (r.scores[name].score if r.scores else None)
        assert row["citation_precision"] == (None if r.citations is None else r.citations.precision)
        assert row["cost_usd"] == r.usage.cost_usd
        assert row["input_tokens"] == r.usage.input_tokens
        assert row["judge_model"] == (r.judge.model if r.judge else None)
        assert row["judge_fingerprint"] == (r.judge.fingerprint if r.judge else None)
        ctx = r.context
        assert ctx is not None
        assert row["context_trajectory_tokens"] == ctx.trajectory_tokens
        assert row["context_not_judged_claims"] == len(ctx.not_judged_claims)
        assert row["repeats_k"] == (r.repeats.k if r.repeats else None)
        assert row["question"] == r.question
    assert verdicts.num_rows == sum(len(r.verdicts) for r in results)
    first = results[0].verdicts[0]
    v = verdicts.slice(0, 1).to_pylist()[0]
    assert (v["session_id"], v["check"], v["id"], v["answer"], v["evidence"]) == (
        results[0].session_id, first.check, first.id, first.answer, first.evidence,
    )  # fmt: skip


def test_export_streams_in_batches_larger_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from research_judge.results import parquet

    monkeypatch.setattr(parquet, "BATCH", 7)  # several batches from a small file
    src = write_results(tmp_path / "results.jsonl", 50, skip_every=9)
    done = parquet.export_parquet(src, tmp_path / "r.parquet")
    table = pq.read_table(tmp_path / "r.parquet")
    assert done.sessions == table.num_rows == len(read_results(src))
    assert table.column("line").to_pylist() == list(range(1, done.sessions + 1))


def test_a_bad_line_is_named_and_leaves_no_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_results(tmp_path / "results.jsonl", 10)
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    broken = json.loads(lines[6])
    broken["verdicts"][0]["check"] = "vibes"
    lines[6] = json.dumps(broken) + "\n"
    src.write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "r.parquet"
    assert main(["export", str(src), "--parquet", str(out)]) == ExitCode.FAILED
    assert f"{src}:7:" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "r.verdicts.parquet").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl"]  # no temporary left


def test_export_refuses_to_write_over_its_input(tmp_path: Path) -> None:
    src = write_results(tmp_path / "results.jsonl", 3)
    before = src.read_bytes()
    assert main(["export", str(src), "--parquet", str(src)]) == ExitCode.FAILED
    assert src.read_bytes() == before


def test_without_pyarrow_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_results(tmp_path / "results.jsonl", 3)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # what an environment without it imports
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    assert main(["export", str(src), "--parquet", str(tmp_path / "r.parquet")]) == 2
    assert "pip install 'research-judge[parquet]'" in capsys.readouterr().err


def test_grade_parquet_writes_the_run_beside_its_jsonl(tmp_path: Path) -> None:
    out, table = tmp_path / "results.jsonl", tmp_path / "results.parquet"
    argv = ["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), *REPLAY]
    assert main([*argv, "--parquet", str(table)]) == ExitCode.OK
    rows = pq.read_table(table).to_pylist()
    results = read_results(out)
    assert [r["session_id"] for r in rows] == [r.session_id for r in results]
    assert [r["verdict"] for r in rows] == [r.verdict for r in results]
    assert pq.read_table(tmp_path / "results.verdicts.parquet").num_rows == sum(
        len(r.verdicts) for r in results
    )


def test_grade_without_pyarrow_stops_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    out = tmp_path / "results.jsonl"
    argv = ["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), *REPLAY]
    assert main([*argv, "--parquet", str(tmp_path / "r.parquet")]) == ExitCode.FAILED
    assert "pyarrow" in capsys.readouterr().err
    assert not out.exists()


def test_only_a_parquet_file_is_replaced_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_results(tmp_path / "results.jsonl", 4)
    mine = tmp_path / "notes.parquet"
    mine.write_text("my notes, not a table\n", encoding="utf-8")
    argv = ["export", str(src), "--parquet", str(mine)]
    assert main(argv) == ExitCode.FAILED
    assert "not replacing it" in capsys.readouterr().err
    assert mine.read_text(encoding="utf-8") == "my notes, not a table\n"
    assert main([*argv, "--force"]) == ExitCode.OK
    assert pq.read_table(mine).num_rows == 4
    assert main(argv) == ExitCode.OK  # a Parquet file there now: replaced without --force


def test_grade_refuses_a_parquet_target_that_is_not_parquet_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "r.parquet"
    mine.write_text("keep me\n", encoding="utf-8")
    out = tmp_path / "results.jsonl"
    argv = ["grade", str(FIXTURES / "sessions.jsonl"), "--out", str(out), *REPLAY]
    assert main([*argv, "--parquet", str(mine)]) == ExitCode.FAILED
    assert "--force" in capsys.readouterr().err
    assert not out.exists() and mine.read_text(encoding="utf-8") == "keep me\n"
