"""The judge for a set of settings, built in one place for the CLI and the Python API."""

from __future__ import annotations

from pathlib import Path

from ..clients.base import JudgeClient
from ..cost.prices import PriceTable
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
) -> Judge:
    """A ``Judge`` over ``client``, or a ``RepeatingJudge`` when ``repeats`` is not 1."""
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
        )
    return Judge(client, prompts=prompt_set, policy=policy, settings=settings, prices=prices)
