"""From results and the experts' labels to the benchmark's figures (all plain JSON).

- answer level, per label rule: Cohen's kappa, agreement on the experts' passes and on their
  fails, pass rates and the corrected pass rate, all with 95% intervals (the ``validate`` verb's
  own statistics, through ``research_judge.validate``);
- per claim: the judge's grounded verdicts against the experts' support labels on the claims
  ``align`` matched, with the expert claims the judge missed and the claims it invented counted
  beside them (and once more as disagreements, in ``agreement_counting_unaligned``);
- citation audit: on matched claims the answer cites, the audit's ``correct`` against the
  expert's "the cited evidence supports it";
- per system: the same answer-level figures for each system's answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import research_judge as rj
from research_judge.results.model import Result
from research_judge.validate.agreement import pass_fail_stats
from validity.align import align
from validity.expertqa import Item
from validity.labels import RULES, Rule, answer_label, claim_label

SEED = 20260
RESAMPLES = 2000
_CITED = {"correct", "misattributed", "unsupported", "fabricated"}


def measure(items: Sequence[Item], results: dict[str, Result]) -> dict[str, Any]:
    graded = [i for i in items if i.id in results and results[i.id].ok]
    errors = [i.id for i in items if i.id in results and not results[i.id].ok]
    missing = [i.id for i in items if i.id not in results]
    out: dict[str, Any] = {
        "answers": len(items),
        "graded": len(graded),
        "judge_errors": len(errors),
        "not_in_results": len(missing),
        "answer_level": {rule: _answers(graded, results, rule) for rule in RULES},
        "claims": {rule: _claims(graded, results, rule) for rule in RULES},
        "citations": {rule: _citations(graded, results, rule) for rule in RULES},
        "systems": {},
    }
    for system in sorted({i.system for i in graded}):
        mine = [i for i in graded if i.system == system]
        out["systems"][system] = {
            "answers": len(mine),
            **{rule: _answers(mine, results, rule) for rule in RULES},
            "claims_strict": _claims(mine, results, "strict"),
        }
    return out


def _answers(items: Sequence[Item], results: dict[str, Result], rule: Rule) -> dict[str, Any]:
    labels = {i.id: answer_label(i, rule) for i in items}
    report = rj.validate([results[i.id] for i in items], labels, seed=SEED, n_boot=RESAMPLES)
    s = report.pass_fail
    corrected = report.corrected
    return {
        "n": s.table.n,
        "expert_pass_rate": s.human_pass_rate,
        "judge_pass_rate": s.judge_pass_rate,
        "kappa": s.cohen_kappa,
        "kappa_ci": _pair(s.cohen_kappa_ci),
        "agreement": s.raw_agreement,
        "agreement_ci": _pair(s.raw_agreement_ci),
        "agreement_on_expert_pass": s.agreement_on_human_pass,
        "agreement_on_expert_pass_ci": _pair(s.agreement_on_human_pass_ci),
        "agreement_on_expert_fail": s.agreement_on_human_fail,
        "agreement_on_expert_fail_ci": _pair(s.agreement_on_human_fail_ci),
        "corrected_pass_rate": corrected.value if corrected else None,
        "corrected_pass_rate_ci": _pair(corrected.ci) if corrected else None,
        "table": s.table.to_dict(),
    }


def judge_claims(result: Result) -> list[tuple[str, str, bool]]:
    """The judge's claims of one result: (claim id, claim text, grounded)."""
    return [
        (v.id, v.claim or "", v.answer == "yes") for v in result.verdicts if v.check == "grounded"
    ]


def _claims(items: Sequence[Item], results: dict[str, Result], rule: Rule) -> dict[str, Any]:
    expert_flags: list[bool] = []
    judge_flags: list[bool] = []
    labelled = judge_total = missed = invented = unlabelled_pairs = 0
    for item in items:
        judged = judge_claims(results[item.id])
        judge_total += len(judged)
        expert = [c.text for c in item.claims]
        labels = [claim_label(c, rule) for c in item.claims]
        labelled += sum(label is not None for label in labels)
        found = align([text for _, text, _ in judged], expert)
        missed += sum(labels[k] is not None for k in found.missed)
        invented += len(found.invented)
        for i, k in found.pairs:
            if labels[k] is None:
                unlabelled_pairs += 1
                continue
            expert_flags.append(bool(labels[k]))
            judge_flags.append(judged[i][2])
    stats = _stats(expert_flags, judge_flags)
    agree = sum(e == j for e, j in zip(expert_flags, judge_flags, strict=True))
    both_ways = len(expert_flags) + missed + invented
    return {
        "expert_labelled": labelled,
        "judge_claims": judge_total,
        "aligned_labelled": len(expert_flags),
        "aligned_unlabelled": unlabelled_pairs,
        "judge_missed": missed,
        "judge_invented": invented,
        "agreement_counting_unaligned": agree / both_ways if both_ways else None,
        **stats,
    }


def _citations(items: Sequence[Item], results: dict[str, Result], rule: Rule) -> dict[str, Any]:
    expert_flags: list[bool] = []
    judge_flags: list[bool] = []
    for item in items:
        result = results[item.id]
        if result.citations is None:
            continue
        status = {c.id: c.status for c in result.citations.claims}
        judged = judge_claims(result)
        found = align([text for _, text, _ in judged], [c.text for c in item.claims])
        for i, k in found.pairs:
            label = claim_label(item.claims[k], rule)
            claim_status = status.get(judged[i][0])
            if label is None or claim_status not in _CITED or not item.claims[k].cited:
                continue
            expert_flags.append(label)
            judge_flags.append(claim_status == "correct")
    return _stats(expert_flags, judge_flags)


def _stats(expert: list[bool], judge: list[bool]) -> dict[str, Any]:
    s = pass_fail_stats(
        np.array(expert, dtype=bool), np.array(judge, dtype=bool), seed=SEED, n_boot=RESAMPLES
    )
    return {
        "n": s.table.n,
        "expert_yes_rate": s.human_pass_rate,
        "judge_yes_rate": s.judge_pass_rate,
        "agreement": s.raw_agreement,
        "agreement_ci": _pair(s.raw_agreement_ci),
        "kappa": s.cohen_kappa,
        "kappa_ci": _pair(s.cohen_kappa_ci),
        "agreement_on_expert_yes": s.agreement_on_human_pass,
        "agreement_on_expert_yes_ci": _pair(s.agreement_on_human_pass_ci),
        "agreement_on_expert_no": s.agreement_on_human_fail,
        "agreement_on_expert_no_ci": _pair(s.agreement_on_human_fail_ci),
    }


def _pair(interval: Any) -> list[float] | None:
    return None if interval is None else [float(interval[0]), float(interval[1])]
