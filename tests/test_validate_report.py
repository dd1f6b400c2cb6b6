"""validate_run end to end on Result objects: joining, exclusions, JSON safety, guidance, text."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from research_judge.errors import ConfigError
from research_judge.results.model import Result
from research_judge.validate import HumanLabel, Labels, render_text, validate_run
from research_judge.validate.dataset import MAX_IDS_LISTED
from results_support import VALIDATE_CONTRACT_KEYS


def result(sid: str, verdict: str | None, words: int = 100, **scores: int) -> Result:
    return Result.model_validate(
        {
            "session_id": sid,
            "verdict": verdict,
            "error": None if verdict else "judge reply invalid after 3 attempts",
            "scores": {k: {"score": v} for k, v in scores.items()} or None,
            "answer_stats": {"words": words, "chars": 6 * words},
        }
    )


def from_table(
    a: int, b: int, c: int, d: int, seed: int = 0
) -> tuple[list[Result], dict[str, HumanLabel]]:
    rng = np.random.default_rng(seed)
    cells = [("pass", "pass", a), ("pass", "fail", b), ("fail", "pass", c), ("fail", "fail", d)]
    results, labels = [], {}
    for human, judge, count in cells:
        for _ in range(count):
            sid = f"s-{len(results):04d}"
            results.append(result(sid, judge, int(rng.integers(80, 900))))
            labels[sid] = HumanLabel(sid, human)  # type: ignore[arg-type]
    return results, labels


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report, allow_nan=False)  # raises on NaN or infinity


def test_lenient_run_has_the_contract_keys_and_figures() -> None:
    results, labels = from_table(66, 2, 16, 16)
    report = validate_run(results, Labels("l.csv", labels), n_boot=2000).to_dict()
    assert report.keys() >= VALIDATE_CONTRACT_KEYS
    assert report["n"] == 100
    assert report["confusion"] == {
        "human_pass": {"judge_pass": 66, "judge_fail": 2},
        "human_fail": {"judge_pass": 16, "judge_fail": 16},
    }
    assert report["cohen_kappa"] == pytest.approx(0.532, abs=5e-4)
    assert isinstance(report["cohen_kappa_ci"], list) and len(report["cohen_kappa_ci"]) == 2
    assert report["mcnemar"]["direction"] == "lenient"
    assert report["headline"].startswith("do not trust this judge to catch failures: it agrees")
    assert "Lean: lenient:" in report["headline"]
    assert report["guidance"]["labels_needed_for_kappa"] == 323  # 100 * (1.96 * 0.0917 / 0.1)^2
    # p = 0.5: the Wilson interval the report shows is within +/-0.10 from 93 items (92 is not);
    # the Wald shortcut 1.96^2 / 4 / 0.01 would say 97.
    assert report["guidance"]["human_fails_needed_for_rate"] == 93
    assert not any("fewer than 30" in w for w in report["warnings"])  # 32 fails, 68 passes
    dumps(report)


def test_small_human_class_is_warned_about() -> None:
    results, labels = from_table(60, 4, 6, 6)
    report = validate_run(results, Labels("l.csv", labels), n_boot=0).to_dict()
    assert any(
        w.startswith("only 12 human fails labelled (fewer than 30)") for w in report["warnings"]
    )
    assert not any("human passes labelled (fewer" in w for w in report["warnings"])
    assert report["guidance"]["have"] == {"labels": 76, "human_passes": 64, "human_fails": 12}


def test_exclusions_are_counted_and_never_graded_as_pass_or_fail() -> None:
    results, labels = from_table(10, 2, 3, 10)
    results += [result("err-1", None), result("err-2", None), result("unlabelled", "pass")]
    labels["err-1"] = HumanLabel("err-1", "fail")
    labels["err-2"] = HumanLabel("err-2", "pass")
    labels["ghost"] = HumanLabel("ghost", "pass")
    report = validate_run(results, Labels("l.csv", labels), n_boot=200).to_dict()
    assert report["n"] == 25
    excluded = report["excluded"]
    assert excluded["judge_error"]["count"] == 2
    assert excluded["judge_error"]["ids"] == ["err-1", "err-2"]
    assert excluded["no_label"]["ids"] == ["unlabelled"]
    assert excluded["unknown_session"]["ids"] == ["ghost"]
    total = sum(sum(row.values()) for row in report["confusion"].values())
    assert total == 25
    assert report["n_labels"] == 25 + 2 + 1 and report["n_results"] == 25 + 2 + 1
    assert any("judge recorded an error" in w for w in report["warnings"])


def test_long_id_lists_are_capped() -> None:
    results, labels = from_table(10, 2, 3, 10)
    for i in range(MAX_IDS_LISTED + 5):
        labels[f"ghost-{i}"] = HumanLabel(f"ghost-{i}", "pass")
    unknown = validate_run(results, Labels("l", labels), n_boot=0).to_dict()["excluded"][
        "unknown_session"
    ]
    assert unknown["count"] == MAX_IDS_LISTED + 5
    assert len(unknown["ids"]) == MAX_IDS_LISTED and unknown["ids_truncated"] is True


SAME_LABEL = "judge and humans both gave every session the same label"


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        ((12, 0, 0, 0), SAME_LABEL),
        ((9, 3, 0, 0), "humans used a single label"),
        ((0, 0, 0, 8), SAME_LABEL),
        ((7, 0, 5, 0), "judge used a single label"),
        ((0, 4, 0, 3), "judge used a single label"),
        ((0, 5, 0, 0), "humans and judge used a single label"),
        ((0, 0, 0, 0), "nothing to compare"),
    ],
    ids=[
        "both-all-pass",
        "humans-all-pass",
        "both-all-fail",
        "judge-always-pass",
        "judge-always-fail",
        "humans-pass-judge-fails",
        "empty",
    ],
)
def test_single_class_inputs_give_none_and_warnings_never_nan(
    table: tuple[int, int, int, int], reason: str
) -> None:
    results, labels = from_table(*table)
    report_obj = validate_run(results, Labels("l.csv", labels), n_boot=300)
    report = report_obj.to_dict()
    dumps(report)
    assert report["warnings"]
    assert report["cohen_kappa_ci"] is None
    assert report["cohen_kappa"] is None  # contract: null when one side uses a single label
    if sum(table):
        assert any("cohen_kappa undefined" in w for w in report["warnings"])
    if table[2] + table[3] == 0:
        assert report["agreement_on_human_fail"] is None
    # The text says what docs/validate.md says: undefined, and why, with no label count for it.
    text = render_text(report_obj)
    assert f"Cohen's kappa: undefined ({reason}; see warnings)" in text
    assert f"kappa is undefined ({reason}): no label count can be given for it" in text
    assert report["guidance"]["labels_needed_for_kappa"] is None


def test_per_criterion_agreement_uses_only_scored_criteria() -> None:
    results = [
        result("a", "pass", effectiveness=3, fluff=2, structure=3),
        result("b", "fail", effectiveness=1, fluff=1, structure=2),
        result("c", "pass", effectiveness=2, fluff=3, structure=3),
        result("d", "fail", effectiveness=1, fluff=2, structure=1),
    ]
    labels = {
        "a": HumanLabel("a", "pass", {"effectiveness": 3}),
        "b": HumanLabel("b", "fail", {"effectiveness": 2}),
        "c": HumanLabel("c", "fail", {}),
        "d": HumanLabel("d", "fail", {"effectiveness": 1}),
    }
    report = validate_run(results, Labels("l", labels, ("effectiveness",)), n_boot=0).to_dict()
    assert list(report["criteria"]) == ["effectiveness"]
    eff = report["criteria"]["effectiveness"]
    assert eff["n"] == 3
    assert eff["exact_agreement"] == pytest.approx(2 / 3)
    assert eff["mean_shift"] == pytest.approx(-1 / 3)
    assert eff["table"] == [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    dumps(report)


def test_text_report_leads_with_the_headline_and_shows_each_section() -> None:
    results, labels = from_table(66, 2, 16, 16)
    text = render_text(validate_run(results, Labels("l", labels), n_boot=500))
    lines = text.splitlines()
    assert lines[2].startswith("do not trust this judge to catch failures")
    assert "Lean: lenient: agrees on 97% of human passes but 50% of human fails" in lines[2]
    for needle in (
        "human pass",
        "raw agreement",
        "Cohen's kappa: 0.532 (moderate)",
        "Length bias",
        "Sample size",
        "about 323 labels",
        "Left out",
        "Warnings",
    ):
        assert needle in text, needle


def test_negative_bootstrap_count_is_a_config_error() -> None:
    results, labels = from_table(3, 1, 1, 3)
    with pytest.raises(ConfigError):
        validate_run(results, Labels("l", labels), n_boot=-1)
