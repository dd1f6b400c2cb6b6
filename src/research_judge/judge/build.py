"""The judge for a set of settings, built in one place for the CLI and the Python API."""

from __future__ import annotations

from pathlib import Path

from ..clients.base import JudgeClient
from ..cost.prices import PriceTable
from ..cost.windows import ModelLimits
from ..errors import ConfigError
from .grader import Judge
from .policy import VerdictPolicy
from .prompts import PromptSet
from .settings import DEFAULT_REPEATS, JudgeSettings


def build_judge(
    client: JudgeClient,
    *,
    prompts: str | Path | None = None,
    policy: VerdictPolicy | None = None,
    settings: JudgeSettings | None = None,
    prices: PriceTable | None = None,
    repeats: int = DEFAULT_REPEATS,
    limits: ModelLimits | None = None,
) -> Judge:
    """A ``Judge`` over ``client``, or a ``RepeatingJudge`` when ``repeats`` is not 1.

    ``limits`` is the judge model's window and output limit (default: the shipped table's).
    """
    if repeats < 1:
        raise ConfigError(f"--repeats must be 1 or more, got {repeats}")
    prompt_set = PromptSet(prompts)
    if repeats != 1:
        from .repeats import RepeatingJudge  # only runs that repeat need it

        return RepeatingJudge(
            client,
            repeats=repeats,
            prompts=prompt_set,
            policy=policy,
            settings=settings,
            prices=prices,
            limits=limits,
        )
    return Judge(
        client, prompts=prompt_set, policy=policy, settings=settings, prices=prices, limits=limits
    )
