"""Out of memory is a clear error naming the input, its size and the way around it: exit 2,
never the internal-error exit 70 (a bug's) and never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.errors import ExitCode
from research_judge.results import rows
from research_judge.testing.scale_results import write_results


def _no_memory(*_: object, **__: object) -> rows.ResultsRun:
    raise MemoryError


@pytest.mark.parametrize("verb", ["report", "compare", "validate"])
def test_a_verb_out_of_memory_names_its_inputs_their_size_and_the_way_around(
    verb: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = write_results(tmp_path / "results.jsonl", 40)
    labels = tmp_path / "labels.csv"
    labels.write_text("session_id,label\nsess-0000001,pass\n", encoding="utf-8")
    argv = {
        "report": ["report", str(results), "--md", str(tmp_path / "r.md")],
        "compare": ["compare", str(results), str(results)],
        "validate": ["validate", str(results), "--labels", str(labels)],
    }[verb]
    # What a run past the machine's memory raises where the rows are built.
    monkeypatch.setattr(rows.ResultsRun, "load", _no_memory)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == ExitCode.FAILED != ExitCode.INTERNAL
    size = results.stat().st_size / 1000
    assert (
        f"research-judge {verb}: error: out of memory while reading {results} ({size:.1f} kB)"
        in err
    )
    assert "research-judge export" in err and "--parquet" in err
    assert "Traceback" not in err
    assert not (tmp_path / "r.md").exists()
