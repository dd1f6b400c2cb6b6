"""The first lines of a validation report: can the judge be trusted, and which way it leans.

Trust comes first, read from kappa's interval and the agreement on human fails; the lean
(McNemar on the disagreements) second, because "no significant lean" from a judge whose kappa
cannot rule out chance is no reassurance at all.
"""

from __future__ import annotations

from .._format import pct
from .agreement import PassFailStats

# Reading the kappa interval for the trust sentence: a lower end at or below 0 cannot rule out
# chance agreement; "substantial" (Landis & Koch) at the lower end is what a gate can rely on.
TRUSTED_KAPPA_LOW = 0.60
# A judge that catches no more than half the human fails (a coin flip) cannot be trusted to
# catch failures, whatever its kappa.
MIN_FAIL_AGREEMENT = 0.50
TRUSTED_FAIL_AGREEMENT = 0.80


def trust(s: PassFailStats) -> str:
    """Can this judge be trusted? From kappa's interval and the agreement on human fails."""
    t = s.table
    if t.n == 0:
        return "cannot tell whether to trust the judge: nothing was compared"
    on_fail = s.agreement_on_human_fail
    fails = (
        "no human fails labelled"
        if on_fail is None
        else f"agrees on {_pct(on_fail)} of {t.c + t.d} human fails"
    )
    if s.cohen_kappa is None:
        return (
            f"cannot tell whether to trust the judge: kappa undefined "
            f"({s.cohen_kappa_undefined}); it {fails}"
        )
    kappa = f"kappa {s.cohen_kappa:.2f}"
    if s.cohen_kappa_ci is None:
        return (
            f"trust not established: {kappa} from {t.n} labels has no interval "
            f"(see warnings); it {fails}; label more sessions"
        )
    low, high = s.cohen_kappa_ci
    kappa += f" [{low:.2f}, {high:.2f}]"
    if low <= 0:
        return f"do not trust this judge yet: {kappa} cannot rule out chance agreement; it {fails}"
    if on_fail is not None and on_fail <= MIN_FAIL_AGREEMENT:
        return f"do not trust this judge to catch failures: it {fails} ({kappa})"
    fail_low = s.agreement_on_human_fail_ci[0] if s.agreement_on_human_fail_ci else None
    if low >= TRUSTED_KAPPA_LOW and fail_low is not None and fail_low >= TRUSTED_FAIL_AGREEMENT:
        return f"the judge can be trusted: {kappa}, {s.kappa_ci_low_band} at worst; it {fails}"
    return f"trust with care: {kappa}, {s.kappa_ci_low_band} at worst; it {fails}"


def full_headline(s: PassFailStats) -> str:
    """Whether the judge can be trusted first, then which way it leans."""
    if s.table.n == 0:
        return headline(s)
    return f"{trust(s)}. Lean: {headline(s)}"


def headline(s: PassFailStats) -> str:
    """The judge's lean in one plain sentence (the second half of the report's headline)."""
    t, m = s.table, s.mcnemar
    if t.n == 0 or m is None:
        return "no labelled session with a judge verdict: nothing to compare"
    on_pass, on_fail = s.agreement_on_human_pass, s.agreement_on_human_fail
    if on_fail is None:
        return (
            f"only human passes labelled: judge agrees on {_pct(on_pass)} of them; label some fails"
        )
    if on_pass is None:
        return (
            f"only human fails labelled: judge agrees on {_pct(on_fail)} of them; label some passes"
        )
    rates = f"agrees on {_pct(on_pass)} of human passes and {_pct(on_fail)} of human fails"
    test = f"McNemar p={_p(m.p_value)}"
    if m.p_value < 0.05 and m.direction == "lenient":
        return f"lenient: {rates.replace(' and ', ' but ')} ({test})"
    if m.p_value < 0.05 and m.direction == "strict":
        return f"strict: {rates.replace(' and ', ' but ')} ({test})"
    lean = "" if m.direction == "balanced" else f", {m.direction} by count"
    return f"no significant lean ({test}{lean}): {rates}"


def _pct(x: float | None) -> str:
    return pct(x, 0)


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"
