"""The judge-vs-human section, rendered from ``ValidationReport.to_dict()``.

The report reads the plain dict (the same object ``validate --json`` prints) rather than the
validation classes, so it keeps working when that module grows; any key it cannot find is shown
as "n/a" instead of failing the whole report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

NA = "n/a"

# (key, label, how to show it): proportions as percentages, kappa-like values as decimals.
_ROWS: tuple[tuple[str, str, str], ...] = (
    ("raw_agreement", "Raw agreement", "pct"),
    ("cohen_kappa", "Cohen's kappa", "dec"),
    ("agreement_on_human_pass", "Agreement on human passes", "pct"),
    ("agreement_on_human_fail", "Agreement on human fails", "pct"),
    ("positive_agreement", "Positive specific agreement", "pct"),
    ("negative_agreement", "Negative specific agreement", "pct"),
    ("judge_pass_rate", "Judge pass rate", "pct"),
    ("human_pass_rate", "Human pass rate", "pct"),
    ("alignment", "Alignment (EvalGen harmonic mean)", "pct"),
    ("run_pass_rate", "Judge pass rate, whole run", "pct"),
    ("corrected_pass_rate", "Pass rate corrected for judge errors (Rogan-Gladen)", "pct"),
)

# Per-criterion agreement on human 1-3 scores, when the labels carry them.
_CRITERION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("n", "int"),
    ("exact_agreement", "pct"),
    ("within_one_agreement", "pct"),
    ("linear_weighted_kappa", "dec"),
    ("mean_shift", "signed"),
)


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
    criteria: tuple[tuple[str, tuple[str, ...]], ...]  # (criterion, cells in _CRITERION_COLUMNS)
    guidance: tuple[str, ...]
    warnings: tuple[str, ...]
    # One line per bar set with --min-kappa / --min-fail-agreement, and the overall outcome.
    gates: tuple[str, ...] = ()
    gates_passed: bool | None = None


def agreement_view(data: Mapping[str, Any]) -> AgreementView:
    rows = tuple(
        StatRow(label, _fmt(data.get(key), kind), _interval(data.get(f"{key}_ci"), kind))
        for key, label, kind in _ROWS
    )
    band = data.get("cohen_kappa_band")
    if isinstance(band, str) and band:
        rows = tuple(
            StatRow(r.label, f"{r.value} ({band})", r.interval)
            if r.label == "Cohen's kappa" and r.value != NA
            else r
            for r in rows
        )
    return AgreementView(
        headline=str(data.get("headline") or NA),
        n=_fmt(data.get("n"), "int"),
        rows=rows,
        confusion=_confusion(data.get("confusion")),
        mcnemar=_mcnemar(data.get("mcnemar")),
        criteria=_criteria(data.get("criteria")),
        guidance=_guidance(data.get("guidance")),
        warnings=tuple(str(w) for w in data.get("warnings") or ()),
        gates=_gates(data.get("gates")),
        gates_passed=_gates_passed(data.get("gates")),
    )


def _gates(g: Any) -> tuple[str, ...]:
    if not isinstance(g, Mapping):
        return ()
    bars = [b for b in g.get("bars") or () if isinstance(b, Mapping)]
    return tuple(f"{'ok' if b.get('passed') else 'FAILED'}: {b.get('message', NA)}" for b in bars)


def _gates_passed(g: Any) -> bool | None:
    passed = g.get("passed") if isinstance(g, Mapping) else None
    return passed if isinstance(passed, bool) else None


def _fmt(value: Any, kind: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return NA
    if kind == "pct":
        return f"{100 * value:.1f}%"
    if kind == "int":
        return str(int(value))
    if kind == "signed":
        return f"{value:+.2f}"
    return f"{value:.3f}"


def _interval(ci: Any, kind: str) -> str:
    if not isinstance(ci, list | tuple) or len(ci) != 2:
        return NA
    low, high = (_fmt(v, kind) for v in ci)
    return NA if NA in (low, high) else f"[{low}, {high}]"


def _confusion(table: Any) -> tuple[tuple[str, str], tuple[str, str]]:
    def cell(human: str, judge: str) -> str:
        row = table.get(human) if isinstance(table, Mapping) else None
        return _fmt(row.get(judge) if isinstance(row, Mapping) else None, "int")

    return (
        (cell("human_pass", "judge_pass"), cell("human_pass", "judge_fail")),
        (cell("human_fail", "judge_pass"), cell("human_fail", "judge_fail")),
    )


def _mcnemar(m: Any) -> str:
    if not isinstance(m, Mapping):
        return NA
    p = m.get("p_value")
    shown = f"p = {p:.3g}" if isinstance(p, int | float) and not isinstance(p, bool) else NA
    direction = m.get("direction")
    return f"{shown} ({direction})" if isinstance(direction, str) and direction else shown


def _criteria(table: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(table, Mapping):
        return ()
    return tuple(
        (str(name), tuple(_fmt(stats.get(key), kind) for key, kind in _CRITERION_COLUMNS))
        for name, stats in table.items()
        if isinstance(stats, Mapping)
    )


def _guidance(g: Any) -> tuple[str, ...]:
    if not isinstance(g, Mapping):
        return ()
    lines = [str(line) for line in g.get("summary") or ()]
    if g.get("rule_of_thumb"):
        lines.append(str(g["rule_of_thumb"]))
    return tuple(lines)
