"""The experts' verdicts as pass/fail labels, by two stated rules, and per-claim labels.

ExpertQA has no pass/fail: it has the answer's ``usefulness`` (Useful / Partially useful / Not
useful at all) and, per claim, whether the cited evidence ``support``s it (Complete; Partial or
Incomplete, both meaning part of the claim is supported; Missing; N/A when the expert judged
the sentence needs no support). The rules mirror the default verdict policy (an answer passes
when it does its job, effectiveness >= 2, and at least 80% of its claims are grounded):

- strict: usefulness is "Useful" and at least 80% of the labelled claims are Complete;
- lenient: usefulness is not "Not useful at all" and at least 80% of the labelled claims are at
  least partly supported (Complete, Partial or Incomplete).

Two rules because the line between "partly supported" and "grounded" is exactly where judges
and annotators part (AttributionBench's error analysis): the strict rule asks a judge to be as
demanding as the experts' "Complete", the lenient one only to tell support from its absence.
Claims labelled N/A or left empty are in neither numerator nor denominator; an answer with no
labelled claim is decided by usefulness alone (as the policy skips an undefined ratio).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from validity.expertqa import ExpertClaim, Item

Rule = Literal["strict", "lenient"]
RULES: tuple[Rule, ...] = ("strict", "lenient")
MIN_SUPPORTED = 0.8
_SUPPORTED = {"strict": {"Complete"}, "lenient": {"Complete", "Partial", "Incomplete"}}
_USEFUL = {"strict": {"Useful"}, "lenient": {"Useful", "Partially useful"}}


def claim_label(claim: ExpertClaim, rule: Rule) -> bool | None:
    """Whether the expert found the claim supported under ``rule``; None when unlabelled."""
    if claim.support is None or claim.support == "N/A":
        return None
    return claim.support in _SUPPORTED[rule]


def supported_share(claims: Sequence[ExpertClaim], rule: Rule) -> float | None:
    labels = [x for x in (claim_label(c, rule) for c in claims) if x is not None]
    return sum(labels) / len(labels) if labels else None


def answer_label(item: Item, rule: Rule) -> Literal["pass", "fail"]:
    useful = item.usefulness in _USEFUL[rule]
    share = supported_share(item.claims, rule)
    grounded = share is None or share >= MIN_SUPPORTED
    return "pass" if useful and grounded else "fail"
