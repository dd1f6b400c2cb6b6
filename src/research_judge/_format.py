"""Numbers as every report, summary and progress line shows them; ``n/a`` for an undefined one.

One copy, so a rate reads the same in the terminal, the Markdown and the HTML page.
"""

from __future__ import annotations

NA = "n/a"


def pct(value: float | None, digits: int = 1) -> str:
    """``0.4567`` -> ``45.7%``."""
    return NA if value is None else f"{100 * value:.{digits}f}%"


def num(value: float | None, digits: int = 3, *, signed: bool = False) -> str:
    """``0.4567`` -> ``0.457`` (``+0.457`` when ``signed``)."""
    if value is None:
        return NA
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def usd(value: float) -> str:
    """Four decimals under a dollar (judge calls are cheap), cents above: ``$12.30``."""
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"
