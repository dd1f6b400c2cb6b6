"""The config file: one table per verb, keys named like the long flags, flags win, and every
mistake is an error naming the file, the table and the key (exit 2)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from research_judge.cli import build_parser, main
from research_judge.cli.config import _options, _verb_parsers
from research_judge.results.model import read_results
from results_support import make_result, write_results

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def runs(folder: Path) -> tuple[str, str]:
    """Two runs: structure one step lower on 3 of 10 sessions, no verdict flips (a 0.15 drop,
    flagged at the 0.05 default, within noise: it fails only with --fail-on any)."""

    def run(name: str, lowered: int) -> str:
        results = [make_result(f"s{i}", scores=(3, 2, 2 if i < lowered else 3)) for i in range(10)]
        return str(write_results(folder / name, results))

    return run("b.jsonl", 0), run("c.jsonl", 3)


def test_research_judge_toml_in_the_working_directory_sets_flags(workdir: Path) -> None:
    base, cur = runs(workdir)
    assert main(["compare", base, cur, "--fail-on", "any"]) == 1
    (workdir / "research-judge.toml").write_text("[compare]\nthreshold = 0.5\n")
    assert main(["compare", base, cur, "--fail-on", "any"]) == 0


def test_a_flag_on_the_command_line_beats_the_file(workdir: Path) -> None:
    base, cur = runs(workdir)
    (workdir / "research-judge.toml").write_text("[compare]\nthreshold = 0.5\n")
    assert main(["compare", base, cur, "--threshold", "0.05", "--fail-on", "any"]) == 1


def test_pyproject_tool_table_is_read(workdir: Path) -> None:
    base, cur = runs(workdir)
    (workdir / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.research-judge.compare]\nfail-on = "any"\n'
    )
    assert main(["compare", base, cur]) == 1  # by default the drop within noise only warns


def test_an_explicit_config_beats_the_discovered_one(workdir: Path) -> None:
    base, cur = runs(workdir)
    (workdir / "research-judge.toml").write_text("[compare]\nthreshold = 0.5\n")
    strict = workdir / "strict.toml"
    strict.write_text('[compare]\nthreshold = 0.01\nfail-on = "any"\n')
    assert main(["compare", base, cur, "--config", str(strict)]) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[compare]\ntreshold = 0.5\n",
            "[compare]: unknown key 'treshold'; did you mean 'threshold'?",
        ),
        ("[judge]\nmodel = 'x'\n", "unknown table [judge]"),
        ("model = 'x'\n", "'model' is outside any table"),
        ("[compare]\nthreshold = 'high'\n", "[compare]: threshold: invalid value for --threshold"),
        (
            "[compare]\nfail-on = 'some'\n",
            "[compare]: fail-on: 'some' is not one of any, significant",
        ),
        ("[compare]\njson = 'yes'\n", "[compare]: json: expected true or false (the flag --json)"),
        (
            "[grade]\nwhere = 'lang=en'\n",
            "[grade]: where: expected a list (repeatable flag --where)",
        ),
        ("[grade]\nmax-cost = [1]\n", "[grade]: max-cost: expected a value for --max-cost"),
        ("[compare\n", "not valid TOML"),
        # A mistake in another verb's table is caught too, whatever verb runs.
        ("[report]\nworstt = 3\n", "[report]: unknown key 'worstt'; did you mean 'worst'?"),
    ],
)
def test_config_mistakes_are_exit_2_naming_file_table_and_key(
    workdir: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    base, cur = runs(workdir)
    (workdir / "research-judge.toml").write_text(text)
    assert main(["compare", base, cur]) == 2
    err = capsys.readouterr().err
    assert str(workdir / "research-judge.toml") in err
    assert expected in err


def test_pyproject_mistakes_name_the_tool_table(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cur = runs(workdir)
    (workdir / "pyproject.toml").write_text("[tool.research-judge.compare]\nbogus = 1\n")
    assert main(["compare", base, cur]) == 2
    assert "[tool.research-judge.compare]: unknown key 'bogus'" in capsys.readouterr().err


def test_help_still_works_with_a_broken_config(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "research-judge.toml").write_text("[nonsense]\n")
    with pytest.raises(SystemExit) as info:
        main(["compare", "--help"])
    assert info.value.code == 0


def test_grade_from_the_config_required_flags_lists_and_the_policy(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "research-judge.toml").write_text(
        "[grade]\n"
        'provider = "scripted"\n'
        'model = "authored-lenient-judge"\n'
        'out = "results.jsonl"\n'
        "quiet = true\n"
        "json = true\n"
        "\n[policy]\n"
        "min_effectiveness = 3\n"
    )
    # --replay says where data comes from: not from a file found in the working directory.
    replay = ["--replay", str(FIXTURES / "recordings")]
    code = main(["grade", str(FIXTURES / "sessions.jsonl"), *replay])
    summary = json.loads(capsys.readouterr().out)
    results = read_results(workdir / "results.jsonl")
    assert len(results) == summary["sessions"] == 20
    # The policy table of the discovered file is applied: effectiveness 2 fails now.
    low = [r for r in results if r.scores and r.scores["effectiveness"].score < 3]
    assert low and all(r.verdict == "fail" for r in low)
    assert code == 0


def test_a_repeatable_flag_on_the_command_line_replaces_the_files_list(workdir: Path) -> None:
    sessions = workdir / "s.jsonl"
    lines = [json.loads(x) for x in (FIXTURES / "sessions.jsonl").read_text().splitlines()[:2]]
    lines[0]["metadata"] = {"lang": "en"}
    lines[1]["metadata"] = {"lang": "de"}
    sessions.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (workdir / "research-judge.toml").write_text(
        '[grade]\nprovider = "scripted"\nmodel = "authored-lenient-judge"\nquiet = true\n'
        'where = ["lang=en"]\n'
    )
    replay = ["--replay", str(FIXTURES / "recordings")]
    main(["grade", str(sessions), "--out", "en.jsonl", *replay])
    main(["grade", str(sessions), "--out", "de.jsonl", "--where", "lang=de", *replay])
    assert [r.session_id for r in read_results(workdir / "en.jsonl")] == [lines[0]["id"]]
    assert [r.session_id for r in read_results(workdir / "de.jsonl")] == [lines[1]["id"]]


def test_every_long_flag_of_every_verb_is_a_config_key() -> None:
    verbs = _verb_parsers(build_parser())
    assert sorted(verbs) == [
        "compare",
        "convert",
        "demo",
        "export",
        "grade",
        "label",
        "merge",
        "report",
        "serve-fake",
        "stability",
        "tasks",
        "validate",
    ]
    for name, parser in verbs.items():
        keys = set(_options(parser))
        flags = {
            o[2:]
            for a in parser._actions
            for o in a.option_strings
            if (o.startswith("--") and not o.startswith("--no-")) or o == "--no-cache"
        }
        assert keys == flags - {"help", "config"}, name


def test_a_flag_added_to_a_verb_is_configurable_without_more_code(workdir: Path) -> None:
    from research_judge.cli.config import Config, apply_config

    parser = build_parser()
    verbs = _verb_parsers(parser)
    verbs["compare"].add_argument("--brand-new", type=int)
    config = Config(workdir / "research-judge.toml", {"compare": {"brand-new": 7}})
    apply_config(parser, ["compare", "a", "b"], config)
    args = parser.parse_args(["compare", "a", "b"])
    assert isinstance(args, argparse.Namespace) and args.brand_new == 7


def test_the_tasks_table_configures_tasks_run(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    monkeypatch.setattr(sys, "path", list(sys.path))
    (workdir / "research-judge.toml").write_text(
        f'[tasks]\napp-dir = "{REPO}"\nagent = "fixtures.tasks.agents:v1"\njson = true\n'
        "task-timeout = 30\n"
    )
    assert main(["tasks", "run", str(FIXTURES / "tasks" / "tasks.jsonl")]) == 1  # 4 tasks fail
    assert json.loads(capsys.readouterr().out)["n"] == 8


def test_every_verb_takes_config() -> None:
    for name, parser in _verb_parsers(build_parser()).items():
        flags = {o for a in parser._actions for o in a.option_strings}
        assert "--config" in flags, name


def test_the_docs_list_every_config_table() -> None:
    text = " ".join((REPO / "docs" / "ci.md").read_text(encoding="utf-8").split())
    [listed] = [line for line in text.split("- ") if line.startswith("Tables:")]
    tables = set(re.findall(r"`\[([a-z-]+)\]`", listed))
    verbs = set(_verb_parsers(build_parser()))
    assert tables == verbs | {"policy"}
