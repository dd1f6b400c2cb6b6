"""The judge-vs-human section of a report, read from the typed ``ValidationReport``.

Numbers that are undefined for the data (None, or not finite) are shown as "n/a".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._format import NA, num, pct

if TYPE_CHECKING:
    from ..stats.intervals import Interval
    from ..validate.agreement import McNemar, PassFailStats
    from ..validate.ordinal import CriterionAgreement
    from ..validate.prevalence import CorrectedPassRate
    from ..validate.report import ValidationReport


@dataclass(frozen=True)
class StatRow:
    label: str
    value: str
    interval: str


@dataclass(frozen=True)
class AgreementView:
    headline: str
    n: str
    rows: tuple[StatRow, ...]
    # confusion[human][judge] as display strings; human rows pass/fail, judge columns pass/fail
    confusion: tuple[tuple[str, str], tuple[str, str]]
    mcnemar: str
    criteria: tuple[
        tuple[str, tuple[str, ...]], ...
    ]  # (criterion, n, exact, within one, kappa, shift)
    guidance: tuple[str, ...]
    warnings: tuple[str, ...]
    # One line per bar set with --min-kappa / --min-fail-agreement, and the overall outcome.
    gates: tuple[str, ...] = ()
    gates_passed: bool | None = None


def agreement_view(report: ValidationReport) -> AgreementView:
    s = report.pass_fail
    rows = tuple(
        StatRow(label, _fmt(value, kind), _interval(ci, kind))
        for label, value, ci, kind in _rows(s, report.corrected)
    )
    band = s.kappa_band
    if band:
        rows = tuple(
            StatRow(r.label, f"{r.value} ({band})", r.interval)
            if r.label == "Cohen's kappa" and r.value != NA
            else r
            for r in rows
        )
    t = s.table
    guidance = report.guidance
    # Here, not at the top: a report without labels never loads the validation package.
    from ..validate.guidance import RULE_OF_THUMB

    return AgreementView(
        headline=report.headline or NA,
        n=str(report.n),
        rows=rows,
        confusion=((str(t.a), str(t.b)), (str(t.c), str(t.d))),
        mcnemar=_mcnemar(s.mcnemar),
        criteria=tuple((name, _criterion(c)) for name, c in report.criteria.items()),
        guidance=(*guidance.lines, RULE_OF_THUMB),
        warnings=tuple(report.warnings),
        gates=tuple(f"{'ok' if g.passed else 'FAILED'}: {g.message}" for g in report.gates),
        gates_passed=report.gates_passed,
    )


def _rows(
    s: PassFailStats, run: CorrectedPassRate
) -> list[tuple[str, float | None, Interval | None, str]]:
    """(label, value, interval, how to show it): proportions as percentages, kappa as a decimal."""
    return [
        ("Raw agreement", s.raw_agreement, s.raw_agreement_ci, "pct"),
        ("Cohen's kappa", s.cohen_kappa, s.cohen_kappa_ci, "dec"),
        (
            "Agreement on human passes",
            s.agreement_on_human_pass,
            s.agreement_on_human_pass_ci,
            "pct",
        ),
        (
            "Agreement on human fails",
            s.agreement_on_human_fail,
            s.agreement_on_human_fail_ci,
            "pct",
        ),
        ("Positive specific agreement", s.positive_agreement, s.positive_agreement_ci, "pct"),
        ("Negative specific agreement", s.negative_agreement, s.negative_agreement_ci, "pct"),
        ("Judge pass rate", s.judge_pass_rate, s.judge_pass_rate_ci, "pct"),
        ("Human pass rate", s.human_pass_rate, s.human_pass_rate_ci, "pct"),
        ("Alignment (EvalGen harmonic mean)", s.alignment, s.alignment_ci, "pct"),
        ("Judge pass rate, whole run", run.raw, run.raw_ci, "pct"),
        ("Pass rate corrected for judge errors (Rogan-Gladen)", run.value, run.ci, "pct"),
    ]


def _criterion(c: CriterionAgreement) -> tuple[str, ...]:
    return (
        str(c.n),
        _fmt(c.exact_agreement, "pct"),
        _fmt(c.within_one_agreement, "pct"),
        _fmt(c.linear_kappa, "dec"),
        _fmt(c.mean_shift, "signed"),
    )


def _fmt(value: float | None, kind: str) -> str:
    if value is None or not math.isfinite(value):
        return NA
    if kind == "pct":
        return pct(value, 1)
    if kind == "signed":
        return num(value, 2, signed=True)
    return num(value, 3)


def _interval(ci: Interval | None, kind: str) -> str:
    if ci is None:
        return NA
    low, high = (_fmt(v, kind) for v in ci)
    return NA if NA in (low, high) else f"[{low}, {high}]"


def _mcnemar(m: McNemar | None) -> str:
    if m is None:
        return NA
    shown = f"p = {m.p_value:.3g}" if math.isfinite(m.p_value) else NA
    return f"{shown} ({m.direction})" if m.direction else shown
