"""How much one judge call may hold: each model's context window and output limit.

A dated table ships beside the prices (``data/context_windows.json``, with its sources). A user's
``--prices`` file may give ``context_window`` / ``max_output_tokens`` / ``max_input_tokens`` for a
model beside its price, and ``grade --context-window TOKENS`` overrides the window of whatever
model is used. A model known to neither gets the table's default, and the caller is told so
(``ModelLimits.source == "default"``) so it can print a one-line notice.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .._files import read_text
from .._validation import parse_json_file
from ..errors import ConfigError
from .prices import snapshot_base

LimitsSource = Literal["table", "prices file", "flag", "default", "provider"]

_SHIPPED = "research_judge/data/context_windows.json"

MIN_CONTEXT_WINDOW = 2048
"""Below this not even the instructions and one verdict fit: a smaller flag is a mistake."""


@dataclass(frozen=True)
class ModelLimits:
    """Tokens one call may use: ``context_window`` counts prompt plus reply; some models (GPT-5)
    also cap the prompt alone (``max_input_tokens``)."""

    context_window: int
    max_output_tokens: int
    max_input_tokens: int | None = None
    source: LimitsSource = "table"

    def narrowest(self, other: ModelLimits) -> ModelLimits:
        """Limits both models satisfy: the smaller window, output limit and prompt cap."""
        caps = [c for c in (self.max_input_tokens, other.max_input_tokens) if c is not None]
        tighter = self if self.context_window <= other.context_window else other
        return ModelLimits(
            min(self.context_window, other.context_window),
            min(self.max_output_tokens, other.max_output_tokens),
            min(caps) if caps else None,
            tighter.source,
        )

    def describe(self) -> str:
        cap = f", prompt at most {self.max_input_tokens:,}" if self.max_input_tokens else ""
        return (
            f"{self.context_window:,}-token window, {self.max_output_tokens:,} output tokens{cap}"
        )


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore")  # a prices file also holds prices

    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    max_input_tokens: int | None = Field(default=None, gt=0)


class _Table(BaseModel):
    model_config = ConfigDict(extra="ignore")

    as_of: str | None = None
    default: _Entry | None = None
    models: dict[str, _Entry] = Field(default_factory=dict)


@dataclass(frozen=True)
class WindowTable:
    as_of: str
    default: ModelLimits
    models: dict[str, ModelLimits]

    @classmethod
    def load(cls, prices_path: str | Path | None = None) -> WindowTable:
        """The shipped table, with the limits given in the user's prices file (if any) on top."""
        ref = resources.files("research_judge") / "data" / "context_windows.json"
        shipped = _parse(ref.read_text(encoding="utf-8"), _SHIPPED)
        if shipped.default is None or shipped.default.context_window is None:
            raise ConfigError(f"{_SHIPPED} has no default window")
        default = _limits(shipped.default, None, "default")
        assert default is not None
        models = {
            name.strip().lower(): limits
            for name, entry in shipped.models.items()
            if (limits := _limits(entry, None, "table")) is not None
        }
        if prices_path is not None:
            user = _parse(read_text(prices_path, "price file"), prices_path)
            for name, entry in user.models.items():
                key = name.strip().lower()
                limits = _limits(entry, models.get(key), "prices file")
                if limits is not None:
                    models[key] = limits
        return cls(as_of=shipped.as_of or "unknown", default=default, models=models)

    def limits_for(self, model: str, context_window: int | None = None) -> ModelLimits:
        """The limits for ``model``: its entry (or the entry of the model it is a dated snapshot
        of), else the default; ``context_window`` (the flag) replaces the window."""
        name = model.strip().lower()
        base = snapshot_base(name)
        found = self.models.get(name) or (self.models.get(base) if base else None)
        limits = found or self.default
        if context_window is not None:
            if context_window < MIN_CONTEXT_WINDOW:
                raise ConfigError(
                    f"--context-window must be at least {MIN_CONTEXT_WINDOW}, got {context_window}"
                )
            # The output limit cannot be more than the window; an input cap beyond it is moot.
            limits = replace(
                limits,
                context_window=context_window,
                max_output_tokens=min(limits.max_output_tokens, context_window // 2),
                max_input_tokens=None,
                source="flag",
            )
        return limits

    def notice(self, model: str, limits: ModelLimits) -> str | None:
        """The one line to print when ``model`` got the default limits, else None."""
        if limits.source != "default":
            return None
        return (
            f"model {model!r} is not in the context-window table (as of {self.as_of}); assuming a "
            f"{limits.describe()}. Set --context-window TOKENS, or context_window in --prices FILE."
        )


def _limits(entry: _Entry, base: ModelLimits | None, source: LimitsSource) -> ModelLimits | None:
    window = entry.context_window or (base.context_window if base else None)
    output = entry.max_output_tokens or (base.max_output_tokens if base else None)
    if window is None:
        return None  # a prices-file entry that gives no limits leaves the table's alone
    if output is None:
        output = min(8192, window // 2)
    max_input = entry.max_input_tokens or (base.max_input_tokens if base else None)
    return ModelLimits(window, min(output, window), max_input, source)


def _parse(text: str, path: str | Path) -> _Table:
    return parse_json_file(text, path, _Table)
