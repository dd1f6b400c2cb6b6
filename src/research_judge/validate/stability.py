"""`research-judge stability`: does the judge give the same answer when asked again?

Reads a results file graded with `grade --repeats K`. Over the sessions whose K samples were all
graded: Fleiss' kappa of the samples' verdicts (and of each 1-3 score criterion), with a
bootstrap percentile interval over sessions; the flip rate (share of sessions whose samples do
not all agree); and the ``unstable`` sessions, nearest the pass threshold first (smallest
``margin`` as in ``validate --suggest``, then the closest vote).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._text import inline
from ..judge.policy import VerdictPolicy
from ..results.model import SCORE_NAMES, Result
from ..results.rows import ResultRow
from ..stats import BOOTSTRAP_SEED, STABILITY_RESAMPLES
from ..stats.fleiss import FleissKappa, fleiss_kappa
from .suggest import margin


@dataclass(frozen=True)
class Unstable:
    session_id: str
    passes: int
    fails: int
    verdict: str | None
    margin: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "votes": {"pass": self.passes, "fail": self.fails},
            "verdict": self.verdict,
            "margin": self.margin,
        }


@dataclass
class StabilityReport:
    n_results: int
    n_repeated: int  # results that carry samples
    n_compared: int  # sessions whose K samples were all graded
    k: int | None
    verdict: FleissKappa | None
    criteria: dict[str, tuple[FleissKappa, float]]  # criterion -> (kappa, flip rate)
    flip_rate: float | None
    unstable: list[Unstable]
    seed: int
    n_boot: int
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        v = self.verdict
        return {
            "n_results": self.n_results,
            "n_repeated": self.n_repeated,
            "n_compared": self.n_compared,
            "k": self.k,
            "fleiss_kappa": None if v is None else v.kappa,
            "fleiss_kappa_ci": None if v is None or v.ci is None else list(v.ci),
            "fleiss_kappa_ci_method": f"bootstrap percentile over sessions, {self.n_boot} "
            "resamples",
            "fleiss_kappa_undefined": None if v is None else v.undefined,
            "fleiss_kappa_ci_undefined_resamples": None if v is None else v.undefined_resamples,
            "flip_rate": self.flip_rate,
            "unstable": [u.session_id for u in self.unstable],
            "unstable_detail": [u.to_dict() for u in self.unstable],
            "criteria": {
                name: {
                    "fleiss_kappa": fk.kappa,
                    "fleiss_kappa_ci": None if fk.ci is None else list(fk.ci),
                    "fleiss_kappa_undefined": fk.undefined,
                    "flip_rate": flips,
                }
                for name, (fk, flips) in self.criteria.items()
            },
            "bootstrap": {"resamples": self.n_boot, "seed": self.seed},
            "warnings": list(self.warnings),
        }


def stability(
    results: Sequence[Result | ResultRow],
    *,
    seed: int = BOOTSTRAP_SEED,
    n_boot: int = STABILITY_RESAMPLES,
    policy: VerdictPolicy | None = None,
) -> StabilityReport:
    """``policy``: the floors the results were graded with (margins are measured from them)."""
    repeated = [r for r in results if r.repeats is not None]
    report = StabilityReport(
        n_results=len(results),
        n_repeated=len(repeated),
        n_compared=0,
        k=None,
        verdict=None,
        criteria={},
        flip_rate=None,
        unstable=[],
        seed=seed,
        n_boot=n_boot,
    )
    if not repeated:
        report.warnings.append(
            "no result carries repeated samples: grade with --repeats K (and a --temperature "
            "above 0) to measure stability"
        )
        return report
    ks = {r.repeats.k for r in repeated if r.repeats is not None}
    k = max(ks)
    if len(ks) > 1:
        report.warnings.append(f"results were graded with different K ({sorted(ks)}); using K={k}")
    complete = [
        r
        for r in repeated
        if r.repeats is not None
        and len(r.repeats.samples) == k
        and all(s.verdict is not None and s.error is None for s in r.repeats.samples)
    ]
    left_out = len(repeated) - len(complete)
    if left_out:
        report.warnings.append(
            f"{left_out} session(s) left out: not all of their {k} samples were graded "
            "(or they used another K)"
        )
    report.k, report.n_compared = k, len(complete)
    rng = np.random.default_rng(seed)
    votes = np.array(
        [[sum(s.verdict == "pass" for s in _samples(r)), 0] for r in complete], dtype=np.int64
    ).reshape(-1, 2)
    votes[:, 1] = k - votes[:, 0]
    report.verdict = fleiss_kappa(votes, n_boot=n_boot, rng=rng)
    if report.verdict.undefined:
        report.warnings.append(f"fleiss_kappa: {report.verdict.undefined}")
    _say_dropped("fleiss_kappa_ci", report.verdict, n_boot, report.warnings)
    flipped = (votes[:, 0] > 0) & (votes[:, 1] > 0)
    report.flip_rate = float(flipped.mean()) if complete else None
    rule = policy or VerdictPolicy()
    unstable = [
        Unstable(r.session_id, int(v[0]), int(v[1]), r.verdict, margin(r, rule))
        for r, v, f in zip(complete, votes, flipped, strict=True)
        if f
    ]
    unstable.sort(key=lambda u: (1.0 if u.margin is None else u.margin, abs(u.passes - u.fails)))
    report.unstable = unstable
    for name in SCORE_NAMES:
        table = np.array(
            [
                [sum(s.scores.get(name) == c for s in _samples(r)) for c in (1, 2, 3)]
                for r in complete
            ],
            dtype=np.int64,
        ).reshape(-1, 3)
        full = table.sum(axis=1) == k  # every sample scored this criterion
        if not full.any():
            continue
        fk = fleiss_kappa(table[full], n_boot=n_boot, rng=rng)
        _say_dropped(f"{name}: fleiss_kappa_ci", fk, n_boot, report.warnings)
        flips = float(np.mean(np.count_nonzero(table[full], axis=1) > 1))
        report.criteria[name] = (fk, flips)
    return report


def _say_dropped(name: str, fk: FleissKappa, n_boot: int, warnings: list[str]) -> None:
    # An interval kept despite resamples without a kappa says how many were left out; one
    # withheld for them already says why in ``undefined``.
    if fk.ci is not None and fk.undefined_resamples:
        warnings.append(
            f"{name}: {fk.undefined_resamples} of {n_boot} resamples drew only items whose "
            "samples all fell in one category (kappa undefined) and are left out of the "
            "interval, so its upper end may be a little low"
        )


def _samples(r: Result | ResultRow) -> list[Any]:
    return [] if r.repeats is None else list(r.repeats.samples)


def render_text(report: StabilityReport) -> str:
    lines = [
        f"research-judge stability: {report.n_compared} sessions with all {report.k} samples "
        f"graded ({report.n_repeated} repeated of {report.n_results} results)",
        "",
    ]
    v = report.verdict
    if v is not None:
        kappa = "undefined" if v.kappa is None else f"{v.kappa:.3f}"
        ci = "" if v.ci is None else f" [{v.ci[0]:.2f}, {v.ci[1]:.2f}]"
        flips = "n/a" if report.flip_rate is None else f"{100 * report.flip_rate:.1f}%"
        lines += [
            f"Verdict: Fleiss' kappa {kappa}{ci} over {report.k} samples; "
            f"{flips} of sessions flip between samples",
        ]
    if report.criteria:
        lines.append("Per criterion (1-3 scores):")
        for name, (fk, share) in report.criteria.items():
            kappa = "undefined" if fk.kappa is None else f"{fk.kappa:.3f}"
            ci = "" if fk.ci is None else f" [{fk.ci[0]:.2f}, {fk.ci[1]:.2f}]"
            lines.append(f"  {name:<14} kappa {kappa}{ci}, {100 * share:.1f}% not unanimous")
    if report.unstable:
        lines += [
            "",
            f"Unstable sessions ({len(report.unstable)}), nearest the pass threshold first:",
        ]
        for u in report.unstable[:20]:
            m = "n/a" if u.margin is None else f"{u.margin:.3f}"
            # The id is the logs' text: one inert value inside its own line (``_text.inline``).
            lines.append(f"  {inline(u.session_id)}: {u.passes} pass / {u.fails} fail, margin {m}")
        if len(report.unstable) > 20:
            lines.append(f"  ... and {len(report.unstable) - 20} more (see --json)")
    if report.warnings:
        lines += ["", "Warnings", *(f"  - {w}" for w in report.warnings)]
    return "\n".join(lines) + "\n"
