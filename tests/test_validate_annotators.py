"""Several annotators: the majority label is compared with the judge (ties left out and
counted), the annotators' agreement with each other is reported with intervals, and the
headline puts the two side by side."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from research_judge.cli import main
from research_judge.errors import InputFileError
from research_judge.results.model import Result
from research_judge.validate import read_labels, render_text, validate_run
from research_judge.validate.annotators import krippendorff_alpha


def result(sid: str, verdict: str) -> Result:
    return Result.model_validate(
        {"session_id": sid, "verdict": verdict, "answer_stats": {"words": 100, "chars": 600}}
    )


def write_results(path: Path, results: list[Result]) -> Path:
    path.write_text("".join(r.model_dump_json() + "\n" for r in results), encoding="utf-8")
    return path


def two_annotators(n: int = 40, seed: int = 3) -> tuple[list[Result], list[tuple[str, str, str]]]:
    """Results and (session, annotator, label) rows: ann and bo label every session and agree
    about 85% of the time; the judge follows ann about 80% of the time."""
    rng = np.random.default_rng(seed)
    results, rows = [], []
    for i in range(n):
        sid = f"s-{i:03d}"
        truth = "pass" if rng.random() < 0.6 else "fail"
        other = "fail" if truth == "pass" else "pass"
        bo = truth if rng.random() < 0.85 else other
        judge = truth if rng.random() < 0.8 else other
        results.append(result(sid, judge))
        rows += [(sid, "ann", truth), (sid, "bo", bo)]
    return results, rows


def csv_text(rows: list[tuple[str, str, str]]) -> str:
    lines = ["session_id,label,annotator,labelled_at,note"]
    lines += [f"{sid},{label},{who},2026-12-04T10:00:00Z," for sid, who, label in rows]
    return "\n".join(lines) + "\n"


def test_two_annotators_give_the_human_ceiling_beside_the_judge(tmp_path: Path) -> None:
    results, rows = two_annotators()
    path = tmp_path / "labels.csv"
    path.write_text(csv_text(rows), encoding="utf-8")
    labels = read_labels(path)
    report = validate_run(results, labels, seed=0, n_boot=2000)
    ann = [label for _, who, label in rows if who == "ann"]
    bo = [label for _, who, label in rows if who == "bo"]
    humans = report.human_agreement
    assert humans is not None and humans.statistic == "cohen_kappa"
    assert humans.n_overlap == 40
    assert humans.value == pytest.approx(cohen_kappa_score(ann, bo), rel=1e-12)
    assert humans.ci is not None and humans.ci[0] < humans.value < humans.ci[1]
    # Majority of two: agreeing sessions only; the split ones are ties, left out and counted.
    split = [sid for (sid, _, a), (_, _, b) in zip(rows[::2], rows[1::2], strict=True) if a != b]
    assert split and sorted(labels.ties) == sorted(split)
    assert report.n == 40 - len(split)
    assert report.excluded.annotator_tie.count == len(split)
    assert report.excluded.no_label.count == 0  # a tied session is labelled, just not decided
    k = report.pass_fail.cohen_kappa
    assert k is not None and report.pass_fail.cohen_kappa_ci is not None
    lo, hi = report.pass_fail.cohen_kappa_ci
    expected = (
        f"Human ceiling: the judge agrees with your annotators at kappa {k:.2f} [{lo:.2f}, "
        f"{hi:.2f}] (majority label, n = {report.n}); they agree with each other at "
        f"{humans.value:.2f} [{humans.ci[0]:.2f}, {humans.ci[1]:.2f}], n = 40 labelled twice"
    )
    assert expected in report.headline
    data = report.to_dict()
    assert data["human_ceiling"] in data["headline"]
    assert data["human_agreement"]["pairs"][0]["annotators"] == ["ann", "bo"]
    assert data["excluded"]["annotator_tie"]["count"] == len(split)
    text = render_text(report)
    assert "Human agreement (2 annotators; 40 sessions labelled by two or more" in text
    assert f"ann vs bo: Cohen's kappa {humans.value:.2f}" in text
    json.dumps(data, allow_nan=False)


def test_three_annotators_use_krippendorffs_alpha_on_uneven_overlap(tmp_path: Path) -> None:
    results, rows = two_annotators(n=30, seed=5)
    rng = np.random.default_rng(9)
    # A third annotator labels only every other session, sometimes against the others.
    for sid, who, label in list(rows):
        if who == "ann" and int(sid[2:]) % 2 == 0:
            flip = rng.random() < 0.2
            rows.append((sid, "cy", ("fail" if label == "pass" else "pass") if flip else label))
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "".join(
            json.dumps({"session_id": s, "label": lab, "annotator": w}) + "\n" for s, w, lab in rows
        ),
        encoding="utf-8",
    )
    report = validate_run(results, read_labels(path), seed=0, n_boot=1000)
    humans = report.human_agreement
    assert humans is not None and humans.statistic == "krippendorff_alpha"
    sessions = [f"s-{i:03d}" for i in range(30)]
    given = {(s, w): lab for s, w, lab in rows}
    data = [
        [np.nan if (s, w) not in given else float(given[(s, w)] == "pass") for s in sessions]
        for w in ("ann", "bo", "cy")
    ]
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert humans.value == pytest.approx(ref, rel=1e-12)
    assert humans.ci is not None and humans.ci[0] < humans.value < humans.ci[1]
    assert [(p.first, p.second) for p in humans.pairs] == [
        ("ann", "bo"),
        ("ann", "cy"),
        ("bo", "cy"),
    ]
    assert {p.n for p in humans.pairs} == {30, 15}
    # Majority of three where cy labelled: 2-1 decides, no tie there.
    assert "Krippendorff's alpha" in report.headline
    assert "labelled by two or more of 3 annotators" in report.headline


@pytest.mark.parametrize("seed", range(20))
def test_alpha_matches_the_krippendorff_package(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = rng.integers(2, 6, size=int(rng.integers(5, 60)))
    passes = rng.binomial(m, rng.uniform(0.2, 0.8))
    counts = np.column_stack([passes, m - passes])
    if counts[:, 0].sum() == 0 or counts[:, 1].sum() == 0:
        counts[0] = [1, m[0] - 1]
    raters = int(m.max())
    data = np.full((raters, counts.shape[0]), np.nan)
    for u, (p, f) in enumerate(counts):
        data[: p + f, u] = [1.0] * p + [0.0] * f
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert krippendorff_alpha(counts) == pytest.approx(ref, rel=1e-10, abs=1e-12)


def test_several_files_are_several_annotators(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, rows = two_annotators()
    rpath = write_results(tmp_path / "results.jsonl", results)
    for who in ("ann", "bo"):
        lines = ["session_id,label"] + [f"{s},{lab}" for s, w, lab in rows if w == who]
        (tmp_path / f"{who}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["validate", str(rpath), "--labels", str(tmp_path / "ann.csv"),
            "--labels", str(tmp_path / "bo.csv"), "--json", "--bootstrap", "500"]  # fmt: skip
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["human_agreement"]["annotators"] == ["ann", "bo"]
    assert data["human_agreement"]["n_overlap"] == 40
    assert "they agree with each other at" in data["headline"]


def test_one_annotator_per_file_without_overlap_has_no_ceiling(tmp_path: Path) -> None:
    results, rows = two_annotators(n=10)
    path = tmp_path / "labels.csv"
    path.write_text(csv_text([r for r in rows if r[1] == "ann"]), encoding="utf-8")
    report = validate_run(results, read_labels(path), seed=0, n_boot=0)
    assert report.human_agreement is None and report.human_ceiling is None
    assert report.n == 10


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("session_id,label,annotator\na,pass,x\na,fail,x\n",
         "labelled twice by annotator 'x' (first on line 2)", 3),
        ("session_id,label,annotator\na,pass,x\nb,fail,\n", "annotator must be a name", 3),
    ],
)  # fmt: skip
def test_bad_annotator_rows_name_the_line(
    tmp_path: Path, text: str, message: str, line: int
) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFileError) as err:
        read_labels(path)
    assert message in str(err.value) and f":{line}" in str(err.value)


def test_jsonl_mixing_annotated_and_bare_lines_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"session_id": "a", "label": "pass", "annotator": "x"}\n'
        '{"session_id": "b", "label": "pass"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputFileError, match="annotator is missing"):
        read_labels(path)


def test_the_same_annotator_in_two_files_is_an_error(tmp_path: Path) -> None:
    for name in ("one", "two"):
        (tmp_path / f"{name}.csv").write_text(
            "session_id,label,annotator\na,pass,x\n", encoding="utf-8"
        )
    with pytest.raises(InputFileError, match="labelled twice by annotator 'x'"):
        read_labels([tmp_path / "one.csv", tmp_path / "two.csv"])


def test_a_neutralised_cell_is_read_as_written(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("session_id,label,annotator\n'-s1,pass,'=ann\n", encoding="utf-8")
    labels = read_labels(path)
    assert list(labels.items) == ["-s1"]
    assert list(labels.annotations["-s1"]) == ["=ann"]


def test_majority_of_three_and_median_scores(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(
        "session_id,label,annotator,effectiveness\n"
        "a,pass,x,3\na,fail,y,1\na,pass,z,2\n"
        "b,fail,x,1\nb,pass,y,2\n",
        encoding="utf-8",
    )
    labels = read_labels(path)
    assert labels.items["a"].label == "pass" and labels.items["a"].scores == {"effectiveness": 2}
    assert labels.ties == ("b",)
    assert labels.n_labelled == 2
