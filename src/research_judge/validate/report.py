"""The validation of one results file against one labels file, as one JSON-safe object."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..results.model import Result
from ..results.rows import ResultsRun, as_run
from ..stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from .agreement import PassFailStats, pass_fail_stats
from .annotators import HumanAgreement, ceiling_sentence, human_agreement
from .bars import Bar, evaluate
from .dataset import Exclusions, pair
from .guidance import Guidance, guidance
from .headline import full_headline
from .labels import Labels
from .length_bias import LengthBias, length_bias
from .ordinal import CriterionAgreement, criterion_agreement
from .prevalence import CorrectedPassRate, corrected_pass_rate


@dataclass
class ValidationReport:
    headline: str
    pass_fail: PassFailStats
    criteria: dict[str, CriterionAgreement]
    length_bias: LengthBias
    guidance: Guidance
    excluded: Exclusions
    n_results: int
    n_labels: int
    seed: int
    n_boot: int
    corrected: CorrectedPassRate
    gates: list[Bar] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Set when several annotators labelled some of the same sessions: their agreement with each
    # other, the ceiling the judge's kappa is read against, and that comparison in one sentence.
    human_agreement: HumanAgreement | None = None
    human_ceiling: str | None = None

    @property
    def gates_passed(self) -> bool | None:
        """None when no bar was set; otherwise whether every bar was met."""
        return None if not self.gates else all(g.passed for g in self.gates)

    @property
    def n(self) -> int:
        return self.pass_fail.table.n

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only: floats are finite or None, intervals are [low, high] lists."""
        s = self.pass_fail
        m = s.mcnemar
        out: dict[str, Any] = {
            "headline": self.headline,
            "n": self.n,
            "n_results": self.n_results,
            "n_labels": self.n_labels,
            "confusion": s.table.to_dict(),
            "raw_agreement": s.raw_agreement,
            "raw_agreement_ci": s.raw_agreement_ci,
            "cohen_kappa": s.cohen_kappa,
            "cohen_kappa_ci": s.cohen_kappa_ci,
            "cohen_kappa_ci_method": s.cohen_kappa_ci_method,
            "cohen_kappa_boundary": s.cohen_kappa_boundary,
            "cohen_kappa_ci_bootstrap": s.cohen_kappa_ci_bootstrap,
            "cohen_kappa_ci_analytic": s.cohen_kappa_ci_analytic,
            "cohen_kappa_se": s.cohen_kappa_se,
            "cohen_kappa_band": s.kappa_band,
            "cohen_kappa_ci_low_band": s.kappa_ci_low_band,
            "agreement_on_human_pass": s.agreement_on_human_pass,
            "agreement_on_human_pass_ci": s.agreement_on_human_pass_ci,
            "agreement_on_human_fail": s.agreement_on_human_fail,
            "agreement_on_human_fail_ci": s.agreement_on_human_fail_ci,
            "positive_agreement": s.positive_agreement,
            "positive_agreement_ci": s.positive_agreement_ci,
            "negative_agreement": s.negative_agreement,
            "negative_agreement_ci": s.negative_agreement_ci,
            "judge_pass_rate": s.judge_pass_rate,
            "judge_pass_rate_ci": s.judge_pass_rate_ci,
            "human_pass_rate": s.human_pass_rate,
            "human_pass_rate_ci": s.human_pass_rate_ci,
            "alignment": s.alignment,
            "alignment_ci": s.alignment_ci,
            **self.corrected.to_dict(),
            "gates": {
                "passed": self.gates_passed,
                "bars": [g.to_dict() for g in self.gates],
            },
            "mcnemar": None
            if m is None
            else {
                "judge_pass_human_fail": m.judge_pass_human_fail,
                "judge_fail_human_pass": m.judge_fail_human_pass,
                "p_value": m.p_value,
                "direction": m.direction,
            },
            "criteria": {name: c.to_dict() for name, c in self.criteria.items()},
            "length_bias": self.length_bias.to_dict(),
            "guidance": self.guidance.to_dict(),
            "excluded": self.excluded.to_dict(),
            "human_ceiling": self.human_ceiling,
            "human_agreement": None
            if self.human_agreement is None
            else self.human_agreement.to_dict(),
            "bootstrap": {"resamples": self.n_boot, "seed": self.seed},
            "warnings": list(self.warnings),
        }
        safe: dict[str, Any] = _json_safe(out)
        return safe


def validate_run(
    results: ResultsRun | Sequence[Result],
    labels: Labels,
    *,
    seed: int = BOOTSTRAP_SEED,
    n_boot: int = BOOTSTRAP_RESAMPLES,
    min_kappa: float | None = None,
    min_fail_agreement: float | None = None,
) -> ValidationReport:
    """Compare judge verdicts (and 1-3 scores) with human labels on the sessions both cover.

    ``min_kappa`` / ``min_fail_agreement`` set bars (see ``bars``); the report says which
    failed, and ``gates_passed`` is what ``validate`` turns into its exit status.
    """
    if n_boot < 0:
        raise ConfigError(f"bootstrap resamples must be 0 or more, got {n_boot}")
    rows = as_run(results).rows
    data, excluded = pair(rows, labels)
    stats = pass_fail_stats(data.human_pass, data.judge_pass, seed=seed, n_boot=n_boot)
    criteria = {
        name: criterion_agreement(name, data.human_scores[name], data.judge_scores[name])
        for name in data.label_criteria
    }
    bias = length_bias(data)
    graded = [r for r in rows if r.ok]
    corrected = corrected_pass_rate(
        sum(r.verdict == "pass" for r in graded),
        len(graded),
        stats.table,
        seed=seed,
        n_boot=n_boot,
    )
    gates = evaluate(stats, min_kappa=min_kappa, min_fail_agreement=min_fail_agreement)
    advice = guidance(stats)
    humans = human_agreement(labels.annotations, list(labels.ties), seed=seed, n_boot=n_boot)
    ceiling = None if humans is None else ceiling_sentence(stats, humans)
    warnings = [*_exclusion_warnings(excluded), *stats.warnings]
    if humans is not None:
        warnings.extend(humans.warnings)
    for c in criteria.values():
        warnings.extend(c.warnings)
    warnings.extend(bias.warnings)
    warnings.extend(advice.warnings)
    if corrected.undefined is not None:
        what = "corrected_pass_rate" if corrected.value is None else "corrected_pass_rate_ci"
        warnings.append(f"{what} undefined: {corrected.undefined}")
    headline = full_headline(stats)
    return ValidationReport(
        headline=headline if ceiling is None else f"{headline}. {ceiling}",
        pass_fail=stats,
        criteria=criteria,
        length_bias=bias,
        guidance=advice,
        excluded=excluded,
        n_results=len(rows),
        n_labels=labels.n_labelled,
        seed=seed,
        n_boot=n_boot,
        corrected=corrected,
        gates=gates,
        warnings=warnings,
        human_agreement=humans,
        human_ceiling=ceiling,
    )


def _exclusion_warnings(excluded: Exclusions) -> list[str]:
    out = []
    if excluded.judge_error.count:
        out.append(
            f"{excluded.judge_error.count} labelled session(s) left out: the judge recorded an "
            "error or no verdict (re-grade them to use their labels)"
        )
    if excluded.annotator_tie.count:
        out.append(
            f"{excluded.annotator_tie.count} session(s) left out: their annotators split evenly, "
            "so there is no majority label (a further annotator would settle them)"
        )
    if excluded.unknown_session.count:
        out.append(
            f"{excluded.unknown_session.count} label(s) name sessions not in the results "
            "(wrong file, or sessions not graded yet)"
        )
    return out


def _json_safe(value: Any, problems: list[str] | None = None, where: str = "") -> Any:
    """Tuples to lists, numpy scalars to Python, and never NaN or infinity in the output.

    The statistics already return ``None`` with a warning where they are undefined; this is the
    last line of defence, turning anything non-finite that slipped through into null + warning.
    """
    top = problems is None
    found: list[str] = [] if problems is None else problems
    if isinstance(value, dict):
        out: Any = {
            str(k): _json_safe(v, found, f"{where}.{k}".lstrip(".")) for k, v in value.items()
        }
        if top and found:
            out["warnings"] = [
                *out["warnings"],
                *(f"{p} was not finite: set to null" for p in found),
            ]
        return out
    if isinstance(value, list | tuple):
        return [_json_safe(v, found, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        found.append(where)
        return None
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise TypeError(f"cannot put {type(value).__name__} in a report ({where})")
