"""Ingest of logged sessions (contract section 1): good lines become sessions, bad lines become
errors naming the file and line, and one bad line never hides the good ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research_judge.errors import InputFileError
from research_judge.sessions.model import Reference, Session, iter_sessions


def good(sid: str = "s-1", **extra: Any) -> dict[str, Any]:
    return {
        "id": sid,
        "question": "What limits the range of electric trucks in winter?",
        "answer": "Cold reduces usable battery capacity [r2].",
        "trajectory": [
            {"id": "r1", "title": "Trucks", "url": "https://example.org/t", "content": "Text one."},
            {"id": "r2", "title": "...", "url": None, "content": "Cold cuts capacity."},
        ],
        "metadata": {"agent_version": "v12", "any": "thing"},
        **extra,
    }


def write_lines(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "sessions.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def read_all(path: Path) -> list[tuple[int, Session | InputFileError]]:
    return list(iter_sessions(path))


def only_error(path: Path) -> InputFileError:
    (item,) = read_all(path)
    assert isinstance(item[1], InputFileError), item
    return item[1]


def test_valid_line_becomes_a_session(tmp_path: Path) -> None:
    path = write_lines(tmp_path, [json.dumps(good())])
    [(line, session)] = read_all(path)
    assert line == 1
    assert isinstance(session, Session)
    assert session.id == "s-1"
    assert session.question.startswith("What limits")
    assert session.answer == "Cold reduces usable battery capacity [r2]."
    assert session.reference_ids == ["r1", "r2"]
    first = session.trajectory[0]
    assert isinstance(first, Reference)
    assert (first.title, first.url, first.content) == (
        "Trucks",
        "https://example.org/t",
        "Text one.",
    )
    assert session.trajectory[1].url is None


def test_title_and_url_are_optional(tmp_path: Path) -> None:
    line = good(trajectory=[{"id": "r1", "content": "only content"}])
    [(_, session)] = read_all(write_lines(tmp_path, [json.dumps(line)]))
    assert isinstance(session, Session)
    assert session.trajectory[0].title is None and session.trajectory[0].url is None


def test_metadata_is_carried_through_untouched(tmp_path: Path) -> None:
    metadata = {"agent_version": "v12", "nested": {"list": [1, 2.5, None, "x"]}, "flag": True}
    [(_, session)] = read_all(write_lines(tmp_path, [json.dumps(good(metadata=metadata))]))
    assert isinstance(session, Session)
    assert session.metadata == metadata


def test_null_metadata_is_an_empty_mapping(tmp_path: Path) -> None:
    [(_, session)] = read_all(write_lines(tmp_path, [json.dumps(good(metadata=None))]))
    assert session.metadata == {}


def test_missing_metadata_is_an_empty_mapping(tmp_path: Path) -> None:
    line = good()
    del line["metadata"]
    [(_, session)] = read_all(write_lines(tmp_path, [json.dumps(line)]))
    assert isinstance(session, Session)
    assert session.metadata == {}


def test_extra_fields_are_allowed_on_sessions_and_references(tmp_path: Path) -> None:
    line = good(agent_trace_id="abc")
    line["trajectory"][0]["fetched_at"] = "2024-01-01"
    [(_, session)] = read_all(write_lines(tmp_path, [json.dumps(line)]))
    assert isinstance(session, Session)
    assert session.model_dump()["agent_trace_id"] == "abc"
    assert session.trajectory[0].model_dump()["fetched_at"] == "2024-01-01"


def test_empty_trajectory_is_fine(tmp_path: Path) -> None:
    [(_, session)] = read_all(write_lines(tmp_path, [json.dumps(good(trajectory=[]))]))
    assert isinstance(session, Session)
    assert session.trajectory == [] and session.reference_ids == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "not valid JSON"),
        ('{"id": "s-1", "question": "q", "answer": "a"', "not valid JSON"),
        ('["s-1", "q", "a"]', "expected a JSON object, got list"),
        ('"just a string"', "expected a JSON object, got str"),
        ("42", "expected a JSON object, got int"),
        ("null", "expected a JSON object, got NoneType"),
    ],
)
def test_lines_that_are_not_json_objects(tmp_path: Path, line: str, expected: str) -> None:
    path = write_lines(tmp_path, [line])
    error = only_error(path)
    assert expected in error.message
    assert (error.path, error.line) == (str(path), 1)
    assert str(error).startswith(f"{path}:1: ")


@pytest.mark.parametrize("field", ["id", "question", "answer"])
def test_missing_required_field_is_named(tmp_path: Path, field: str) -> None:
    line = good()
    del line[field]
    error = only_error(write_lines(tmp_path, [json.dumps(line)]))
    assert f"{field}: missing" in error.message
    assert error.line == 1


@pytest.mark.parametrize(("field", "value"), [("id", 7), ("question", None), ("answer", ["a"])])
def test_required_field_of_the_wrong_type_is_named(
    tmp_path: Path, field: str, value: object
) -> None:
    error = only_error(write_lines(tmp_path, [json.dumps(good(**{field: value}))]))
    assert f"{field}: Input should be a valid string" in error.message


def test_empty_session_id_is_rejected(tmp_path: Path) -> None:
    error = only_error(write_lines(tmp_path, [json.dumps(good(sid=""))]))
    assert "id" in error.message


def test_reference_without_content_names_its_position(tmp_path: Path) -> None:
    line = good(trajectory=[{"id": "r1", "content": "x"}, {"id": "r2", "title": "no content"}])
    error = only_error(write_lines(tmp_path, [json.dumps(line)]))
    assert "session 's-1'" in error.message
    assert "trajectory.1.content: missing" in error.message


def test_reference_without_id_is_rejected(tmp_path: Path) -> None:
    line = good(trajectory=[{"content": "x"}])
    error = only_error(write_lines(tmp_path, [json.dumps(line)]))
    assert "trajectory.0.id: missing" in error.message


@pytest.mark.parametrize("trajectory", [{"r1": "x"}, "r1", None])
def test_trajectory_that_is_not_a_list(tmp_path: Path, trajectory: object) -> None:
    error = only_error(write_lines(tmp_path, [json.dumps(good(trajectory=trajectory))]))
    assert error.message.startswith("session 's-1': trajectory")
    assert "list" in error.message


def test_duplicate_reference_ids(tmp_path: Path) -> None:
    refs = [
        {"id": "r1", "content": "a"},
        {"id": "r2", "content": "b"},
        {"id": "r1", "content": "c"},
    ]
    error = only_error(write_lines(tmp_path, [json.dumps(good(trajectory=refs))]))
    assert "duplicate reference id 'r1'" in error.message
    assert "Value error" not in error.message


def test_duplicate_session_id_is_reported_on_the_later_line_and_first_kept(tmp_path: Path) -> None:
    first = good("s-1", answer="first answer")
    second = good("s-1", answer="second answer")
    path = write_lines(tmp_path, [json.dumps(first), json.dumps(good("s-2")), json.dumps(second)])
    items = read_all(path)
    assert [line for line, _ in items] == [1, 2, 3]
    kept, other, duplicate = (item for _, item in items)
    assert isinstance(kept, Session) and kept.answer == "first answer"
    assert isinstance(other, Session) and other.id == "s-2"
    assert isinstance(duplicate, InputFileError)
    assert duplicate.line == 3
    assert "duplicate session id 's-1'" in duplicate.message
    assert str(duplicate).startswith(f"{path}:3: ")


def test_an_invalid_line_does_not_claim_its_session_id(tmp_path: Path) -> None:
    broken = good("s-1")
    del broken["answer"]
    path = write_lines(tmp_path, [json.dumps(broken), json.dumps(good("s-1"))])
    (_, first), (_, second) = read_all(path)
    assert isinstance(first, InputFileError)
    assert isinstance(second, Session)


def test_blank_lines_are_skipped_and_line_numbers_stay_right(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path, ["", json.dumps(good("s-1")), "   ", "\t", "{bad", "", json.dumps(good("s-2"))]
    )
    items = read_all(path)
    assert [line for line, _ in items] == [2, 5, 7]
    assert isinstance(items[0][1], Session) and items[0][1].id == "s-1"
    assert isinstance(items[1][1], InputFileError) and items[1][1].line == 5
    assert isinstance(items[2][1], Session) and items[2][1].id == "s-2"


def test_good_lines_around_bad_ones_are_all_yielded_in_order(tmp_path: Path) -> None:
    lines = [json.dumps(good("a")), "nope", json.dumps(good("b")), "[]", json.dumps(good("c"))]
    items = read_all(write_lines(tmp_path, lines))
    kinds = [type(item).__name__ for _, item in items]
    assert kinds == ["Session", "InputFileError", "Session", "InputFileError", "Session"]
    assert [item.id for _, item in items if isinstance(item, Session)] == ["a", "b", "c"]


def test_crlf_line_endings_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "windows.jsonl"
    path.write_bytes((json.dumps(good("a")) + "\r\n" + json.dumps(good("b")) + "\r\n").encode())
    assert [item.id for _, item in read_all(path) if isinstance(item, Session)] == ["a", "b"]


def test_byte_order_mark_on_the_first_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(good("a")).encode() + b"\n")
    [(_, session)] = read_all(path)
    assert isinstance(session, Session) and session.id == "a"


def test_a_line_of_invalid_utf8_is_that_lines_error_only(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    bad = b'{"id": "b", "question": "caf\xe9", "answer": "a"}'
    path.write_bytes(
        json.dumps(good("a")).encode() + b"\n" + bad + b"\n" + json.dumps(good("c")).encode()
    )
    items = read_all(path)
    assert [line for line, _ in items] == [1, 2, 3]
    error = items[1][1]
    assert isinstance(error, InputFileError)
    assert error.line == 2 and "UTF-8" in error.message
    assert isinstance(items[2][1], Session)


def test_non_ascii_text_survives(tmp_path: Path) -> None:
    line = good(question="Qu'est-ce qui limite l’autonomie ? 电池 🚚")
    [(_, session)] = read_all(write_lines(tmp_path, [json.dumps(line, ensure_ascii=False)]))
    assert isinstance(session, Session)
    assert session.question == "Qu'est-ce qui limite l’autonomie ? 电池 🚚"


def test_missing_file_raises_input_file_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.jsonl"
    with pytest.raises(InputFileError) as caught:
        read_all(path)
    assert caught.value.path == str(path)
    assert str(path) in str(caught.value)


def test_a_folder_is_not_a_sessions_file(tmp_path: Path) -> None:
    with pytest.raises(InputFileError) as caught:
        read_all(tmp_path)
    assert caught.value.path == str(tmp_path)


def test_an_empty_file_is_an_error_naming_it(tmp_path: Path) -> None:
    path = write_lines(tmp_path, [])
    ((_, item),) = read_all(path)
    assert isinstance(item, InputFileError)
    assert str(item) == f"{path}: no sessions in this file (it is empty)"
