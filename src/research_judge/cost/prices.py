"""What a judge call cost, from a dated price table that ships with the package.

Prices change and we cannot fetch them (no network at run time, and a silent fetch would make
costs irreproducible), so the table carries the date it was written and users can override or
extend it with a file of the same shape. An unknown model costs ``None``, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .._files import read_text
from .._validation import parse_json_file
from ..usage import Usage

TOKENS_PER_UNIT = 1_000_000  # prices are quoted per million tokens

# What may follow a known model name for the name to count as the same model: one dated
# snapshot ("-2024-08-06", "-20250929", Vertex's "@20250929") or a "-latest" alias. Anything
# else ("gpt-5-pro", "gpt-4o-audio-preview") is a different product with a different price.
_SNAPSHOT_SUFFIX = re.compile(r"[-@](\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def snapshot_base(name: str) -> str | None:
    """The model a dated snapshot name stands for ("gpt-4o-2024-08-06" -> "gpt-4o"), else None."""
    snapshot = _SNAPSHOT_SUFFIX.search(name)
    if snapshot is None or snapshot.start() == 0:
        return None
    return name[: snapshot.start()]


class _PriceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Finite: an infinite price once made every cost "$inf" and the results file invalid JSON.
    input: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    # The model's limits, read by ``cost.windows`` (a user file may give them beside a price).
    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    max_input_tokens: int | None = Field(default=None, gt=0)


class _PriceFile(BaseModel):
    """The file format. Everything but ``models`` is optional so a user file can be short."""

    model_config = ConfigDict(extra="forbid")

    as_of: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    # Mixing currencies or units would make every sum wrong, so only one of each is accepted.
    currency: Literal["USD"] = "USD"
    unit: Literal["per_million_tokens"] = "per_million_tokens"
    source: str | None = None  # provenance for the human reading the file; not used in code
    # Batch APIs bill every rate (input, cached input, output) at this share of the standard one.
    batch_multiplier: float | None = Field(default=None, gt=0, le=1)
    models: dict[str, _PriceEntry]


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    cached_input: float
    output: float


DEFAULT_BATCH_MULTIPLIER = 0.5
"""OpenAI's Batch API and Anthropic's Message Batches both bill half the standard rates."""


@dataclass(frozen=True)
class PriceTable:
    as_of: str
    models: Mapping[str, ModelPrice] = field(default_factory=dict)
    batch_multiplier: float = DEFAULT_BATCH_MULTIPLIER
    batch: bool = False  # True for the table ``for_batch`` returns

    def for_batch(self) -> PriceTable:
        """The same table at batch prices: every rate times ``batch_multiplier``."""
        if self.batch:
            return self
        m = self.batch_multiplier
        scaled = {
            name: ModelPrice(p.input * m, p.cached_input * m, p.output * m)
            for name, p in self.models.items()
        }
        return PriceTable(self.as_of, MappingProxyType(scaled), m, batch=True)

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        """The shipped table, with the models of the file at ``path`` (if any) added on top.

        A user entry replaces the shipped entry of the same name; other shipped entries stay.
        ``as_of`` becomes the user file's date when it gives one.
        """
        shipped_ref = resources.files("research_judge") / "data" / "prices.json"
        shipped = _parse(shipped_ref.read_text(encoding="utf-8"), "research_judge/data/prices.json")
        as_of = shipped.as_of or "unknown"
        models = _to_prices(shipped)
        multiplier = shipped.batch_multiplier or DEFAULT_BATCH_MULTIPLIER
        if path is not None:
            user = _parse(read_text(path, "price file"), path)
            models.update(_to_prices(user))
            as_of = user.as_of or as_of
            multiplier = user.batch_multiplier or multiplier
        # Read-only so a table shared by concurrent workers cannot be changed under them.
        return cls(as_of=as_of, models=MappingProxyType(models), batch_multiplier=multiplier)

    def with_price(self, model: str, price: ModelPrice) -> PriceTable:
        """The same table with ``model`` at ``price`` (the baseline judge is free)."""
        models = {**self.models, model.strip().lower(): price}
        return PriceTable(self.as_of, MappingProxyType(models), self.batch_multiplier, self.batch)

    def price_for(self, model: str) -> ModelPrice | None:
        """The exact name's price, else the price of the model it is a dated snapshot of.

        "gpt-4o-2024-08-06" resolves to "gpt-4o" (unless the table lists the snapshot itself);
        "gpt-4o-mini-2024-07-18" to "gpt-4o-mini", never to "gpt-4o". Names with any other
        suffix are unknown: ``None``.
        """
        name = model.strip().lower()
        if name in self.models:
            return self.models[name]
        base = snapshot_base(name)
        return None if base is None else self.models.get(base)

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD for ``usage`` on ``model``; ``None`` when the model is not in the table.

        ``usage.input_tokens`` includes ``usage.cached_input_tokens``: the cached part is billed
        at the cached rate, the rest at the input rate.
        """
        price = self.price_for(model)
        if price is None:
            return None
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        uncached = usage.input_tokens - cached
        total = (
            uncached * price.input
            + cached * price.cached_input
            + usage.output_tokens * price.output
        )
        return total / TOKENS_PER_UNIT


def _parse(text: str, path: str | Path) -> _PriceFile:
    return parse_json_file(text, path, _PriceFile)


def _to_prices(parsed: _PriceFile) -> dict[str, ModelPrice]:
    prices: dict[str, ModelPrice] = {}
    for name, entry in parsed.models.items():
        # A provider without a cached-input discount bills cached tokens as ordinary input.
        cached = entry.cached_input if entry.cached_input is not None else entry.input
        prices[name.strip().lower()] = ModelPrice(entry.input, cached, entry.output)
    return prices
