"""The verdict policy: documented defaults, reasons naming every failed rule, undefined ratios
skipped, overrides, and a TOML config whose mistakes name the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from research_judge.errors import ConfigError
from research_judge.judge.policy import VerdictPolicy, load_policy
from research_judge.judge.ratios import Ratios
from research_judge.judge.verdicts import Score

GOOD_RATIOS = Ratios(relevance=1.0, utilization=1.0, grounding=1.0)


def scores(effectiveness: int = 3, fluff: int = 3, structure: int = 3) -> dict[str, Score]:
    values = {"effectiveness": effectiveness, "fluff": fluff, "structure": structure}
    return {name: Score(name, value, "r", "e") for name, value in values.items()}  # type: ignore[arg-type]


def ratios(grounding: float | None = 1.0, relevance: float | None = 1.0) -> Ratios:
    return Ratios(relevance=relevance, utilization=1.0, grounding=grounding)


# --- defaults --------------------------------------------------------------------------------


def test_default_thresholds() -> None:
    assert VerdictPolicy().to_dict() == {
        "min_effectiveness": 2,
        "min_fluff": 2,
        "min_structure": 1,
        "min_grounding": 0.8,
        "min_relevance": None,
        "min_utilization": None,
    }


def test_a_good_session_passes_with_no_reasons() -> None:
    assert VerdictPolicy().decide(GOOD_RATIOS, scores()) == ("pass", [])


def test_defaults_pass_exactly_at_every_floor() -> None:
    at_floor = scores(effectiveness=2, fluff=2, structure=1)
    assert VerdictPolicy().decide(ratios(grounding=0.8), at_floor) == ("pass", [])


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        (scores(effectiveness=1), "effectiveness 1 < 2"),
        (scores(fluff=1), "fluff 1 < 2"),
    ],
)
def test_default_score_rules(given: dict[str, Score], reason: str) -> None:
    assert VerdictPolicy().decide(GOOD_RATIOS, given) == ("fail", [reason])


@pytest.mark.parametrize(
    ("grounding", "reason"),
    [
        (0.5, "grounding 0.50 < 0.80"),
        (0.7999, "grounding 0.7999 < 0.80"),
        (0.0, "grounding 0.00 < 0.80"),
    ],
)
def test_default_grounding_rule(grounding: float, reason: str) -> None:
    assert VerdictPolicy().decide(ratios(grounding=grounding), scores()) == ("fail", [reason])


def test_relevance_and_utilization_do_not_gate_by_default() -> None:
    low = Ratios(relevance=0.0, utilization=0.0, grounding=1.0)
    assert VerdictPolicy().decide(low, scores()) == ("pass", [])


def test_every_failed_rule_is_a_reason_in_order() -> None:
    verdict, reasons = VerdictPolicy().decide(ratios(grounding=0.25), scores(1, 1, 1))
    assert verdict == "fail"
    assert reasons == ["effectiveness 1 < 2", "fluff 1 < 2", "grounding 0.25 < 0.80"]


@pytest.mark.parametrize(
    "undefined",
    [Ratios(), Ratios(relevance=None, utilization=0.95, grounding=None)],
)
def test_undefined_ratios_are_skipped_not_failed(undefined: Ratios) -> None:
    strict = VerdictPolicy(min_grounding=0.9, min_relevance=0.9, min_utilization=0.9)
    assert strict.decide(undefined, scores()) == ("pass", [])


def test_an_undefined_ratio_does_not_hide_a_failing_score() -> None:
    assert VerdictPolicy().decide(Ratios(), scores(effectiveness=1)) == (
        "fail",
        ["effectiveness 1 < 2"],
    )


# --- overrides -------------------------------------------------------------------------------


def test_overrides_replace_only_what_is_given() -> None:
    policy = VerdictPolicy().with_overrides(min_structure=3, min_grounding=None, min_fluff=None)
    assert policy.min_structure == 3
    assert policy.min_grounding == 0.8  # None means "not given", so the default stays
    assert policy.min_fluff == 2
    assert policy.decide(GOOD_RATIOS, scores(structure=2)) == ("fail", ["structure 2 < 3"])


def test_relevance_and_utilization_rules_apply_when_set() -> None:
    policy = VerdictPolicy().with_overrides(min_relevance=0.5, min_utilization=0.5)
    low = Ratios(relevance=0.25, utilization=0.3333, grounding=1.0)
    assert policy.decide(low, scores()) == (
        "fail",
        ["relevance 0.25 < 0.50", "utilization 0.3333 < 0.50"],
    )


def test_overrides_are_validated() -> None:
    with pytest.raises(ConfigError, match="min_fluff"):
        VerdictPolicy().with_overrides(min_fluff=4)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("min_effectiveness", 0),
        ("min_effectiveness", 4),
        ("min_fluff", 2.0),
        ("min_structure", True),
        ("min_structure", "2"),
        ("min_grounding", 1.5),
        ("min_grounding", -0.1),
        ("min_relevance", "0.5"),
        ("min_utilization", True),
        ("min_grounding", float("nan")),
    ],
)
def test_invalid_thresholds_are_config_errors(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=field):
        VerdictPolicy(**{field: value})  # type: ignore[arg-type]


def test_integer_ratio_floors_are_accepted() -> None:
    assert VerdictPolicy(min_grounding=1).decide(ratios(grounding=0.9), scores())[1] == [
        "grounding 0.90 < 1.00"
    ]


# --- TOML config ----------------------------------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "judge.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_config_file_means_defaults() -> None:
    assert load_policy(None) == VerdictPolicy()


def test_valid_config_is_loaded(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "[policy]\nmin_effectiveness = 3\nmin_grounding = 0.6\nmin_relevance = 0.5\n"
        "\n[other]\nignored = true\n",
    )
    policy = load_policy(path)
    assert policy == VerdictPolicy(min_effectiveness=3, min_grounding=0.6, min_relevance=0.5)
    assert policy.min_fluff == 2  # untouched keys keep their defaults


def test_config_without_policy_table_means_defaults(tmp_path: Path) -> None:
    assert load_policy(write(tmp_path, "[judge]\nmodel = 'x'\n")) == VerdictPolicy()


def test_flags_override_the_config_file(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, "[policy]\nmin_fluff = 3\n")).with_overrides(min_fluff=1)
    assert policy.min_fluff == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[policy]\nmin_grondng = 0.5\n", "unknown policy key(s) min_grondng"),
        ("[policy]\nmin_fluff = 'high'\n", "min_fluff must be an integer 1..3"),
        ("[policy]\nmin_fluff = 2.0\n", "min_fluff must be an integer 1..3"),
        ("[policy]\nmin_structure = 5\n", "min_structure must be an integer 1..3"),
        ("[policy]\nmin_grounding = 80\n", "min_grounding must be a number 0..1"),
        ("[policy]\nmin_grounding = true\n", "min_grounding must be a number 0..1"),
        ("[policy]\nmin_grounding = nan\n", "min_grounding must be a number 0..1"),
        ("policy = 3\n", "[policy] must be a table"),
        ("[policy\nmin_fluff = 2\n", "not valid TOML"),
        ("[policy]\nmin_fluff = \n", "not valid TOML"),
    ],
)
def test_config_mistakes_name_the_file(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_missing_config_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "absent.toml"
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    assert str(caught.value).startswith(f"{path}: cannot read config")


def test_config_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b"# caf\xe9\n[policy]\nmin_fluff = 2\n")
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    assert str(caught.value).startswith(f"{path}: ")
