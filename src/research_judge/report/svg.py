"""Geometry of the small bar charts drawn as inline SVG in the HTML report.

Only numbers are computed here; the template writes the SVG elements, so every label passes
through the same autoescaping as the rest of the page and no markup is assembled by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_PAD_TOP = 18.0  # room for the value printed above the tallest bar
_PAD_BOTTOM = 20.0  # room for the category labels
_PAD_SIDE = 6.0
_GAP = 0.25  # share of each slot left empty between bars


@dataclass(frozen=True)
class Bar:
    label: str
    value: int
    x: float
    y: float
    width: float
    height: float

    @property
    def center(self) -> float:
        return self.x + self.width / 2


@dataclass(frozen=True)
class BarChart:
    title: str
    width: int
    height: int
    bars: tuple[Bar, ...]
    axis_y: float  # the y of the baseline the bars stand on
    note: str = ""  # e.g. how many values were null and left out of the chart

    @property
    def description(self) -> str:
        """Text equivalent of the chart, for screen readers and for anyone reading the source."""
        parts = ", ".join(f"{b.label}: {b.value}" for b in self.bars)
        return f"{self.title}: {parts}" + (f" ({self.note})" if self.note else "")


def bar_chart(
    title: str,
    items: Sequence[tuple[str, int]],
    *,
    width: int = 240,
    height: int = 140,
    note: str = "",
) -> BarChart:
    """Lay out one bar per (label, count); bars scale to the largest count (zero-height if all
    counts are zero, so an empty chart still shows its categories)."""
    axis_y = height - _PAD_BOTTOM
    plot_height = axis_y - _PAD_TOP
    slot = (width - 2 * _PAD_SIDE) / max(len(items), 1)
    tallest = max((count for _, count in items), default=0)
    bars = []
    for i, (label, count) in enumerate(items):
        bar_height = plot_height * count / tallest if tallest else 0.0
        bars.append(
            Bar(
                label=label,
                value=count,
                x=round(_PAD_SIDE + i * slot + slot * _GAP / 2, 2),
                y=round(axis_y - bar_height, 2),
                width=round(slot * (1 - _GAP), 2),
                height=round(bar_height, 2),
            )
        )
    return BarChart(title, width, height, tuple(bars), axis_y, note)
