"""The benchmark's printed table: fixed widths, fixed rounding, nothing timed, so a rerun on the
same results prints it bit for bit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from validity.labels import RULES

Format = Callable[[Any], str]


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value: Any) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def _with_ci(section: dict[str, Any], key: str, fmt: Format) -> list[str]:
    """One cell per rule: the figure and, when there is one, its 95% interval."""
    cells = []
    for rule in RULES:
        figures = section[rule]
        ci = figures.get(f"{key}_ci")
        cells.append(fmt(figures[key]) + (f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""))
    return cells


def _row(label: str, cells: list[str]) -> str:
    return f"  {label:<34}" + "".join(f"{c:<30}" for c in cells).rstrip()


def _head(title: str) -> str:
    return f"{title:<36}" + "".join(f"{r:<30}" for r in RULES).rstrip()


def render(summary: dict[str, Any]) -> str:
    judge = summary["judge"]
    reading = summary["reading"]
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(reading["skipped"].items()))
    m = summary["measures"]
    a, c, t = m["answer_level"], m["claims"], m["citations"]
    lines = [
        f"ExpertQA validity benchmark: judge {judge['provider']}/{judge['model']}",
        f"  data: {reading['answers']} answers read, {m['answers']} with their evidence text"
        + (f" (left out: {skipped})" if skipped else ""),
        f"  graded {m['graded']}, judge errors {m['judge_errors']} (left out of every figure),"
        f" not in results {m['not_in_results']}",
        "",
        _head("answer level (pass/fail)"),
        _row("expert pass rate", [_pct(a[r]["expert_pass_rate"]) for r in RULES]),
        _row("judge pass rate", [_pct(a[r]["judge_pass_rate"]) for r in RULES]),
        _row("Cohen's kappa [95% CI]", _with_ci(a, "kappa", _num)),
        _row("agreement on expert passes", _with_ci(a, "agreement_on_expert_pass", _pct)),
        _row("agreement on expert fails", _with_ci(a, "agreement_on_expert_fail", _pct)),
        _row("corrected pass rate", _with_ci(a, "corrected_pass_rate", _pct)),
        "",
        _head("per claim (grounded vs support)"),
        _row(
            "claims: expert labelled / judge",
            [f"{c[r]['expert_labelled']} / {c[r]['judge_claims']}" for r in RULES],
        ),
        _row(
            "aligned / judge missed / invented",
            [
                f"{c[r]['aligned_labelled']} / {c[r]['judge_missed']} / {c[r]['judge_invented']}"
                for r in RULES
            ],
        ),
        _row("agreement on aligned [95% CI]", _with_ci(c, "agreement", _pct)),
        _row("kappa on aligned [95% CI]", _with_ci(c, "kappa", _num)),
        _row(
            "agreement, unaligned as wrong",
            [_pct(c[r]["agreement_counting_unaligned"]) for r in RULES],
        ),
        "",
        _head("citation audit vs support"),
        _row("cited, aligned claims", [str(t[r]["n"]) for r in RULES]),
        _row("agreement [95% CI]", _with_ci(t, "agreement", _pct)),
        _row("kappa [95% CI]", _with_ci(t, "kappa", _num)),
        "",
        "per system (strict rule)",
        f"  {'system':<24}{'n':>5}{'expert pass':>13}{'judge pass':>12}{'agreement':>11}"
        f"{'kappa':>9}{'claim agr.':>12}",
    ]
    for system, s in m["systems"].items():
        strict = s["strict"]
        lines.append(
            f"  {system:<24}{s['answers']:>5}{_pct(strict['expert_pass_rate']):>13}"
            f"{_pct(strict['judge_pass_rate']):>12}{_pct(strict['agreement']):>11}"
            f"{_num(strict['kappa']):>9}{_pct(s['claims_strict']['agreement']):>12}"
        )
    return "\n".join(lines) + "\n"
