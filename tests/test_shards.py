"""``grade --shard I/N`` splits a run by session-id hash; ``merge`` joins the shards back in
input order, and refuses shards that do not belong together."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.errors import ConfigError, ExitCode
from research_judge.results.model import read_results
from research_judge.sessions.shards import parse_shard, shard_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSIONS = FIXTURES / "sessions.jsonl"
REPLAY = ["--provider", "scripted", "--model", "authored-lenient-judge", "--quiet",
          "--replay", str(FIXTURES / "recordings")]  # fmt: skip


def grade(out: Path, *extra: str) -> int:
    return main(["grade", str(SESSIONS), "--out", str(out), *REPLAY, *extra])


def test_a_session_belongs_to_one_shard_the_same_everywhere() -> None:
    ids = [f"s-{i}" for i in range(4000)]
    shards = [shard_of(i, 4) for i in ids]
    assert shards == [shard_of(i, 4) for i in ids]  # deterministic
    assert set(shards) == {1, 2, 3, 4}
    assert min(Counter(shards).values()) > 900  # a hash, not a cut: every shard gets its share
    assert {shard_of(i, 1) for i in ids} == {1}
    # Fixed by the id alone (not the process's hash seed): a known value.
    assert shard_of("s-0001", 8) == shard_of("s-0001", 8) and 1 <= shard_of("s-0001", 8) <= 8


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text)


def test_shards_graded_apart_merge_into_the_unsharded_run_byte_for_byte(tmp_path: Path) -> None:
    assert grade(tmp_path / "whole.jsonl") == ExitCode.OK
    parts = [tmp_path / f"part{i}.jsonl" for i in (1, 2, 3)]
    for i, part in enumerate(parts, start=1):
        assert grade(part, "--shard", f"{i}/3") == ExitCode.OK
    ids = [[r.session_id for r in read_results(p)] for p in parts]
    assert all(ids) and sum(len(x) for x in ids) == 20
    assert len(set().union(*map(set, ids))) == 20  # disjoint, and together every session
    merged = tmp_path / "merged.jsonl"
    argv = ["merge", *map(str, reversed(parts)), "--sessions", str(SESSIONS), "--out", str(merged)]
    assert main(argv) == ExitCode.OK
    assert merged.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


def test_a_shard_run_resumes_like_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    part = tmp_path / "part.jsonl"
    assert grade(part, "--shard", "2/3") == ExitCode.OK
    capsys.readouterr()
    assert grade(part, "--shard", "2/3") == ExitCode.OK
    assert "graded 0 (reused" in capsys.readouterr().out


def _shards(tmp_path: Path, n: int) -> list[Path]:
    parts = [tmp_path / f"p{i}.jsonl" for i in range(1, n + 1)]
    for i, part in enumerate(parts, start=1):
        assert grade(part, "--shard", f"{i}/{n}") == ExitCode.OK
    return parts


def merge(tmp_path: Path, *shards: Path) -> int:
    out = tmp_path / "merged.jsonl"
    return main(["merge", *map(str, shards), "--sessions", str(SESSIONS), "--out", str(out)])


def test_overlapping_shards_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p1, _ = _shards(tmp_path, 2)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(p1.read_bytes())
    assert merge(tmp_path, p1, copy) == ExitCode.FAILED
    assert "same shard" in capsys.readouterr().err
    assert not (tmp_path / "merged.jsonl").exists()


def test_shards_of_different_judges_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p1, p2 = _shards(tmp_path, 2)
    lines = p2.read_text(encoding="utf-8").splitlines()
    changed = []
    for line in lines:
        data = json.loads(line)
        data["judge"]["fingerprint"] = "another-judge"
        changed.append(json.dumps(data))
    p2.write_text("\n".join(changed) + "\n", encoding="utf-8")
    assert merge(tmp_path, p1, p2) == ExitCode.FAILED
    assert "different judges" in capsys.readouterr().err
    assert not (tmp_path / "merged.jsonl").exists()


def test_a_missing_shard_or_a_foreign_line_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p1, p2, p3 = _shards(tmp_path, 3)
    # Two of three: N is taken as 2, and the files are not shards of 2.
    assert merge(tmp_path, p1, p2) == ExitCode.FAILED
    assert "shard" in capsys.readouterr().err
    # Lines out of input order in one shard: named, nothing written.
    lines = p3.read_text(encoding="utf-8").splitlines(keepends=True)
    p3.write_text("".join(reversed(lines)), encoding="utf-8")
    assert merge(tmp_path, p1, p2, p3) == ExitCode.FAILED
    assert "not where" in capsys.readouterr().err
    assert not (tmp_path / "merged.jsonl").exists()


def test_merge_replaces_only_a_results_file_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = _shards(tmp_path, 2)
    out = tmp_path / "merged.jsonl"
    out.write_text("session_id,label\ns-0001,pass\n", encoding="utf-8")  # someone's labels
    argv = ["merge", *map(str, parts), "--sessions", str(SESSIONS), "--out", str(out)]
    assert main(argv) == ExitCode.FAILED
    assert "not replacing it" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8").startswith("session_id,label")
    assert main([*argv, "--force"]) == ExitCode.OK
    assert main(argv) == ExitCode.OK  # a results file now: replaced
    assert len(read_results(out)) == 20
