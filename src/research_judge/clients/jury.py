"""A jury: several judges (models or providers) answering as the K samples of `grade --repeats`.

``grade --jury SPEC[,SPEC...]`` adds jurors to the ``--provider``/``--model`` judge. Sample i of
every call goes to juror i, as that juror's ordinary single-sample request (sample index 0), so
each juror's cache and recordings are exactly those of a plain run with that model. The
repeats machinery then combines the jurors' verdicts (majority, mean ratios, median scores) and
`research-judge stability` measures how far the jurors agree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from ..errors import ConfigError
from . import PROVIDERS
from .base import JudgeClient, JudgeRequest, JudgeResponse, forward_reply_checked
from .chain import ClientSettings, build_client
from .variant import variant_of


class JuryClient:
    """Routes sample i of each request to juror i; ``model`` names every juror."""

    def __init__(self, jurors: Sequence[JudgeClient]) -> None:
        if len(jurors) < 2:
            raise ConfigError("a jury needs at least 2 jurors")
        self.jurors = list(jurors)
        self.provider = "jury"
        self.model = "+".join(self.names)
        # Each juror's endpoint and mode, when any differs from its provider's defaults.
        variants = [variant_of(j) for j in self.jurors]
        self.variant = "|".join(variants) if any(variants) else ""

    @property
    def names(self) -> list[str]:
        return [f"{j.provider}/{j.model}" for j in self.jurors]

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        if not 0 <= request.sample < len(self.jurors):
            raise ConfigError(f"no juror for sample {request.sample}: the jury has {len(self)}")
        return await self.jurors[request.sample].complete(replace(request, sample=0))

    def reply_checked(self, request: JudgeRequest, response: JudgeResponse, valid: bool) -> None:
        # The juror's own cache stores only what the judge accepted: tell the one that answered.
        if 0 <= request.sample < len(self.jurors):
            juror = self.jurors[request.sample]
            forward_reply_checked(juror, replace(request, sample=0), response, valid)

    def __len__(self) -> int:
        return len(self.jurors)

    async def aclose(self) -> None:
        await asyncio.gather(*(j.aclose() for j in self.jurors))


def parse_juror(spec: str, default_provider: str) -> tuple[str, str]:
    """``provider:model`` or just ``model`` (the ``--provider``'s). A model name may contain
    colons (``llama3:8b``): only a known provider name before the first colon is split off."""
    text = spec.strip()
    head, sep, rest = text.partition(":")
    provider, model = (head, rest) if sep and head in PROVIDERS else (default_provider, text)
    if not model:
        raise ConfigError(f"--jury: no model in {spec!r} (use provider:model or model)")
    return provider, model


def build_jury(settings: ClientSettings, specs: Sequence[str]) -> JuryClient:
    """The ``settings`` judge plus one client chain per juror spec.

    A juror on the same provider shares ``--base-url``; one on another provider reads its own
    environment (OPENAI_BASE_URL / ANTHROPIC_BASE_URL, and its API key).
    """
    members = [(settings.provider, settings.model)]
    members += [parse_juror(s, settings.provider) for s in specs if s.strip()]
    if len(set(members)) != len(members):
        raise ConfigError("--jury: each juror must be a different provider/model")
    clients: list[JudgeClient] = []
    for provider, model in members:
        same = provider == settings.provider
        clients.append(
            build_client(
                replace(
                    settings,
                    provider=provider,
                    model=model,
                    base_url=settings.base_url if same else None,
                    api_key=settings.api_key if same else None,
                    mode=settings.mode if same else None,
                )
            )
        )
    return JuryClient(clients)
