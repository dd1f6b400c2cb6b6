from __future__ import annotations

import json
from pathlib import Path

import pytest

from research_judge.clients.base import Usage
from research_judge.cost.prices import ModelPrice, PriceTable
from research_judge.errors import InputFileError


@pytest.fixture(scope="module")
def shipped() -> PriceTable:
    return PriceTable.load()


def write_prices(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "my-prices.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def test_shipped_table_is_dated_and_covers_the_common_judges(shipped: PriceTable) -> None:
    assert len(shipped.as_of) == 10 and shipped.as_of[4] == "-"
    for model in ("gpt-4o", "gpt-4o-mini", "gpt-4.1-mini", "gpt-5", "claude-sonnet-4-5"):
        assert shipped.price_for(model) is not None, model
    assert shipped.price_for("scripted") == ModelPrice(0.0, 0.0, 0.0)
    # Every shipped cached rate is a discount (or equal), never a surcharge.
    for name, price in shipped.models.items():
        assert 0 <= price.cached_input <= price.input, name


def test_exact_match(shipped: PriceTable) -> None:
    assert shipped.price_for("gpt-4o") == ModelPrice(2.5, 1.25, 10.0)
    # An exact entry beats a prefix: this snapshot had its own, higher price.
    assert shipped.price_for("gpt-4o-2024-05-13") == ModelPrice(5.0, 5.0, 15.0)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # never "gpt-4o", a different model
        ("gpt-4.1-nano-2025-04-14", "gpt-4.1-nano"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("GPT-4o", "gpt-4o"),
    ],
)
def test_snapshot_names_resolve_to_the_model_they_are_a_snapshot_of(
    shipped: PriceTable, model: str, expected: str
) -> None:
    assert shipped.price_for(model) == shipped.models[expected]


@pytest.mark.parametrize(
    "model",
    ["llama-3-8b", "gpt-5-pro", "gpt-4o-audio-preview", "gpt-4", "claude", "", "gpt-4o-20"],
)
def test_unknown_models_have_no_price_and_no_cost(shipped: PriceTable, model: str) -> None:
    assert shipped.price_for(model) is None
    assert shipped.cost(model, Usage(1000, 0, 1000)) is None


def test_cost_bills_cached_tokens_at_the_cached_rate(shipped: PriceTable) -> None:
    # gpt-4o: input 2.50, cached 1.25, output 10.00 USD per million tokens.
    usage = Usage(input_tokens=10_000, cached_input_tokens=4_000, output_tokens=2_000)
    # 6,000 uncached * 2.50 + 4,000 cached * 1.25 + 2,000 output * 10.00 = 15,000 + 5,000 + 20,000
    # = 40,000 per million = 0.04 USD.
    assert shipped.cost("gpt-4o-2024-08-06", usage) == pytest.approx(0.04)
    # Without caching, the same tokens cost 10,000 * 2.50 + 20,000 = 45,000 per million.
    assert shipped.cost("gpt-4o", Usage(10_000, 0, 2_000)) == pytest.approx(0.045)


def test_cost_of_anthropic_usage(shipped: PriceTable) -> None:
    # claude-haiku-4-5: input 1.00, cache read 0.10, output 5.00.
    usage = Usage(input_tokens=1_000_000, cached_input_tokens=500_000, output_tokens=100_000)
    assert shipped.cost("claude-haiku-4-5-20251001", usage) == pytest.approx(0.5 + 0.05 + 0.5)


def test_scripted_judge_is_free_and_zero_usage_is_free(shipped: PriceTable) -> None:
    assert shipped.cost("scripted", Usage(123_456, 1_000, 7_890)) == 0.0
    assert shipped.cost("gpt-5", Usage()) == 0.0


def test_cached_tokens_above_input_are_not_billed_twice(shipped: PriceTable) -> None:
    # input_tokens includes the cached ones, so cached can never exceed it; if a client got that
    # wrong, bill what was reported as input, all at the cached rate, rather than a negative count.
    assert shipped.cost("gpt-4o", Usage(1_000, 5_000, 0)) == pytest.approx(1_000 * 1.25 / 1e6)


def test_user_file_overrides_and_extends_the_shipped_table(tmp_path: Path) -> None:
    path = write_prices(
        tmp_path,
        {
            "as_of": "2030-01-02",
            "source": "our negotiated rates",
            "models": {
                "gpt-4o": {"input": 1.0, "cached_input": 0.5, "output": 4.0},
                "local-llama": {"input": 0.0, "output": 0.0},
                "my-model": {"input": 2.0, "output": 6.0},
            },
        },
    )
    table = PriceTable.load(path)
    assert table.as_of == "2030-01-02"
    assert table.price_for("gpt-4o") == ModelPrice(1.0, 0.5, 4.0)
    assert table.price_for("gpt-4o-2024-08-06") == ModelPrice(1.0, 0.5, 4.0)
    # Missing cached_input defaults to input.
    assert table.price_for("my-model") == ModelPrice(2.0, 2.0, 6.0)
    assert table.cost("local-llama", Usage(50, 0, 50)) == 0.0
    # Shipped entries the user did not mention are kept.
    assert table.price_for("claude-sonnet-4-5") == PriceTable.load().price_for("claude-sonnet-4-5")


def test_user_file_without_a_date_keeps_the_shipped_date(tmp_path: Path) -> None:
    path = write_prices(tmp_path, {"models": {"x": {"input": 1, "output": 1}}})
    assert PriceTable.load(path).as_of == PriceTable.load().as_of


def test_table_cannot_be_changed_after_loading(shipped: PriceTable) -> None:
    with pytest.raises(TypeError):
        shipped.models["gpt-4o"] = ModelPrice(0, 0, 0)  # type: ignore[index]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"models": {"m": {"input": -1, "output": 1}}}, "models.m.input"),
        ({"models": {"m": {"input": 1, "cached_input": -0.1, "output": 1}}}, "cached_input"),
        ({"models": {"m": {"input": 1}}}, "models.m.output"),
        ({"models": {"m": {"input": "cheap", "output": 1}}}, "models.m.input"),
        ({"models": {"m": {"input": 1, "output": 1, "outptu": 2}}}, "models.m.outptu"),
        ({"currency": "EUR", "models": {}}, "currency"),
        ({"as_of": "last week", "models": {}}, "as_of"),
        ({"prices": {}}, "models"),
        ([1, 2], "(top level)"),
    ],
)
def test_bad_price_file_names_the_file_and_the_key(
    tmp_path: Path, content: object, expected: str
) -> None:
    path = write_prices(tmp_path, content)
    with pytest.raises(InputFileError) as caught:
        PriceTable.load(path)
    assert caught.value.path == str(path)
    assert expected in caught.value.message
    assert str(path) in str(caught.value)


def test_price_file_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = write_prices(tmp_path, '{\n  "models": {\n    "m": {"input": 1,, "output": 2}\n  }\n}\n')
    with pytest.raises(InputFileError) as caught:
        PriceTable.load(path)
    assert caught.value.line == 3
    assert f"{path}:3:" in str(caught.value)


def test_missing_price_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputFileError) as caught:
        PriceTable.load(tmp_path / "nope.json")
    assert "nope.json" in str(caught.value)


def test_price_file_that_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"source": "caf\u00e9", "models": {}}'.encode("latin-1"))
    with pytest.raises(InputFileError, match="cannot read price file") as caught:
        PriceTable.load(path)
    assert caught.value.path == str(path)


def test_price_file_may_start_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = write_prices(
        tmp_path, "\ufeff" + json.dumps({"models": {"m": {"input": 1, "output": 2}}})
    )
    assert PriceTable.load(path).price_for("m") == ModelPrice(1.0, 1.0, 2.0)
