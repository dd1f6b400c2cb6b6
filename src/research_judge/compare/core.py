"""Compare two graded runs on the sessions they share (contract section 8).

Design choices the contract leaves open, kept here in one place:

- Sessions are joined on ``session_id``; lists of ids follow the current run's order.
- The pass rate and every criterion mean are taken over the common sessions graded in BOTH runs
  (no error, verdict not None), so a session that errored on one side cannot move a mean.
- Within those sessions a null criterion value (e.g. grounding with no claims) is left out of
  that run's mean; a mean of nothing is None and so is its delta.
- A metric is flagged when it drops by more than ``threshold``; a drop exactly equal to the
  threshold is not flagged (1e-9 absorbs float noise such as 0.70 - 0.75). Only the pass rate
  can be ``critical`` (a drop beyond ``critical_threshold``, 0.10 by default): a criterion mean
  moving by 0.10 on a 0..1 scale is a smaller event than one session in ten changing verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from statistics import fmean

from ..errors import ConfigError
from ..results.model import CITATION_NAMES, CRITERIA, Result
from ..results.rows import ResultRow, ResultsRun, as_run
from ..stats.paired import PairedTest, mcnemar_exact, signed_rank
from .context import context_deltas
from .judges import RunJudges, describe_change, judge_changed
from .model import (
    DEFAULT_CRITICAL_THRESHOLD,
    DEFAULT_THRESHOLD,
    JUDGE_CHANGED,
    Comparison,
    Flag,
    MetricDelta,
    SessionMove,
)
from .rejudged import REJUDGE_HINT, decompose

PASS_RATE = "pass_rate"
_FLOAT_SLACK = 1e-9
_IDS_IN_WARNING = 10


def combined_value(result: Result | ResultRow) -> float | None:
    """Mean of a result's non-null criterion values on the 0..1 scale; None when it has none."""
    values = [v for v in (result.criterion_value(n) for n in CRITERIA) if v is not None]
    return fmean(values) if values else None


def compare_runs(
    baseline: ResultsRun | Sequence[Result],
    current: ResultsRun | Sequence[Result],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    critical_threshold: float = DEFAULT_CRITICAL_THRESHOLD,
    top_movers: int = 10,
    rejudged: ResultsRun | Sequence[Result] | None = None,
) -> Comparison:
    """Compare ``current`` against ``baseline``; see the module docstring for the rules.

    ``rejudged`` (the baseline's sessions graded by the current judge) splits every delta into
    judge shift and agent change (see ``compare.rejudged``). Runs are compared on their rows
    (``results.rows``): results held in memory are turned into rows first.
    """
    base_rows = as_run(baseline).rows
    cur_rows = as_run(current).rows
    rej_rows = None if rejudged is None else as_run(rejudged).rows
    return _compare(base_rows, cur_rows, threshold, critical_threshold, top_movers, rej_rows)


def _compare(
    baseline: Sequence[ResultRow],
    current: Sequence[ResultRow],
    threshold: float,
    critical_threshold: float,
    top_movers: int,
    rejudged: Sequence[ResultRow] | None,
) -> Comparison:
    for name, value in (("threshold", threshold), ("critical threshold", critical_threshold)):
        if not math.isfinite(value) or value < 0:
            raise ConfigError(f"{name} must be a finite number >= 0, got {value}")
    base_by_id = _by_id(baseline, "baseline")
    cur_by_id = _by_id(current, "current")

    pairs = [(base_by_id[r.session_id], r) for r in current if r.session_id in base_by_id]
    graded = [(b, c) for b, c in pairs if b.ok and c.ok]
    regressions = [c.session_id for b, c in graded if b.verdict == "pass" and c.verdict == "fail"]
    fixed = [c.session_id for b, c in graded if b.verdict == "fail" and c.verdict == "pass"]

    pass_rate = MetricDelta(
        PASS_RATE,
        _mean(1.0 if b.verdict == "pass" else 0.0 for b, _ in graded),
        _mean(1.0 if c.verdict == "pass" else 0.0 for _, c in graded),
        len(graded),
        len(graded),
        mcnemar_exact(len(regressions), len(fixed), len(graded)),
    )
    # The citation audit's ratios join when either run has them (older results do not).
    audited = any(r.audited for r in baseline) or any(r.audited for r in current)
    names = (*CRITERIA, *CITATION_NAMES) if audited else CRITERIA
    criteria = {name: _criterion_delta(name, graded) for name in names}
    flags = _flags([pass_rate, *criteria.values()], threshold, critical_threshold)

    if rejudged is not None:
        _by_id(rejudged, "rejudged")
    base_judges, cur_judges = RunJudges.of(baseline), RunJudges.of(current)
    changed = judge_changed(base_judges, cur_judges)
    comparison = Comparison(
        n_common=len(pairs),
        n_graded_both=len(graded),
        only_in_baseline=[r.session_id for r in baseline if r.session_id not in cur_by_id],
        only_in_current=[r.session_id for r in current if r.session_id not in base_by_id],
        pass_rate=pass_rate,
        criteria=criteria,
        regressions=regressions,
        fixed=fixed,
        newly_errored=[c.session_id for b, c in pairs if b.ok and not c.ok],
        flags=flags,
        errored={
            "baseline": sum(not r.ok for r in baseline),
            "current": sum(not r.ok for r in current),
        },
        judge={
            "baseline": base_judges.to_dict(),
            "current": cur_judges.to_dict(),
            "changed": changed,
        },
        movers=_movers(graded, top_movers),
        context=context_deltas(pairs),
        threshold=threshold,
        critical_threshold=critical_threshold,
        decomposition=(None if rejudged is None else decompose(baseline, current, rejudged, names)),
    )
    comparison.warnings.extend(_warnings(comparison, base_judges, cur_judges))
    if comparison.decomposition is not None:
        comparison.warnings.extend(comparison.decomposition.warnings)
    return comparison


def _by_id(results: Sequence[ResultRow], side: str) -> dict[str, ResultRow]:
    out = {r.session_id: r for r in results}
    if len(out) != len(results):
        # read_results already refuses duplicates; this guards direct Python callers.
        raise ConfigError(f"the {side} run holds duplicate session ids")
    return out


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return fmean(items) if items else None


def _criterion_delta(name: str, graded: list[tuple[ResultRow, ResultRow]]) -> MetricDelta:
    pairs = [(b.criterion_value(name), c.criterion_value(name)) for b, c in graded]
    base = [b for b, _ in pairs if b is not None]
    cur = [c for _, c in pairs if c is not None]
    diffs = [c - b for b, c in pairs if b is not None and c is not None]
    return MetricDelta(name, _mean(base), _mean(cur), len(base), len(cur), signed_rank(diffs))


def _flags(metrics: list[MetricDelta], threshold: float, critical: float) -> list[Flag]:
    flags: list[Flag] = []
    for m in metrics:
        delta = m.delta
        if delta is None or delta >= -threshold - _FLOAT_SLACK:
            continue
        is_critical = m.metric == PASS_RATE and delta < -critical - _FLOAT_SLACK
        flags.append(Flag(m.metric, delta, "critical" if is_critical else "warning", m.test))
    return flags


def _movers(graded: list[tuple[ResultRow, ResultRow]], limit: int) -> list[SessionMove]:
    moves: list[SessionMove] = []
    for b, c in graded:
        before, after = combined_value(b), combined_value(c)
        if before is None or after is None:
            continue
        per_criterion: dict[str, float] = {}
        for name in CRITERIA:
            bv, cv = b.criterion_value(name), c.criterion_value(name)
            if bv is not None and cv is not None and cv != bv:
                per_criterion[name] = cv - bv
        if after != before or per_criterion:
            moves.append(
                SessionMove(c.session_id, b.verdict, c.verdict, before, after, per_criterion)
            )
    # Stable sort: among equal moves the current run's order is kept.
    moves.sort(key=lambda m: -abs(m.delta))
    return moves[:limit]


def _warnings(cmp: Comparison, base: RunJudges, cur: RunJudges) -> list[str]:
    out: list[str] = []
    if cmp.judge_changed and base.main is not None and cur.main is not None:
        detail = "; ".join(describe_change(base.main, cur.main)) or "judge set differs"
        out.append(f"{JUDGE_CHANGED} ({detail})")
        if cmp.decomposition is None:
            out.append(REJUDGE_HINT)
    for side, judges in (("baseline", base), ("current", cur)):
        if judges.main is None:
            out.append(f"cannot tell whether the judge changed: the {side} run records no judge")
        elif judges.mixed:
            out.append(
                f"the {side} run was graded by {len(judges.counts)} different judges; "
                "its own numbers already mix judges"
            )
    if cmp.n_common == 0:
        out.append("the runs share no session ids: nothing was compared")
    if cmp.only_in_baseline or cmp.only_in_current:
        out.append(
            f"{len(cmp.only_in_baseline)} sessions only in the baseline and "
            f"{len(cmp.only_in_current)} only in the current run are left out"
        )
    excluded = cmp.n_common - cmp.n_graded_both
    if excluded:
        out.append(
            f"{excluded} common session(s) errored in at least one run and are left out of the "
            "pass rate and criteria"
        )
    if cmp.newly_errored:
        out.append(
            f"{len(cmp.newly_errored)} session(s) graded in the baseline errored in the current "
            f"run: {_id_list(cmp.newly_errored)}"
        )
    for metric in cmp.metrics:
        if metric.delta is None and cmp.n_graded_both:
            side = "baseline" if metric.baseline is None else "current run"
            out.append(f"{metric.metric}: no values in the {side}, so its delta is undefined")
    if cmp.n_common and not cmp.n_graded_both:
        out.append("pass rate undefined: no common session was graded in both runs")
    out.extend(_noise_warnings(cmp))
    return out


def _noise_warnings(cmp: Comparison) -> list[str]:
    out: list[str] = []
    for flag in cmp.flags:
        test: PairedTest = flag.test
        if test.significant:
            continue
        if not test.can_reach_significance:
            out.append(
                f"{flag.metric} dropped by {-flag.delta:.3f} but only {test.n_moved} session(s) "
                "moved; no paired test can reach p < 0.05 with fewer than 6"
            )
        elif test.p_value is not None:
            out.append(
                f"{flag.metric} dropped by {-flag.delta:.3f} but the paired test gives "
                f"p = {test.p_value:.3g} over {test.n_moved} moved sessions: within noise "
                "at this sample size"
            )
    return out


def _id_list(ids: list[str]) -> str:
    shown = ", ".join(ids[:_IDS_IN_WARNING])
    more = len(ids) - _IDS_IN_WARNING
    return f"{shown} and {more} more" if more > 0 else shown
