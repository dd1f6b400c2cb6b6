"""The plain-text validation report: headline first, then the evidence behind it."""

from __future__ import annotations

from .._format import num, pct
from .._text import inline
from ..stats.intervals import Interval
from .agreement import PassFailStats
from .annotators import HumanAgreement
from .dataset import ExcludedGroup, Exclusions
from .guidance import RULE_OF_THUMB, Guidance
from .length_bias import LengthBias
from .ordinal import CriterionAgreement
from .prevalence import CorrectedPassRate
from .report import ValidationReport

CLASS_NAMES = {"human_pass": "human passes", "human_fail": "human fails"}


def render_text(report: ValidationReport) -> str:
    s = report.pass_fail
    parts = [
        f"research-judge validate: {report.n} sessions with both a judge verdict and a human "
        f"label ({report.n_results} results, {report.n_labels} labels)",
        "",
        report.headline,
        "",
        *_table(s),
        "",
        *_rates(s),
        "",
        *_kappa(s),
        "",
        *_corrected(report.corrected),
    ]
    if report.human_agreement is not None:
        parts += ["", *_humans(report.human_agreement)]
    if report.criteria:
        parts += ["", *_criteria(report.criteria)]
    parts += ["", *_length(report.length_bias), "", *_guidance(report.guidance)]
    parts += ["", *_excluded(report.excluded)]
    if report.gates:
        parts += ["", *_gates(report)]
    if report.warnings:
        parts += ["", "Warnings", *(f"  - {w}" for w in report.warnings)]
    return "\n".join(parts) + "\n"


def _humans(h: HumanAgreement) -> list[str]:
    lines = [
        f"Human agreement ({len(h.annotators)} annotators; {h.n_overlap} sessions labelled by "
        "two or more; the judge is compared with each session's majority label)"
    ]
    if h.statistic == "krippendorff_alpha":
        value = "undefined" if h.value is None else f"{h.value:.2f} {_num_ci(h.ci)}".rstrip()
        lines.append(f"  Krippendorff's alpha (all annotators): {value}")
    for p in h.pairs:
        kappa = "undefined" if p.kappa is None else f"{p.kappa:.2f} {_num_ci(p.kappa_ci)}".rstrip()
        lines.append(
            # Annotator names are a labels file's text: one inert value each (``_text``).
            f"  {inline(p.first)} vs {inline(p.second)}: Cohen's kappa {kappa}, raw agreement "
            f"{_pct(p.raw_agreement)} on {p.n} sessions"
        )
    if h.ties:
        lines.append(f"  {len(h.ties)} session(s) tied (no majority label): left out")
    return lines


def _pct(x: float | None) -> str:
    return pct(x, 1)


def _pct_ci(ci: Interval | None) -> str:
    return "" if ci is None else f"[{100 * ci[0]:.1f}%, {100 * ci[1]:.1f}%]"


def _num(x: float | None, digits: int = 2) -> str:
    return num(x, digits)


def _num_ci(ci: Interval | None, digits: int = 2) -> str:
    return "" if ci is None else f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def _table(s: PassFailStats) -> list[str]:
    t = s.table
    row = "  {:<12}{:>12}{:>12}{:>8}"
    return [
        row.format("", "judge pass", "judge fail", "total"),
        row.format("human pass", t.a, t.b, t.a + t.b),
        row.format("human fail", t.c, t.d, t.c + t.d),
        row.format("total", t.a + t.c, t.b + t.d, t.n),
    ]


def _rates(s: PassFailStats) -> list[str]:
    line = "  {:<30}{:>8}  {}"
    lines = [
        "Agreement (95% CI; Wilson for rates, stratified bootstrap otherwise)",
        line.format("raw agreement", _pct(s.raw_agreement), _pct_ci(s.raw_agreement_ci)),
        line.format(
            "on human passes",
            _pct(s.agreement_on_human_pass),
            _pct_ci(s.agreement_on_human_pass_ci),
        ),
        line.format(
            "on human fails",
            _pct(s.agreement_on_human_fail),
            _pct_ci(s.agreement_on_human_fail_ci),
        ),
        line.format(
            "positive specific agreement",
            _pct(s.positive_agreement),
            _pct_ci(s.positive_agreement_ci),
        ),
        line.format(
            "negative specific agreement",
            _pct(s.negative_agreement),
            _pct_ci(s.negative_agreement_ci),
        ),
        line.format("judge pass rate", _pct(s.judge_pass_rate), _pct_ci(s.judge_pass_rate_ci)),
        line.format("human pass rate", _pct(s.human_pass_rate), _pct_ci(s.human_pass_rate_ci)),
        line.format("alignment (EvalGen)", _num(s.alignment), _num_ci(s.alignment_ci)),
    ]
    m = s.mcnemar
    if m is not None:
        lines.append(
            f"  McNemar exact test: judge passed {m.judge_pass_human_fail} human fails and "
            f"failed {m.judge_fail_human_pass} human passes -> {m.direction}, p={m.p_value:.2g}"
        )
    return lines


def _kappa(s: PassFailStats) -> list[str]:
    if s.cohen_kappa is None:
        # The short reason here; the full warning (what to read instead) is listed at the end.
        return [f"Cohen's kappa: undefined ({s.cohen_kappa_undefined}; see warnings)"]
    if s.cohen_kappa_ci is None:
        return [f"Cohen's kappa: {s.cohen_kappa:.3f} (no interval; see warnings)"]
    lines = [f"Cohen's kappa: {s.cohen_kappa:.3f} ({s.kappa_band})"]
    lines.append(
        f"  95% CI {_num_ci(s.cohen_kappa_ci)} ({s.cohen_kappa_ci_method}); "
        f"lower bound reads as {s.kappa_ci_low_band}"
    )
    if s.cohen_kappa_ci_analytic is not None and s.cohen_kappa_se is not None:
        lines.append(
            f"  analytic 95% CI {_num_ci(s.cohen_kappa_ci_analytic)}, SE {s.cohen_kappa_se:.3f}"
        )
    return lines


def _corrected(c: CorrectedPassRate) -> list[str]:
    raw = f"{_pct(c.raw)} of {c.n_graded} graded sessions {_pct_ci(c.raw_ci)}".rstrip()
    lines = ["Pass rate of the whole run", f"  judge's raw pass rate: {raw}"]
    if c.value is None:
        lines.append(f"  corrected for the judge's errors: undefined ({c.undefined})")
        return lines
    interval = _pct_ci(c.ci) or f"no interval ({c.undefined})"
    lines.append(f"  corrected for the judge's errors (Rogan-Gladen): {_pct(c.value)} {interval}")
    lines.append(f"  interval: {c.method}")
    return lines


def _gates(report: ValidationReport) -> list[str]:
    status = "PASSED" if report.gates_passed else "FAILED"
    lines = [f"Gates: {status}"]
    lines += [f"  {'ok  ' if g.passed else 'FAIL'} {g.message}" for g in report.gates]
    return lines


def _criteria(criteria: dict[str, CriterionAgreement]) -> list[str]:
    row = "  {:<14}{:>5}{:>8}{:>10}{:>10}{:>10}{:>8}  {}"
    lines = [
        "Per criterion, 1-3 scores (shift = mean judge minus mean human)",
        row.format("criterion", "n", "exact", "within-1", "linear k", "quad k", "shift", "table"),
    ]
    for name, c in criteria.items():
        lines.append(
            row.format(
                name,
                c.n,
                _pct(c.exact_agreement),
                _pct(c.within_one_agreement),
                _num(c.linear_kappa),
                _num(c.quadratic_kappa),
                "n/a" if c.mean_shift is None else f"{c.mean_shift:+.2f}",
                c.table,
            )
        )
    lines.append("  (table rows: human 1-3, columns: judge 1-3)")
    return lines


def _length(b: LengthBias) -> list[str]:
    lines = ["Length bias (judge pass vs log answer length, holding the human label fixed)"]
    lines.append(f"  {b.reading}")
    if b.model is not None and b.model.odds_ratio_per_sd is not None:
        lines.append(f"  fitted on: {b.model.scope} (n={b.model.n})")
    medians = {k: v for k, v in b.median_length.items() if v is not None}
    if medians:
        lines.append(
            f"  median length ({b.unit}): "
            + ", ".join(f"{k.replace('_', ' ')} {v:.0f}" for k, v in medians.items())
        )
    for cls, block in b.within_class.items():
        cells = [
            f"{name} rho={entry['rho']:.2f}" if isinstance(entry["rho"], float) else f"{name} n/a"
            for name, entry in block.items()
        ]
        count = block["judge_pass"]["n"] if "judge_pass" in block else 0
        lines.append(
            f"  spearman with length among {CLASS_NAMES.get(cls, cls)} (n={count}): "
            + ", ".join(cells)
        )
    return lines


def _guidance(g: Guidance) -> list[str]:
    return ["Sample size", *(f"  {line}" for line in g.lines), f"  {RULE_OF_THUMB}"]


def _excluded(e: Exclusions) -> list[str]:
    def group(name: str, g: ExcludedGroup) -> str:
        shown = ", ".join(inline(i) for i in g.ids[:10]) + (", ..." if g.count > 10 else "")
        return f"  {name}: {g.count}" + (f" ({shown})" if g.count else "") + f" - {g.reason}"

    return [
        "Left out",
        group("judge error", e.judge_error),
        group("no label", e.no_label),
        group("unknown session", e.unknown_session),
        *([group("annotator tie", e.annotator_tie)] if e.annotator_tie.count else []),
    ]
