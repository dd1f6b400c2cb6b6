"""Plain-text rendering of a ``Comparison`` for terminals and CI logs.

Ids and warnings come from the results files: printed through ``_text.inline``, so a session id
cannot break its line or start a CI workflow command.
"""

from __future__ import annotations

from .._format import num
from .._text import inline
from .model import JUDGE_CHANGED, Comparison, Flag, MetricDelta

_IDS_PER_LINE = 8
TESTS_NOTE = (
    "p: pass rate, exact McNemar; criteria, exact signed-rank test on changes at the stored "
    "precision (tied ranks permuted exactly; the sign test when every change is the same size; "
    "normal approximation above 200 moved sessions)"
)


def render_text(cmp: Comparison) -> str:
    lines: list[str] = [_summary(cmp)]
    if cmp.judge_changed:
        # First thing a reader sees: every delta below is suspect.
        lines.append(f"!! {JUDGE_CHANGED}")
    lines.append("")
    lines.extend(_table(cmp))
    lines.append(TESTS_NOTE)
    lines.append("")
    if cmp.decomposition is not None:
        lines.extend(_split_table(cmp))
        lines.append("")
    lines.extend(_ids("Regressions (pass -> fail)", cmp.regressions))
    lines.extend(_ids("Fixed (fail -> pass)", cmp.fixed))
    if cmp.movers:
        lines.append("")
        lines.append("Sessions that moved most (combined criteria, 0..1):")
        for m in cmp.movers:
            lines.append(
                f"  {inline(m.session_id)}: {m.combined_baseline:.3f} -> {m.combined_current:.3f} "
                f"({m.delta:+.3f})"
            )
    if cmp.warnings:
        lines.append("")
        lines.append("Warnings:")
        lines.extend(f"  - {inline(w)}" for w in cmp.warnings)
    lines.append("")
    lines.append(_verdict_line(cmp))
    return "\n".join(lines) + "\n"


def _summary(cmp: Comparison) -> str:
    return (
        f"Compared {cmp.n_common} common sessions ({cmp.n_graded_both} graded in both; "
        f"{len(cmp.only_in_baseline)} only in baseline, {len(cmp.only_in_current)} only in "
        f"current; errored: baseline {cmp.errored['baseline']}, current {cmp.errored['current']})"
    )


def _table(cmp: Comparison) -> list[str]:
    header = f"{'metric':<19}{'baseline':>10}{'current':>10}{'delta':>10}{'p':>9}{'pairs':>7}  flag"
    rows = [header, "-" * len(header)]
    rows.extend(_row(m, cmp.flag_for(m.metric)) for m in cmp.metrics)
    for m in cmp.context:  # context rows: shown, never flagged; tokens as whole numbers
        digits = 0 if m.metric == "tokens_pulled" else 3
        rows.append(_row(m, None, digits))
    return rows


def _row(m: MetricDelta, flag: Flag | None, digits: int = 3) -> str:
    p = "n/a" if m.test.p_value is None else f"{m.test.p_value:.3g}"
    mark = ""
    if flag is not None:
        mark = flag.severity.upper()
        if flag.test.significant is False:
            mark += " (within noise)"
    return (
        f"{m.metric:<19}{_num(m.baseline, digits=digits):>10}"
        f"{_num(m.current, digits=digits):>10}{_num(m.delta, signed=True, digits=digits):>10}"
        f"{p:>9}{m.test.n_pairs:>7}  {mark}"
    ).rstrip()


def _split_table(cmp: Comparison) -> list[str]:
    d = cmp.decomposition
    assert d is not None
    header = f"{'metric':<14}{'judge shift':>12}{'p':>9}{'agent change':>14}{'p':>9}  moved"
    rows = [
        f"Judge shift (rejudged - baseline) or agent change (current - rejudged), "
        f"on {d.n_sessions} sessions graded in all three runs:",
        header,
        "-" * len(header),
    ]
    for name, split in d.metrics.items():
        j, a = split.judge_shift, split.agent_change
        rows.append(
            f"{name:<14}{_num(j.delta, signed=True):>12}{_p(j.test.p_value):>9}"
            f"{_num(a.delta, signed=True):>14}{_p(a.test.p_value):>9}  {split.moved}"
        )
    return rows


def _p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def _num(value: float | None, *, signed: bool = False, digits: int = 3) -> str:
    return num(value, digits, signed=signed)


def _ids(title: str, ids: list[str]) -> list[str]:
    if not ids:
        return [f"{title}: none"]
    out = [f"{title} ({len(ids)}):"]
    for start in range(0, len(ids), _IDS_PER_LINE):
        out.append("  " + ", ".join(inline(i) for i in ids[start : start + _IDS_PER_LINE]))
    return out


def _verdict_line(cmp: Comparison) -> str:
    if not cmp.flags:
        return f"OK: no metric dropped by more than {cmp.threshold:g}"
    worst = "CRITICAL" if any(f.severity == "critical" for f in cmp.flags) else "WARNING"
    names = ", ".join(
        f.metric + (" within noise" if f.test.significant is not True else "") for f in cmp.flags
    )
    count = len(cmp.flags)
    noun = "metric" if count == 1 else "metrics"
    return f"{worst}: {count} {noun} dropped by more than {cmp.threshold:g} ({names})"
