"""The report's first screen: the daily answer to "did this run get worse than the baseline?".

Read from the ``Comparison`` by the rule ``compare`` gates on by default
(``compare.model.FAIL_RULE``): a session that regressed, or a drop past the threshold the paired
test finds significant, is worse; a drop within noise with no session flipping is a warning. Each
metric gets its delta and the noise verdict in words, so a reader need not interpret p-values.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._format import num, pct
from ..compare import Comparison, MetricDelta
from ..compare.model import JUDGE_CHANGED

# How each metric's move reads, worst first.
SIGNIFICANT_DROP = "significant drop"
NOISE_DROP = "drop within noise"
SMALL_DROP = "down, under the threshold"
UP = "up"
SAME = "no change"
UNDEFINED = "n/a"


@dataclass(frozen=True)
class MetricLine:
    metric: str
    baseline: float | None
    current: float | None
    delta: float | None
    p_value: float | None
    verdict: str  # one of the names above
    failing: bool  # what makes compare's default gate fail


@dataclass(frozen=True)
class DailyAnswer:
    worse: bool  # compare's default gate fails on it (judge change aside: said in ``sentence``)
    sentence: str
    pass_rate_change: str  # "was 70.0%, +5.0 points"; "" when either side is undefined
    metrics: tuple[MetricLine, ...]
    regressed: tuple[str, ...]
    fixed: tuple[str, ...]


def daily_answer(cmp: Comparison) -> DailyAnswer:
    lines = tuple(_line(cmp, m) for m in cmp.metrics)
    failing = [m for m in lines if m.failing]
    noise = [m.metric for m in lines if m.verdict == NOISE_DROP]
    n_reg = len(cmp.regressions)
    parts: list[str] = []
    if n_reg:
        noun = "session" if n_reg == 1 else "sessions"
        parts.append(f"{n_reg} {noun} regressed (passed in the baseline, fail now)")
    if failing:
        parts.append(f"significant drop in {', '.join(m.metric for m in failing)}")
    worse = bool(parts)
    if worse:
        sentence = "Worse than the baseline: " + "; ".join(parts) + "."
    else:
        sentence = (
            "Not worse than the baseline: no session regressed and no metric dropped significantly."
        )
    if noise:
        sentence += f" Within noise (a warning, not a failure): {', '.join(noise)} dropped."
    if cmp.fixed:
        sentence += f" Fixed: {len(cmp.fixed)} session{'s' if len(cmp.fixed) != 1 else ''}."
    if cmp.judge_changed:
        sentence += f" But the {JUDGE_CHANGED}."
    rate = cmp.pass_rate
    shown = ""
    if rate.baseline is not None and rate.delta is not None:
        shown = f"was {pct(rate.baseline)}, {100 * rate.delta:+.1f} points"
    return DailyAnswer(worse, sentence, shown, lines, tuple(cmp.regressions), tuple(cmp.fixed))


def _line(cmp: Comparison, m: MetricDelta) -> MetricLine:
    flag = cmp.flag_for(m.metric)
    delta = m.delta
    if delta is None:
        verdict = UNDEFINED
    elif flag is not None:
        verdict = SIGNIFICANT_DROP if flag.test.significant is True else NOISE_DROP
    elif round(delta, 9) < 0:
        verdict = SMALL_DROP
    elif round(delta, 9) > 0:
        verdict = UP
    else:
        verdict = SAME
    failing = verdict == SIGNIFICANT_DROP
    return MetricLine(m.metric, m.baseline, m.current, delta, m.test.p_value, verdict, failing)


def metric_text(line: MetricLine) -> str:
    """``structure 0.925 -> 0.850 (-0.075, drop within noise, p = 0.375)``."""
    p = "" if line.p_value is None else f", p = {line.p_value:.3g}"
    return (
        f"{line.metric} {num(line.baseline)} -> {num(line.current)} "
        f"({num(line.delta, signed=True)}, {line.verdict}{p})"
    )
