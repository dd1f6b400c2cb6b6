"""From ratios and scores to pass/fail: a documented, configurable policy.

The default is deliberately strict where the judge is known to be lenient: an answer passes only
if it resolves the question (effectiveness >= 2), is not dominated by padding (fluff >= 2), and
its claims are grounded (grounding >= 0.8, the most reliable number: the judge counted, code
divided). Relevance and utilization describe the research, not the answer, so they do not gate
by default. A rule whose number is undefined (no claims, no references) is skipped, not failed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._toml import read_toml
from ..errors import ConfigError

if TYPE_CHECKING:  # only types: the grade flags read this module's defaults at --help time
    from .record import PassFail, Ratios
    from .verdicts import Score


@dataclass(frozen=True)
class VerdictPolicy:
    min_effectiveness: int = 2
    min_fluff: int = 2
    min_structure: int = 1
    min_grounding: float | None = 0.8
    min_relevance: float | None = None
    min_utilization: float | None = None

    def __post_init__(self) -> None:
        for name in ("min_effectiveness", "min_fluff", "min_structure"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 3:
                raise ConfigError(f"policy {name} must be an integer 1..3, got {value!r}")
        for name in ("min_grounding", "min_relevance", "min_utilization"):
            value = getattr(self, name)
            bad_type = isinstance(value, bool) or not isinstance(value, int | float)
            if value is not None and (bad_type or not 0.0 <= value <= 1.0):
                raise ConfigError(f"policy {name} must be a number 0..1, got {value!r}")

    def decide(self, ratios: Ratios, scores: dict[str, Score]) -> tuple[PassFail, list[str]]:
        """Return ``("pass"|"fail", reasons)``; reasons name every rule that failed."""
        from .verdicts import SCORE_NAMES  # pydantic: loaded when grading, not for --help

        reasons: list[str] = []
        for criterion in SCORE_NAMES:
            minimum: int = getattr(self, f"min_{criterion}")
            got = scores[criterion].score
            if got < minimum:
                reasons.append(f"{criterion} {got} < {minimum}")
        for ratio in ("grounding", "relevance", "utilization"):
            floor: float | None = getattr(self, f"min_{ratio}")
            value: float | None = getattr(ratios, ratio)
            if floor is not None and value is not None and value < floor:
                reasons.append(f"{ratio} {_show(value)} < {_show(floor)}")
        return ("fail" if reasons else "pass"), reasons

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def with_overrides(self, **overrides: Any) -> VerdictPolicy:
        """A copy with every non-None override applied (flags beat the config file)."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


def _show(number: float) -> str:
    """Two decimals at least, four at most: 0.7999 must not print as 0.80 beside a 0.80 floor."""
    text = f"{number:.4f}".rstrip("0")
    return text + "0" * (2 - len(text.partition(".")[2]))


def load_policy(path: str | Path | None) -> VerdictPolicy:
    """Read the ``[policy]`` table of a TOML config file; no file means the defaults."""
    if path is None:
        return VerdictPolicy()
    p = Path(path)
    data = read_toml(p)
    if p.name == "pyproject.toml":  # the config lives under [tool.research-judge] there
        data = data.get("tool", {}).get("research-judge", {})
    table = data.get("policy", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{p}: [policy] must be a table")
    known = {f.name for f in fields(VerdictPolicy)}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(
            f"{p}: unknown policy key(s) {', '.join(unknown)}; known: {sorted(known)}"
        )
    try:
        return VerdictPolicy(**table)
    except ConfigError as exc:
        raise ConfigError(f"{p}: {exc}") from exc
