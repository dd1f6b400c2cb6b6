"""Nothing a log says can run as a CI workflow command, whichever verb prints it and wherever.

The GitHub Actions runner reads every output line: one that starts with ``::`` (after blanks) is
a workflow command, and so is any line holding the older ``##[command]`` form. Session ids, tool
names and questions come from the logs; these tests put command payloads in them and read every
verb's stdout and stderr the way the runner does. Only the tool's own annotations may be
commands.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.report import build_report, render_markdown
from research_judge.report.render import render_html
from results_support import make_result, write_results

REPO = Path(__file__).resolve().parents[2]

# As the runner registers them (ActionCommandManager, plus stop-commands).
REGISTERED = {"set-env", "set-output", "save-state", "add-mask", "add-path", "add-matcher",
              "remove-matcher", "debug", "warning", "error", "notice", "group", "endgroup",
              "echo", "stop-commands"}  # fmt: skip
PAYLOADS = [
    "x\n::warning::injected by a session id",
    "::add-mask::hide-this",
    "::stop-commands::TOKEN42",
    "a\r::error title=fake::carriage return",
    "b\u2028::notice::line separator",
    "plain ##[stop-commands]TOKEN43 anywhere",
    "  ::group::leading blanks",
    "esc \x1b[31mred\x1b[0m bell \x07",
]


def commands(text: str) -> list[tuple[str, str]]:
    """(command, the whole line) for every line the runner would run (both forms)."""
    found = []
    for line in re.split(r"\r\n|\r|\n", text):
        stripped = line.lstrip()
        if stripped.startswith("::"):
            end = stripped.find("::", 2)
            name = stripped[2:end].split(" ")[0] if end > 0 else ""
            if name in REGISTERED:
                found.append((name, line))
                continue
        for match in re.finditer(r"##\[([^\] ]*)", line):
            if match.group(1) in REGISTERED:
                found.append((match.group(1), line))
    return found


def same_commands(hostile: str, benign: str) -> None:
    """The hostile run's output holds the commands the same run over plain ids holds: its own
    annotations, one per line, and nothing the logs added."""
    assert [n for n, _ in commands(hostile)] == [n for n, _ in commands(benign)], hostile


def no_control_characters(text: str) -> None:
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", text), text


def hostile_like_benign(
    tmp_path: Path, run: Callable[[Path, list[str]], tuple[str, ...]], prefix: str = "s"
) -> tuple[str, ...]:
    """``run`` over the payloads as ids and over plain ids: the hostile outputs (stdout, stderr,
    then any files) hold the same commands as the plain ones, and stdout and stderr no control
    character. Returns the hostile outputs."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    hostile = run(tmp_path / "a", PAYLOADS)
    benign = run(tmp_path / "b", [f"{prefix}{i}" for i in range(len(PAYLOADS))])
    for mine, plain in zip(hostile, benign, strict=True):
        same_commands(mine, plain)
    no_control_characters(hostile[0] + hostile[1])
    return hostile


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_rule_itself(payload: str) -> None:
    from research_judge._text import inline, inline_lines

    shown = inline(payload)
    assert commands(shown) == [] and commands("\n" + shown) == []
    no_control_characters(shown)
    assert "\n" not in shown and "\t" not in shown
    assert commands(inline_lines(payload)) == []


def run_compare(
    tmp_path: Path, ids: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[str, str, str]:
    base = write_results(tmp_path / "b.jsonl", [make_result(i, "pass") for i in [*ids, "s-ok"]])
    cur = write_results(
        tmp_path / "c.jsonl", [*(make_result(i, "fail") for i in ids), make_result("s-ok")]
    )
    junit = tmp_path / "c.xml"
    code = main(["compare", str(base), str(cur), "--annotations", "--junit", str(junit)])
    captured = capsys.readouterr()
    assert code == 1
    return captured.out, captured.err, junit.read_text(encoding="utf-8")


def test_compare_text_gate_annotations_and_junit_are_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = hostile_like_benign(tmp_path, lambda where, ids: run_compare(where, ids, capsys))
    assert "Regressions (pass -> fail)" in hostile[0]
    assert any(name == "error" for name, _ in commands(hostile[0]))  # the gate still fails


def test_convert_errors_name_the_tool_inertly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [
        {"id": f"r{i}", "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None,
             "function_call": {"name": payload, "arguments": "{}"}},
        ]}
        for i, payload in enumerate(PAYLOADS)
    ]  # fmt: skip
    src = tmp_path / "chat.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code = main(["convert", "openai-chat", str(src), "--out", str(tmp_path / "s.jsonl")])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.count("has no result") == len(PAYLOADS)  # every bad record is named
    assert commands(captured.err) == [] and commands(captured.out) == []
    no_control_characters(captured.err)


def run_grade(tmp_path: Path, ids: list[str], base_url: str,
              capsys: pytest.CaptureFixture[str]) -> tuple[str, str, str, str]:  # fmt: skip
    from support import session, write_sessions

    sessions = []
    for i, sid in enumerate(ids):
        s = session(sid)
        # An offloaded reference with no store: an error naming the reference, for every one.
        s["trajectory"][0] = {"id": sid, "title": sid, "content_ref": f"k/{i}"}
        sessions.append(s)
    bad = json.dumps({"id": ids[0], "question": 7})
    src = write_sessions(tmp_path / "s.jsonl", sessions, extra_lines=[bad])
    junit, summary = tmp_path / "g.xml", tmp_path / "summary.md"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GITHUB_STEP_SUMMARY", str(summary))
        code = main(["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--provider", "openai",
                     "--model", "gpt-4o-mini", "--base-url", base_url,
                     "--no-cache", "--annotations", "--junit", str(junit)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 2
    files = junit.read_text(encoding="utf-8"), summary.read_text(encoding="utf-8")
    return captured.out, captured.err, *files


def test_grade_prints_hostile_ids_inertly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from research_judge.testing.fake_openai import FakeOpenAIServer

    from support import body_responder

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(body_responder) as srv:
        hostile = hostile_like_benign(
            tmp_path, lambda where, ids: run_grade(where, ids, srv.base_url, capsys)
        )
    assert "content_ref" in hostile[0]  # the errors are reported, inertly


def test_report_markdown_on_stdout_and_html_are_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = [make_result(p, "fail", question=p) for p in PAYLOADS]
    baseline = [make_result(p, "pass") for p in PAYLOADS]
    data = build_report(run, baseline=baseline)
    assert commands(render_markdown(data)) == []
    no_control_characters(render_markdown(data))
    assert commands(render_html(data)) == []
    results = write_results(tmp_path / "r.jsonl", run)
    assert main(["report", str(results), "--md", "-"]) == 0
    captured = capsys.readouterr()
    assert commands(captured.out) == [] and commands(captured.err) == []


def run_validate(
    tmp_path: Path, ids: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[str, str]:
    everyone = [*ids, *(f"x{i}" for i in range(6))]
    verdicts = [make_result(i, "pass" if n % 2 else "fail") for n, i in enumerate(everyone)]
    results = write_results(tmp_path / "r.jsonl", verdicts)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"session_id": i, "label": "pass" if n % 3 else "fail"}) + "\n"
                for n, i in enumerate([*everyone, ids[0] + "-only-labelled"])),
        encoding="utf-8",
    )  # fmt: skip
    main(["validate", str(results), "--labels", str(labels), "--bootstrap", "0",
          "--annotations", "--min-kappa", "0.99"])  # fmt: skip
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_validate_prints_hostile_ids_inertly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile_like_benign(tmp_path, lambda where, ids: run_validate(where, ids, capsys))


def run_tasks(
    tmp_path: Path, ids: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[str, ...]:
    fixture = REPO / "fixtures" / "tasks" / "tasks.jsonl"
    tasks = [json.loads(line) for line in fixture.read_text(encoding="utf-8").splitlines()]
    assert len(tasks) == len(ids)
    for task, task_id in zip(tasks, ids, strict=True):
        task["id"] = task_id
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    junit = tmp_path / "t.xml"
    code = main(["tasks", "run", str(path), "--agent", "fixtures.tasks.agents:v1",
                 "--annotations", "--junit", str(junit)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1  # half the fixture tasks fail, by design
    return captured.out, captured.err, junit.read_text(encoding="utf-8")


def test_tasks_prints_hostile_task_ids_inertly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.chdir(REPO)  # the agent spec is resolved from the working directory
    monkeypatch.setattr(sys, "path", list(sys.path))
    hostile_like_benign(tmp_path, lambda where, ids: run_tasks(where, ids, capsys), prefix="t")


def test_label_script_prints_hostile_ids_inertly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``label --script`` (the non-interactive labelling CI and ``make demo`` run) names each
    session it labels, skips and undoes: one inert line each, nothing the runner would run."""
    from support import session, write_sessions

    sessions = write_sessions(tmp_path / "s.jsonl", [session(p) for p in PAYLOADS])
    script = tmp_path / "keys.txt"
    script.write_text("s\n" + "p\n" * (len(PAYLOADS) - 1) + "u\n", encoding="utf-8")
    code = main(["label", str(sessions), "--labels", str(tmp_path / "l.csv"), "--annotator",
                 "ann", "--order", "input", "--script", str(script)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.count("labelled ") == len(PAYLOADS)  # every label is reported
    assert commands(captured.out) == [] and commands(captured.err) == []
    no_control_characters(captured.out + captured.err)
    # One line per key pressed, plus the closing line: no id spills onto a line of its own.
    assert len(captured.out.splitlines()) == len(PAYLOADS) + 2


def test_stability_prints_each_unstable_id_on_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The unstable sessions are listed one per line; a hostile id stays inside its line (its
    line break is shown as ``\\n``, not taken) and starts nothing."""
    flip = [{"verdict": v, "ratios": {"relevance": 0.8, "utilization": 0.6, "grounding": 0.9},
             "scores": {"effectiveness": 3, "fluff": 2, "structure": 3}}
            for v in ("pass", "fail", "pass")]  # fmt: skip
    repeats = {"k": 3, "aggregation": "majority", "samples": flip}
    results = write_results(
        tmp_path / "r.jsonl", [make_result(p, "pass", repeats=repeats) for p in PAYLOADS]
    )
    assert main(["stability", str(results), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert commands(out) == []
    no_control_characters(out)
    listed = out.split("Unstable sessions", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert len(listed) == len(PAYLOADS), listed
    assert all(line.startswith("  ") for line in listed), listed


def test_validate_prints_hostile_annotator_names_inside_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Annotator names come from a labels file as the ids do: each pair of annotators is one
    line of the human-agreement block, whatever the names hold."""
    names = ["x\n::warning::evil annotator", "::add-mask::second"]
    sids = [f"s{i}" for i in range(12)]
    results = write_results(
        tmp_path / "r.jsonl",
        [make_result(s, "pass" if n % 3 else "fail") for n, s in enumerate(sids)],
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"session_id": s, "label": "pass" if (n + k) % 3 else "fail",
                            "annotator": name}) + "\n"
                for n, s in enumerate(sids) for k, name in enumerate(names)),
        encoding="utf-8",
    )  # fmt: skip
    main(["validate", str(results), "--labels", str(labels), "--bootstrap", "0"])
    out = capsys.readouterr().out
    assert commands(out) == []
    no_control_characters(out)
    block = out.split("Human agreement (", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    pairs = [line for line in block if "Cohen's kappa" in line]
    assert len(pairs) == 1 and "vs x\\n::warning::evil annotator: " in pairs[0], block
    assert all(line.startswith("  ") for line in block), block


JSON_PAYLOADS = [*PAYLOADS, "c1 \x9b31m csi", "bidi \u202e reversed"]


def _json_ids(data: object) -> set[str]:
    """Every string anywhere in a JSON value."""
    if isinstance(data, str):
        return {data}
    if isinstance(data, dict):
        return set().union(*(_json_ids(v) for v in data.values()), set(data))
    if isinstance(data, list):
        return set().union(set(), *(_json_ids(v) for v in data))
    return set()


def _inert_json(out: str) -> object:
    assert commands(out) == [], out
    assert not re.search("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", out)
    data = json.loads(out)  # still JSON, and (below) the ids are exactly the logs' ids
    return data


def test_json_outputs_are_inert_and_keep_every_id_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json`` is data: the ids must come back byte for byte, and the text a CI runner reads
    must still start nothing (``##[`` anywhere in a line, raw C1 controls or bidi overrides).
    JSON escapes them without changing the value (``#\\u0023[``)."""
    base = write_results(
        tmp_path / "b.jsonl", [make_result(i, "pass") for i in [*JSON_PAYLOADS, "s-ok"]]
    )
    cur = write_results(
        tmp_path / "c.jsonl",
        [*(make_result(i, "fail") for i in JSON_PAYLOADS), make_result("s-ok")],
    )
    main(["compare", str(base), str(cur), "--json"])
    assert set(JSON_PAYLOADS) <= _json_ids(_inert_json(capsys.readouterr().out))

    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"session_id": i, "label": "pass"}) + "\n" for i in ["##[x]only"]),
        encoding="utf-8",
    )
    main(["validate", str(cur), "--labels", str(labels), "--bootstrap", "0", "--json"])
    _inert_json(capsys.readouterr().out)

    flip = [{"verdict": v, "ratios": {"relevance": 0.8, "utilization": 0.6, "grounding": 0.9},
             "scores": {"effectiveness": 3, "fluff": 2, "structure": 3}}
            for v in ("pass", "fail", "pass")]  # fmt: skip
    repeats = {"k": 3, "aggregation": "majority", "samples": flip}
    rep = write_results(
        tmp_path / "r.jsonl", [make_result(p, "pass", repeats=repeats) for p in JSON_PAYLOADS]
    )
    assert main(["stability", str(rep), "--bootstrap", "0", "--json"]) == 0
    assert set(JSON_PAYLOADS) <= _json_ids(_inert_json(capsys.readouterr().out))


def test_tasks_json_is_inert_and_keeps_every_task_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.chdir(REPO)  # the agent spec is resolved from the working directory
    monkeypatch.setattr(sys, "path", list(sys.path))
    fixture = REPO / "fixtures" / "tasks" / "tasks.jsonl"
    tasks = [json.loads(line) for line in fixture.read_text(encoding="utf-8").splitlines()]
    ids = (JSON_PAYLOADS * len(tasks))[: len(tasks)]
    ids = [f"{i}-{n}" for n, i in enumerate(ids)]
    for task, task_id in zip(tasks, ids, strict=True):
        task["id"] = task_id
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    main(["tasks", "run", str(path), "--agent", "fixtures.tasks.agents:v1", "--json"])
    assert set(ids) <= _json_ids(_inert_json(capsys.readouterr().out))


@pytest.mark.parametrize("payload", PAYLOADS)
def test_suggestions_on_stdout_refuse_a_hostile_row_and_a_file_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], payload: str
) -> None:
    # A CSV cell cannot be escaped without changing the id a labeller copies back: a row a CI
    # runner would read as a command is refused on stdout; the same rows go to a file unchanged.
    ids = [payload, "plain-1", "plain-2"]
    verdicts = [make_result(i, "pass" if n % 2 else "fail") for n, i in enumerate(ids)]
    results = write_results(tmp_path / "r.jsonl", verdicts)
    labels = tmp_path / "labels.csv"
    labels.write_text("session_id,label\nplain-1,pass\n", encoding="utf-8")
    base = ["validate", str(results), "--labels", str(labels), "--suggest", "5"]
    assert main([*base, "--suggest-out", "-"]) == 2
    out, err = capsys.readouterr()
    assert commands(out) == [] and commands(err) == []
    assert "--suggest-out FILE" in err
    target = tmp_path / "next.csv"
    assert main([*base, "--suggest-out", str(target)]) == 0
    capsys.readouterr()
    assert target.exists()


def test_suggestions_of_plain_ids_still_go_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verdicts = [make_result(i, "pass" if n % 2 else "fail") for n, i in enumerate(["a", "b", "c"])]
    results = write_results(tmp_path / "r.jsonl", verdicts)
    labels = tmp_path / "labels.csv"
    labels.write_text("session_id,label\na,pass\n", encoding="utf-8")
    code = main(["validate", str(results), "--labels", str(labels), "--suggest", "5",
                 "--suggest-out", "-"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0 and out.splitlines()[0].startswith("session_id,")
