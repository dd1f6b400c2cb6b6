"""The baseline judge: lexical overlap and surface rules, no model (``--provider baseline``)."""

from __future__ import annotations

from .client import LIMITS, MODEL, PROVIDER, BaselineClient
from .rules import DEFAULT, Thresholds

__all__ = ["DEFAULT", "LIMITS", "MODEL", "PROVIDER", "BaselineClient", "Thresholds"]
