"""Reading results as slim records changes no figure: every verb prints, byte for byte, what it
printed when it held every result in full (``tests/data/folds``, see ``folds_support``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from folds_support import commands, make_inputs, run

EXPECTED = Path(__file__).parent / "data" / "folds"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_inputs(tmp_path_factory.mktemp("folds"))


@pytest.mark.parametrize(
    "name",
    sorted(commands({k: Path(k) for k in ("cur", "base", "rejudged", "rep", "labels")}, Path())),
)
def test_verb_prints_what_the_whole_file_reader_printed(name: str, inputs: dict[str, Path]) -> None:
    argv = commands(inputs, inputs["cur"].parent)[name]
    code, text = run(argv, inputs["cur"].parent)
    assert f"exit {code}\n{text}" == (EXPECTED / name).read_text(encoding="utf-8")
