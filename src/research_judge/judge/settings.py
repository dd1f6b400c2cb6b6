"""How the judge is asked: attempts, temperature, output allowances, evidence strictness.

Apart from the grader and free of heavy imports, so the ``grade`` flags can take their defaults
from here without ``--help`` loading pydantic or Jinja.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError


@dataclass(frozen=True)
class JudgeSettings:
    """How the judge is asked. Every default lives here and only here."""

    max_attempts: int = 3
    strict_evidence: bool = False
    temperature: float | None = 0.0
    counting_max_tokens: int = 8192
    scoring_max_tokens: int = 2048

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"max attempts must be at least 1, got {self.max_attempts}")
        # Here, not in the CLI's parser: the Python API builds these settings too.
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise ConfigError(f"temperature must be within 0..2, got {self.temperature}")
        for flag, value in (
            ("--counting-max-tokens", self.counting_max_tokens),
            ("--scoring-max-tokens", self.scoring_max_tokens),
        ):
            if value < 1:
                raise ConfigError(f"{flag} must be at least 1, got {value}")


MIN_SCORING_TOKENS = 512
"""The least a scoring call is sent with when the window has less room than its cap: three
criteria of a few sentences each (the cost estimate expects about 150 tokens a criterion). A
reply cut there is re-asked, never taken for a verdict."""


DEFAULT_REPEATS = 1
"""Judge samples per call (``grade --repeats``); above 1 a ``RepeatingJudge`` combines them."""
