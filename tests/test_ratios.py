"""Ratios (contract section 3): counted yeses over the right denominator, 4 places, None when the
denominator is zero."""

from __future__ import annotations

import pytest

from research_judge.judge.ratios import Ratios, compute_ratios

Pair = tuple[str, bool]


def reference_verdicts(relevant: list[bool], used: list[bool]) -> list[Pair]:
    out: list[Pair] = []
    for is_relevant, is_used in zip(relevant, used, strict=True):
        out += [("relevant", is_relevant), ("used", is_used)]
    return out


def claims(*grounded: bool) -> list[Pair]:
    return [("grounded", g) for g in grounded]


def test_contract_example_arithmetic() -> None:
    # 3 of 4 references relevant, 2 of 4 used, 2 of 3 claims grounded.
    verdicts = reference_verdicts([True, True, True, False], [True, False, True, False])
    ratios = compute_ratios(4, verdicts + claims(True, False, True))
    assert ratios == Ratios(relevance=0.75, utilization=0.5, grounding=0.6667)


def test_to_dict_has_the_three_contract_keys() -> None:
    ratios = compute_ratios(1, reference_verdicts([True], [False]) + claims(True))
    assert ratios.to_dict() == {"relevance": 1.0, "utilization": 0.0, "grounding": 1.0}


@pytest.mark.parametrize(
    ("yes", "total", "expected"),
    [(1, 3, 0.3333), (2, 3, 0.6667), (1, 6, 0.1667), (5, 7, 0.7143), (1, 7, 0.1429), (0, 9, 0.0)],
)
def test_ratios_are_rounded_to_four_places(yes: int, total: int, expected: float) -> None:
    flags = [i < yes for i in range(total)]
    ratios = compute_ratios(total, reference_verdicts(flags, flags) + claims(*flags))
    assert ratios.relevance == ratios.utilization == ratios.grounding == expected


def test_all_no_is_zero_and_all_yes_is_one() -> None:
    none = compute_ratios(2, reference_verdicts([False] * 2, [False] * 2) + claims(False))
    assert none == Ratios(relevance=0.0, utilization=0.0, grounding=0.0)
    every = compute_ratios(2, reference_verdicts([True] * 2, [True] * 2) + claims(True))
    assert every == Ratios(relevance=1.0, utilization=1.0, grounding=1.0)


def test_no_references_makes_relevance_and_utilization_undefined() -> None:
    ratios = compute_ratios(0, claims(True, False))
    assert ratios.relevance is None and ratios.utilization is None
    assert ratios.grounding == 0.5
    assert ratios.to_dict() == {"relevance": None, "utilization": None, "grounding": 0.5}


def test_no_claims_makes_grounding_undefined() -> None:
    ratios = compute_ratios(2, reference_verdicts([True, False], [False, False]))
    assert ratios == Ratios(relevance=0.5, utilization=0.0, grounding=None)


def test_nothing_at_all_is_all_undefined() -> None:
    assert compute_ratios(0, []) == Ratios(relevance=None, utilization=None, grounding=None)


def test_denominator_is_the_trajectory_not_the_verdicts_given() -> None:
    # Only r1 has verdicts, but the trajectory holds four references.
    ratios = compute_ratios(4, reference_verdicts([True], [True]))
    assert ratios.relevance == 0.25 and ratios.utilization == 0.25


def test_claims_do_not_count_toward_reference_ratios() -> None:
    ratios = compute_ratios(2, reference_verdicts([False, False], [False, False]) + claims(True))
    assert ratios.relevance == 0.0 and ratios.utilization == 0.0 and ratios.grounding == 1.0


def test_relevant_and_used_are_counted_separately() -> None:
    ratios = compute_ratios(2, reference_verdicts([True, True], [False, False]))
    assert (ratios.relevance, ratios.utilization) == (1.0, 0.0)
    ratios = compute_ratios(2, reference_verdicts([False, False], [True, True]))
    assert (ratios.relevance, ratios.utilization) == (0.0, 1.0)
