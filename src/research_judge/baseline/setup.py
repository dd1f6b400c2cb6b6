"""What a grade run needs to use the baseline judge: its client, its price and its limits."""

from __future__ import annotations

from pathlib import Path

from ..clients.base import JudgeClient
from ..clients.settings import BASELINE, ClientSettings
from ..cost.prices import ModelPrice, PriceTable
from ..cost.windows import ModelLimits
from ..judge.prompts import PromptSet
from .client import LIMITS, BaselineClient

FREE = ModelPrice(0.0, 0.0, 0.0)


def local_client(settings: ClientSettings, prompts: str | Path | None) -> JudgeClient | None:
    """The baseline judge for ``settings`` (reading the prompts folder the judge renders with),
    or None when the settings name another judge or replay recordings."""
    if settings.provider != BASELINE or settings.replay is not None:
        return None
    return BaselineClient(PromptSet(prompts), model=settings.model)


def priced(prices: PriceTable, settings: ClientSettings) -> PriceTable:
    """``prices`` with the baseline judge at $0 when it is the judge."""
    return prices.with_price(settings.model, FREE) if settings.provider == BASELINE else prices


def limits(settings: ClientSettings) -> ModelLimits | None:
    """The baseline judge's limits (no window: one counting call per session), else None."""
    return LIMITS if settings.provider == BASELINE else None
