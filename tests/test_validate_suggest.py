"""`validate --suggest N`: which unlabelled sessions to label next, as a CSV to fill in."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from research_judge.cli import main
from research_judge.judge.policy import VerdictPolicy
from research_judge.validate.labels import HumanLabel, Labels, read_labels
from research_judge.validate.suggest import margin, suggest, to_csv
from results_support import make_result, write_results


def test_margin_is_the_distance_from_flipping_on_the_0_to_1_scale() -> None:
    policy = VerdictPolicy()  # effectiveness >= 2, fluff >= 2, structure >= 1, grounding >= 0.8
    # Pass: effectiveness (3-2)/2 = 0.5, fluff 0.5, structure 1.0, grounding 0.9 - 0.8 = 0.1.
    assert margin(make_result("a", "pass", ratios=(1, 1, 0.9), scores=(3, 3, 3)), policy) == (
        pytest.approx(0.1)
    )
    # Pass exactly on the effectiveness floor.
    assert margin(make_result("b", "pass", ratios=(1, 1, 1), scores=(2, 3, 3)), policy) == 0.0
    # Fail: effectiveness 1 is 0.5 short, grounding 0.7 is 0.1 short: 0.5 from passing.
    assert margin(make_result("c", "fail", ratios=(1, 1, 0.7), scores=(1, 3, 3)), policy) == (
        pytest.approx(0.5)
    )
    # Fail only on grounding 0.75: 0.05 from passing.
    assert margin(make_result("d", "fail", ratios=(1, 1, 0.75), scores=(3, 3, 3)), policy) == (
        pytest.approx(0.05)
    )


def run() -> tuple[list, Labels]:
    results = [
        make_result("p-far", "pass", ratios=(1, 1, 1.0), scores=(3, 3, 3)),  # margin 0.2
        make_result("p-near", "pass", ratios=(1, 1, 0.8), scores=(3, 3, 3)),  # margin 0.0
        make_result("p-mid", "pass", ratios=(1, 1, 0.9), scores=(3, 3, 3)),  # margin 0.1
        make_result("f-far", "fail", ratios=(1, 1, 0.2), scores=(1, 1, 3)),  # 0.6 short
        make_result("f-near", "fail", ratios=(1, 1, 0.79), scores=(3, 3, 3)),  # 0.01 short
        make_result("labelled", "fail", ratios=(1, 1, 0.79), scores=(3, 3, 3)),
        make_result("broken", error="judge failed"),
    ]
    labels = Labels("l.csv", {"labelled": HumanLabel("labelled", "fail")})
    return results, labels


def test_strata_alternate_nearest_first_and_skip_labelled_and_errored() -> None:
    results, labels = run()
    picked = [s.session_id for s in suggest(results, labels, 4)]
    assert picked == ["f-near", "p-near", "f-far", "p-mid"]
    everything = [s.session_id for s in suggest(results, labels, 50)]
    assert everything == ["f-near", "p-near", "f-far", "p-mid", "p-far"]  # passes fill the rest


def test_csv_is_a_labels_file_once_the_label_column_is_filled(tmp_path: Path) -> None:
    results, labels = run()
    results.append(make_result("=HYPERLINK()", "pass", question="=1+1 what?"))
    text = to_csv(suggest(results, labels, 10))
    rows = list(csv.DictReader(text.splitlines()))
    assert rows[0]["session_id"] == "f-near" and rows[0]["label"] == ""
    assert rows[0]["judge_verdict"] == "fail" and rows[0]["margin"] == "0.0100"
    assert rows[0]["rank"] == "1"
    formula = next(r for r in rows if r["question"].startswith("'="))
    assert formula["session_id"] == "'=HYPERLINK()"  # spreadsheets do not run it
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows[:3]:
            writer.writerow({**row, "label": "pass", "fluff": "2"})
    back = read_labels(filled)
    assert list(back.items) == ["f-near", "p-near", "f-far"]


def test_cli_writes_the_csv_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, _ = run()
    rpath = write_results(tmp_path / "r.jsonl", results)
    lpath = tmp_path / "labels.csv"
    lpath.write_text("session_id,label\nlabelled,fail\n", encoding="utf-8")
    out = tmp_path / "next.csv"
    args = ["validate", str(rpath), "--labels", str(lpath), "--bootstrap", "0"]
    main([*args, "--suggest", "3", "--suggest-out", str(out)])
    assert "wrote 3 sessions to label" in capsys.readouterr().err
    # No human pass is labelled yet, so that interval is the weakest: judge passes lead.
    assert [r["session_id"] for r in csv.DictReader(out.open())] == ["p-near", "f-near", "p-mid"]
    out.write_text("my labels\n", encoding="utf-8")
    assert main([*args, "--suggest", "3", "--suggest-out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "my labels\n"
    assert main([*args, "--suggest", "0"]) == 2


def test_suggest_and_stability_measure_margins_against_the_config_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Graded with [policy] min_grounding = 0.9: grounding 0.85 failed, 0.95 passed. Against
    # that floor the fail is 0.05 short and the pass 0.05 clear. Measured against the default
    # floor of 0.8 instead, the fail would look 0 from passing: on the threshold, which it
    # never was under the policy that judged it.
    config = tmp_path / "research-judge.toml"
    config.write_text("[policy]\nmin_grounding = 0.9\n", encoding="utf-8")
    results = write_results(
        tmp_path / "r.jsonl",
        [
            make_result("labelled", "pass", ratios=(1, 1, 1.0), scores=(3, 3, 3)),
            make_result("f-085", "fail", ratios=(1, 1, 0.85), scores=(3, 3, 3)),
            make_result("p-095", "pass", ratios=(1, 1, 0.95), scores=(3, 3, 3)),
        ],
    )
    labels = tmp_path / "labels.csv"
    labels.write_text("session_id,label\nlabelled,pass\n", encoding="utf-8")
    out = tmp_path / "next.csv"
    args = ["validate", str(results), "--labels", str(labels), "--bootstrap", "0"]
    main([*args, "--suggest", "2", "--suggest-out", str(out), "--config", str(config)])
    with out.open(encoding="utf-8") as handle:
        rows = {row["session_id"]: row for row in csv.DictReader(handle)}
    assert rows["f-085"]["margin"] == "0.0500"
    assert rows["p-095"]["margin"] == "0.0500"

    from research_judge.results.model import Result

    data = make_result("w", "fail", ratios=(1, 1, 0.85), scores=(3, 3, 3)).model_dump()
    data["repeats"] = {
        "k": 3,
        "aggregation": "test",
        "samples": [{"verdict": v} for v in ("fail", "pass", "fail")],
    }
    repeated = write_results(tmp_path / "k3.jsonl", [Result.model_validate(data)])
    capsys.readouterr()
    main(["stability", str(repeated), "--json", "--bootstrap", "0", "--config", str(config)])
    detail = json.loads(capsys.readouterr().out)["unstable_detail"]
    assert detail[0]["margin"] == pytest.approx(0.05)
    # The report's stability section reads the same policy.
    md = tmp_path / "report.md"
    assert main(["report", str(repeated), "--md", str(md), "--config", str(config)]) == 0
    assert "w: 1 pass / 2 fail, margin 0.050" in md.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("human_passes", "human_fails", "first"),
    [(3, 30, "pass"), (30, 3, "fail"), (20, 19, "fail")],
)
def test_the_verdict_holding_the_weaker_class_leads(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    human_passes: int,
    human_fails: int,
    first: str,
) -> None:
    # Wilson widths by hand: 3 of 3 agreed gives [0.44, 1] (width 0.56), 30 of 30 gives
    # [0.89, 1] (0.11). The class with 3 labels is the weaker; its judge verdict leads, so an
    # odd N gives it the extra label. With equal classes (19 + run()'s one labelled fail = 20),
    # fails lead (the usual weak side).
    labelled = [make_result(f"hp{i}", "pass") for i in range(human_passes)] + [
        make_result(f"hf{i}", "fail") for i in range(human_fails)
    ]
    rows = ["session_id,label"]
    rows += [f"hp{i},pass" for i in range(human_passes)]
    rows += [f"hf{i},fail" for i in range(human_fails)]
    results, _ = run()
    rpath = write_results(tmp_path / "r.jsonl", [*labelled, *results])
    lpath = tmp_path / "labels.csv"
    lpath.write_text("\n".join([*rows, "labelled,fail"]) + "\n", encoding="utf-8")
    out = tmp_path / "next.csv"
    args = ["validate", str(rpath), "--labels", str(lpath), "--bootstrap", "0"]
    main([*args, "--suggest", "3", "--suggest-out", str(out)])
    plural = {"pass": "passes", "fail": "fails"}[first]
    assert f"judge {plural} leading (agreement on human {plural}" in capsys.readouterr().err
    verdicts = [r["judge_verdict"] for r in csv.DictReader(out.open())]
    other = "fail" if first == "pass" else "pass"
    assert verdicts == [first, other, first]
