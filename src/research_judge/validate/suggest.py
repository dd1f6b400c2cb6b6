"""Which sessions to label next: `validate --suggest N`.

The unlabelled sessions most worth a human's time are the ones the judge nearly decided the
other way: a verdict that sits on the policy's threshold is where the judge is most likely to
disagree with a person, and labelling it tells the most about both agreement rates. So:

- candidates are the graded sessions with no label (errored ones cannot be compared);
- each gets a ``margin`` on the 0..1 criterion scale (scores as (score - 1) / 2): for a judge
  pass, the smallest distance of any gated number above its floor (0 = exactly on the floor);
  for a judge fail, the largest shortfall below a floor (how far it is from passing);
- judge passes and judge fails are two strata, each ordered nearest the threshold first (then
  input order), and they alternate, so the labels cover both verdicts equally (a lenient judge
  hides human fails among its passes; a strict one, human passes among its fails). When one
  stratum runs out the other fills the rest;
- the stratum that leads is the one that mostly holds the human class whose agreement interval
  is the wider (the weaker), so an odd N, or a short stratum, favours that interval: judge fails
  when agreement on human fails is the less certain (the usual case), judge passes otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .._files import check_replaceable, write_atomically
from ..errors import ConfigError
from ..judge.policy import VerdictPolicy
from ..results.model import RATIO_NAMES, SCORE_NAMES, Result
from ..results.rows import ResultRow, ResultsRun, as_run
from ..stats.intervals import Interval
from .agreement import PassFailStats
from .labels import Labels, csv_row, neutralise

COLUMNS = (
    "session_id",
    "label",
    *SCORE_NAMES,
    "judge_verdict",
    "margin",
    "rank",
    "judge_reasons",
    "question",
)


def weaker_class(stats: PassFailStats) -> Literal["pass", "fail"]:
    """The human class whose agreement interval is wider; a class with no labels is weakest."""

    def width(ci: Interval | None) -> float:
        return 1.0 if ci is None else ci[1] - ci[0]

    on_pass, on_fail = stats.agreement_on_human_pass_ci, stats.agreement_on_human_fail_ci
    return "pass" if width(on_pass) > width(on_fail) else "fail"


@dataclass(frozen=True)
class Suggestion:
    session_id: str
    judge_verdict: str
    margin: float
    reasons: str
    question: str


def margin(result: Result | ResultRow, policy: VerdictPolicy) -> float | None:
    """Distance of the session's verdict from flipping, on the 0..1 scale; None if unknown."""
    row = result if isinstance(result, ResultRow) else ResultRow.of(result)
    gaps: list[float] = []  # value - floor for every rule that applies
    for name in SCORE_NAMES:
        floor: int = getattr(policy, f"min_{name}")
        score = row.score(name)
        if score is not None:
            gaps.append((score - floor) / 2)
    for name in RATIO_NAMES:
        ratio_floor: float | None = getattr(policy, f"min_{name}")
        value = row.criterion_value(name)
        if ratio_floor is not None and value is not None:
            gaps.append(value - ratio_floor)
    if not gaps:
        return None
    if row.verdict == "pass":
        return max(0.0, min(gaps))
    shortfalls = [-g for g in gaps if g < 0]
    return max(shortfalls) if shortfalls else 0.0


def suggest(
    results: ResultsRun | Sequence[Result],
    labels: Labels,
    n: int,
    policy: VerdictPolicy | None = None,
    lead: Literal["pass", "fail"] = "fail",
) -> list[Suggestion]:
    """``lead``: the judge verdict to start with, see ``weaker_class`` (fails by default).

    Ranked on the rows; the sessions picked are read in full for their reasons and question."""
    if n < 1:
        raise ConfigError(f"--suggest needs a number of sessions of 1 or more, got {n}")
    run = as_run(results)
    rule = policy or VerdictPolicy()
    strata: dict[str, list[tuple[float, int, ResultRow]]] = {"pass": [], "fail": []}
    for index, r in enumerate(run.rows):
        if not r.ok or r.session_id in labels.items or r.verdict is None:
            continue
        m = margin(r, rule)
        # nothing gated: as far from the threshold as can be
        strata[r.verdict].append((1.0 if m is None else m, index, r))
    ordered = {k: [t for t in sorted(v, key=lambda t: (t[0], t[1]))] for k, v in strata.items()}
    picked: list[tuple[float, int, ResultRow]] = []
    passes, fails = ordered["pass"], ordered["fail"]
    order = (fails, passes) if lead == "fail" else (passes, fails)
    while len(picked) < n and (passes or fails):
        for stratum in order:
            if stratum and len(picked) < n:
                picked.append(stratum.pop(0))
    full = run.full(r.session_id for _, _, r in picked)
    return [
        Suggestion(
            r.session_id,
            r.verdict or "",
            m,
            "; ".join(full[r.session_id].verdict_reasons),
            full[r.session_id].question,
        )
        for m, _, r in picked
    ]


def _cell(text: str) -> str:
    # A spreadsheet runs a cell that starts with = + - @ as a formula; session text is data.
    return neutralise(text)


def to_csv(suggestions: Sequence[Suggestion]) -> str:
    rows = [csv_row(COLUMNS)]
    for rank, s in enumerate(suggestions, start=1):
        rows.append(
            csv_row(
                [
                    _cell(s.session_id),
                    "",
                    *("" for _ in SCORE_NAMES),
                    s.judge_verdict,
                    f"{s.margin:.4f}",
                    rank,
                    _cell(s.reasons),
                    _cell(" ".join(s.question.split())),
                ]
            )
        )
    return "".join(rows)


def never_ours(head: bytes) -> bool:
    """A suggestions file is never replaced as a rerun's output: once written, people fill it in
    and it becomes labels (``_files.check_replaceable``'s rule, with no file of its own kind)."""
    return False


def write_suggestions(
    path: str | Path, suggestions: Sequence[Suggestion], *, force: bool = False
) -> None:
    """Write the CSV; never over an existing file (it may be labels someone filled in) unless
    ``force``."""
    target = Path(path)
    check_replaceable("--suggest-out", target, never_ours, force=force)
    try:
        # replace=False: a file created meanwhile is not replaced either.
        write_atomically(target, to_csv(suggestions), replace=force, parents=False)
    except FileExistsError as exc:
        raise ConfigError(f"{target}: already exists; not overwriting it") from exc
    except OSError as exc:
        raise ConfigError(f"{target}: cannot write suggestions: {exc.strerror or exc}") from exc
