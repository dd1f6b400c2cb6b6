"""Everything one report shows, assembled from results (and optionally labels and a baseline).

Plain data, no markup: the HTML and Markdown templates both render from one ``ReportData``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..compare import Comparison, compare_runs
from ..compare.model import DEFAULT_THRESHOLD, JUDGE_CHANGED
from ..judge.policy import VerdictPolicy
from ..results.model import Result
from ..results.rows import ResultRow, ResultsRun, as_run
from . import DEFAULT_WORST
from .agreement import AgreementView, agreement_view
from .context import ContextView, context_view
from .distributions import CriteriaCharts, criteria_charts
from .summary import CostSummary, ErrorLine, Headline, JudgeLine, cost, errors, headline, judges
from .worst import WorstSession, worst_sessions

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

    @property
    def problems(self) -> list[str]:
        """One line per thing a CI reader should not miss."""
        out = [f"judge errors: {len(self.errors)} sessions not graded"] if self.errors else []
        if self.comparison is not None:
            out.extend(
                f"{f.severity}: {f.metric} dropped by {-f.delta:.3f}" for f in self.comparison.flags
            )
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
    return ReportData(
        source=source,
        headline=headline(rows),
        criteria=criteria_charts(rows),
        agreement=None if agreement is None else agreement_view(agreement),
        worst=worst_sessions(run, worst),
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
    )


def _stability(rows: Sequence[ResultRow], policy: VerdictPolicy | None) -> tuple[str, ...]:
    if not any(r.repeats is not None for r in rows):
        return ()
    # Imported here: only runs graded with --repeats need numpy's statistics.
    from ..validate.stability import render_text, stability

    text = render_text(stability(rows, n_boot=2000, policy=policy))
    return tuple(line for line in text.splitlines()[1:] if line.strip())
