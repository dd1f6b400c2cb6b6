"""Everything one report shows, assembled from results (and optionally labels and a baseline).

Plain data, no markup: the HTML and Markdown templates both render from one ``ReportData``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..compare import Comparison, compare_runs
from ..compare.model import DEFAULT_THRESHOLD, JUDGE_CHANGED, Flag
from ..judge.policy import VerdictPolicy
from ..results.model import Result
from ..results.rows import ResultRow, ResultsRun, as_run
from . import DEFAULT_WORST
from .agreement import AgreementView, agreement_view
from .answer import DailyAnswer, daily_answer
from .context import ContextView, context_view
from .distributions import CriteriaCharts, criteria_charts
from .summary import CostSummary, ErrorLine, Headline, JudgeLine, cost, errors, headline, judges
from .worst import WorstSession, describe, worst_sessions

if TYPE_CHECKING:
    from ..validate.report import ValidationReport


@dataclass(frozen=True)
class ReportData:
    source: str
    headline: Headline
    criteria: CriteriaCharts
    agreement: AgreementView | None  # None: no labels were given
    worst: list[WorstSession]
    comparison: Comparison | None  # None: no baseline was given
    baseline_source: str
    questions: dict[str, str]  # session id -> question, for the regressions and fixes listed
    errors: list[ErrorLine]
    cost: CostSummary
    judges: list[JudgeLine]
    context: ContextView | None = None  # None: the results carry no context diagnostics
    # With results of `grade --repeats K`: the `stability` verb's lines, else empty.
    stability: tuple[str, ...] = ()
    # When the results were written (the run's date) and when this report was made, both as
    # "YYYY-MM-DD HH:MM UTC"; "" when unknown (results given in memory).
    run_date: str = ""
    generated_at: str = ""
    # Against a baseline: the first screen's answer, the cards of the sessions that changed
    # verdict and are not among the worst (regressed first), and how many more there were.
    answer: DailyAnswer | None = None
    changed: list[WorstSession] = field(default_factory=list)
    changed_hidden: int = 0

    @property
    def anchors(self) -> dict[str, str]:
        """Session id -> the id of its card on the page, for links from the first screen."""
        out = {s.session_id: f"changed-{i}" for i, s in enumerate(self.changed, 1)}
        out.update({s.session_id: f"worst-{i}" for i, s in enumerate(self.worst, 1)})
        return out

    @property
    def alerts(self) -> list[str]:
        """``problems`` less the flag lines: the first screen's answer already gives each
        metric's drop with its noise verdict."""
        flags = {_flag_line(f) for f in self.comparison.flags} if self.comparison else set()
        return [line for line in self.problems if line not in flags]

    @property
    def problems(self) -> list[str]:
        """One line per thing a CI reader should not miss."""
        out = [f"judge errors: {len(self.errors)} sessions not graded"] if self.errors else []
        if self.comparison is not None:
            out.extend(_flag_line(f) for f in self.comparison.flags)
            if self.comparison.judge_changed:
                out.append(JUDGE_CHANGED)
        if self.context is not None and self.context.sessions_not_fully_judged:
            c = self.context
            out.append(
                f"not judged: {c.not_judged_references} references and {c.not_judged_claims} "
                f"claims in {c.sessions_not_fully_judged} sessions (left out of the ratios)"
            )
        if len(self.judges) > 1:
            out.append(f"this run was graded by {len(self.judges)} different judges")
        return out


def build_report(
    results: ResultsRun | Sequence[Result],
    *,
    agreement: ValidationReport | None = None,
    baseline: ResultsRun | Sequence[Result] | None = None,
    rejudged: ResultsRun | Sequence[Result] | None = None,
    worst: int = DEFAULT_WORST,
    threshold: float = DEFAULT_THRESHOLD,
    source: str = "",
    baseline_source: str = "",
    run_date: str = "",
    generated_at: str = "",
    policy: VerdictPolicy | None = None,
) -> ReportData:
    """``agreement`` is ``validate_run(...)``'s report; ``baseline`` the older run's results;
    ``policy`` the floors the run was graded with (the stability section's margins).

    Every figure is computed from the runs' rows; the sessions shown in detail (the worst, the
    heaviest, the questions of regressions and fixes) are read in full."""
    run = as_run(results)
    rows = run.rows
    comparison = None
    if baseline is not None:
        comparison = compare_runs(baseline, run, threshold=threshold, rejudged=rejudged)
    listed = [] if comparison is None else [*comparison.regressions, *comparison.fixed]
    worst_list = worst_sessions(run, worst)
    changed, hidden = _changed(run, comparison, {s.session_id for s in worst_list})
    return ReportData(
        source=source,
        headline=headline(rows),
        criteria=criteria_charts(rows),
        agreement=None if agreement is None else agreement_view(agreement),
        worst=worst_list,
        comparison=comparison,
        baseline_source=baseline_source,
        questions=run.questions(listed),
        errors=errors(rows),
        cost=cost(rows),
        judges=judges(rows),
        context=context_view(run),
        stability=_stability(rows, policy),
        run_date=run_date,
        generated_at=generated_at,
        answer=None if comparison is None else daily_answer(comparison),
        changed=changed,
        changed_hidden=hidden,
    )


# Cards for sessions that changed verdict: enough to read a bad day, not a page of thousands.
MAX_CHANGED_CARDS = 20


def _changed(
    run: ResultsRun, cmp: Comparison | None, shown: set[str]
) -> tuple[list[WorstSession], int]:
    if cmp is None:
        return [], 0
    present = {r.session_id for r in run.rows}
    ids = [i for i in (*cmp.regressions, *cmp.fixed) if i not in shown and i in present]
    full = run.full(ids[:MAX_CHANGED_CARDS])  # only the cards shown are read in full
    cards = [describe(full[i]) for i in ids[:MAX_CHANGED_CARDS]]
    return cards, max(len(ids) - MAX_CHANGED_CARDS, 0)


def _flag_line(f: Flag) -> str:
    text = f"{f.severity}: {f.metric} dropped by {-f.delta:.3f}"
    if f.test.significant is True:
        return text + " (significant)"
    p = "" if f.test.p_value is None else f", p = {f.test.p_value:.3g}"
    return text + f" (within noise{p}: a warning, not a failure)"


def _stability(rows: Sequence[ResultRow], policy: VerdictPolicy | None) -> tuple[str, ...]:
    if not any(r.repeats is not None for r in rows):
        return ()
    # Imported here: only runs graded with --repeats need numpy's statistics.
    from ..validate.stability import render_text, stability

    text = render_text(stability(rows, n_boot=2000, policy=policy))
    return tuple(line for line in text.splitlines()[1:] if line.strip())
