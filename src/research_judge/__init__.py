"""research-judge: grade research-agent sessions with an LLM judge you can trust.

The public API is what ``__all__`` names; every other module is private.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
