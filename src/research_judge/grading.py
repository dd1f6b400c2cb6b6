"""The parts of a grade run the CLI and the Python API assemble alike.

``grade`` is one use case with two doors, ``cli/_grading.py`` and ``api.agrade``. What they must
agree on is built here once: the prices (the baseline judge's are $0, a batch run's are the batch
prices), the judge's window (the narrowest of a jury's, with a notice for each model whose window
is guessed), the client (one chain per juror, or one), and how many samples each call gets (one
per juror, combined like ``--repeats``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from .baseline.setup import limits as baseline_limits
from .baseline.setup import local_client
from .baseline.setup import priced as baseline_priced
from .clients.base import JudgeClient
from .clients.batch import BatchCounters
from .clients.chain import build_client
from .clients.jury import JuryClient, build_jury, parse_juror
from .clients.settings import ClientSettings
from .cost.prices import PriceTable
from .cost.windows import ModelLimits, WindowTable
from .errors import ConfigError

__all__ = ["check_jury", "juror_specs", "open_client", "run_limits", "run_prices", "samples_for"]


def juror_specs(jury: str | Sequence[str] | None) -> list[str]:
    """``"a,b"`` (the flag's form) or ``["a", "b"]`` -> the juror specs, blanks dropped."""
    items = jury.split(",") if isinstance(jury, str) else list(jury or ())
    return [spec.strip() for spec in items if spec.strip()]


def check_jury(jury: Sequence[str], repeats: int) -> None:
    """Refuse a jury asked for with repeats: each juror gives one sample of every call."""
    if jury and repeats != 1:
        raise ConfigError("--jury and --repeats cannot be combined: each juror gives one sample")


def run_prices(table: PriceTable, settings: ClientSettings) -> PriceTable:
    """The prices a run charges: the baseline judge free, batch prices with ``batch``."""
    table = baseline_priced(table, settings)
    return table.for_batch() if settings.batch else table


def run_limits(
    windows: WindowTable,
    settings: ClientSettings,
    jury: Sequence[str],
    context_window: int | None,
) -> tuple[ModelLimits, list[str]]:
    """The judge's window and output limit, and a notice for each model whose window is a guess.

    With a jury every juror is sent the same requests: they are planned for the narrowest window
    and output limit among them."""
    fixed = baseline_limits(settings)
    if fixed is not None:
        return fixed, []  # code has no window to guess: no notice
    models = [settings.model, *(parse_juror(spec, settings.provider)[1] for spec in jury)]
    chosen: ModelLimits | None = None
    notices: list[str] = []
    for model in models:
        limits = windows.limits_for(model, context_window)
        notice = windows.notice(model, limits)
        # A scripted judge (replayed recordings, the demo) has no window to guess: no notice.
        if notice and settings.provider != "scripted":
            notices.append(notice)
        chosen = limits if chosen is None else chosen.narrowest(limits)
    assert chosen is not None
    return chosen, notices


def open_client(
    settings: ClientSettings,
    jury: Sequence[str],
    prompts: str | Path | None,
    on_batch_change: Callable[[BatchCounters], None] | None = None,
) -> JudgeClient:
    """The run's client: one chain built from ``settings``, or with a jury one per juror."""
    if jury and settings.batch:
        raise ConfigError("--jury and --batch cannot be combined yet: choose one")
    if jury:
        return build_jury(settings, jury)
    return build_client(
        settings, on_batch_change=on_batch_change, local=local_client(settings, prompts)
    )


def samples_for(client: JudgeClient, repeats: int) -> int:
    """Samples of every call: a jury gives one per juror, which the repeats machinery combines."""
    return len(client) if isinstance(client, JuryClient) else repeats
