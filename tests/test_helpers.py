"""The shared helpers every writer and reader uses: atomic writes, validation messages."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from research_judge import _files
from research_judge._files import atomic_file, write_atomically
from research_judge._validation import describe_validation_error
from research_judge.errors import OutputError


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_file(target) as out:
        out.write(b"half of the new")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["report.html"]


def test_a_rewrite_keeps_the_files_permissions(tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    target.write_text("old")
    target.chmod(0o640)
    write_atomically(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o640


def test_new_files_get_umask_permissions_or_owner_only(tmp_path: Path) -> None:
    write_atomically(tmp_path / "shared.md", "x")
    write_atomically(tmp_path / "a" / "private.json", "x", private=True)
    assert mode(tmp_path / "a" / "private.json") == 0o600
    # As open() would have made it (mkstemp alone would give 0600).
    assert mode(tmp_path / "shared.md") == 0o666 & ~_files._umask()


class _Shape(BaseModel):
    a: int
    b: str
    c: list[int]


def test_validation_errors_read_as_paths_and_count_the_rest() -> None:
    with pytest.raises(ValidationError) as caught:
        _Shape.model_validate({"a": "x", "c": [1, "y"]})
    text = describe_validation_error(caught.value, limit=2)
    assert text == (
        "a: Input should be a valid integer, unable to parse string as an integer; "
        "b: missing; and 1 more"
    )
    with pytest.raises(ValidationError) as bad_json:
        _Shape.model_validate_json("{nope")
    assert describe_validation_error(bad_json.value) == "not valid JSON"


def test_a_no_replace_write_never_overwrites_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "suggest.csv"
    write_atomically(target, "first", replace=False)
    with pytest.raises(FileExistsError):
        write_atomically(target, "second", replace=False)
    assert target.read_text() == "first"
    assert os.listdir(tmp_path) == ["suggest.csv"]


def test_missing_folders_are_made_unless_parents_is_false(tmp_path: Path) -> None:
    write_atomically(tmp_path / "a" / "b" / "report.md", "x")
    assert (tmp_path / "a" / "b" / "report.md").read_text() == "x"
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "typo" / "out.jsonl", "x", parents=False)
    assert not (tmp_path / "typo").exists()


def test_a_symlinked_target_stays_a_link_and_its_file_keeps_its_mode(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    write_atomically(link, "new")
    assert link.is_symlink() and real.read_text() == "new" and mode(real) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.jsonl", "real.jsonl"]


def test_a_target_that_is_not_a_regular_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (folder, fifo):
        with pytest.raises(OutputError, match="not a regular file"):
            write_atomically(target, "x", what="--md")
    assert folder.is_dir() and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["out", "pipe"]
