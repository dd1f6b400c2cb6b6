"""`grade --repeats K`: K judge samples of every call, one result per session.

A judge at temperature above 0 can answer the same session differently. Sampling each call K
times (each sample its own request, so the cache and recordings keep them apart: see
``JudgeRequest.sample``) shows how stable the verdict is. The session's result then holds:

- ``verdict``: the majority of the samples' verdicts (a tie fails: a verdict the judge cannot
  settle is not a pass);
- ``ratios``: the mean of each ratio over the samples that define it, rounded to 4 places;
- ``scores``: the lower median of each 1-3 score (an actual score for even K as well), with the
  reasoning and evidence of the first sample that gave that score;
- the counting verdicts, evidence summary and verdict reasons of the first sample whose verdict
  matches the majority;
- ``repeats``: K, this aggregation in words, and every sample (verdict, ratios, scores, error).

Errored samples are left out of every aggregate and recorded with their error; a session whose
samples all errored is an error result. Usage and cost add up over all samples.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import replace
from typing import Any

from .._canonical import content_hash
from ..clients.base import JudgeRequest
from ..clients.jury import JuryClient
from ..errors import ConfigError
from ..sessions.model import Session
from .grader import Judge
from .record import Ratios, Repeats, Result, Sample, UsageInfo

AGGREGATION = (
    "verdict: majority of samples (a tie fails); ratios: mean; scores: lower median; "
    "details from the first sample agreeing with the majority"
)


class RepeatingJudge(Judge):
    """A ``Judge`` that grades every session ``repeats`` times and combines the samples."""

    def __init__(self, *args: Any, repeats: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if repeats < 2:
            raise ConfigError(f"--repeats must be 2 or more to sample anything, got {repeats}")
        self.repeats = self.samples_per_call = repeats
        # A different K is a different result: resume must regrade, not reuse.
        self.fingerprint = content_hash({"single": self.fingerprint, "repeats": repeats})

    async def grade(
        self, session: Session, first: tuple[JudgeRequest, JudgeRequest] | None = None
    ) -> Result:
        counting, scoring = first or self.first_requests(session)
        samples = await asyncio.gather(
            *(
                Judge.grade(
                    self, session, (replace(counting, sample=i), replace(scoring, sample=i))
                )
                for i in range(self.repeats)
            )
        )
        jurors = self.client.names if isinstance(self.client, JuryClient) else None
        return combine(list(samples), self.repeats, jurors)


def combine(samples: list[Result], k: int, jurors: list[str] | None = None) -> Result:
    """One result from K sample results of the same session (see the module docstring)."""
    graded = [s for s in samples if s.ok]
    usage = _summed_usage(samples)
    record = Repeats(
        k=k,
        aggregation=AGGREGATION,
        samples=[
            Sample(
                verdict=s.verdict,
                ratios=None if s.ratios is None else s.ratios.model_copy(),
                scores={name: c.score for name, c in (s.scores or {}).items()},
                error=s.error,
                juror=None if jurors is None else jurors[i],
            )
            for i, s in enumerate(samples)
        ],
    )
    if not graded:
        first = samples[0]
        return first.model_copy(
            update={
                "usage": usage,
                "error": f"every one of {k} samples failed; first: {first.error}",
                "repeats": record,
            }
        )
    passes = sum(s.verdict == "pass" for s in graded)
    verdict = "pass" if passes > len(graded) - passes else "fail"
    lead = next(s for s in graded if s.verdict == verdict)

    def mean(name: str) -> float | None:
        values = [v for v in (s.criterion_value(name) for s in graded) if v is not None]
        return round(statistics.fmean(values), 4) if values else None

    scores: dict[str, Any] = {}
    for name, lead_score in (lead.scores or {}).items():
        median = statistics.median_low([s.scores[name].score for s in graded if s.scores])
        source = next(s for s in graded if s.scores and s.scores[name].score == median)
        assert source.scores is not None
        scores[name] = source.scores[name] if median != lead_score.score else lead_score
    return lead.model_copy(
        update={
            "verdict": verdict,
            "ratios": Ratios(
                relevance=mean("relevance"),
                utilization=mean("utilization"),
                grounding=mean("grounding"),
            ),
            "scores": scores,
            "usage": usage,
            "repeats": record,
        }
    )


def _summed_usage(samples: list[Result]) -> UsageInfo:
    total = samples[0].usage.model_copy()
    costs = [s.usage.cost_usd for s in samples]
    counts = ("input_tokens", "cached_input_tokens", "output_tokens", "calls", "cache_hits")
    for s in samples[1:]:
        for field in counts:
            setattr(total, field, getattr(total, field) + getattr(s.usage, field))
    total.cost_usd = None if any(c is None for c in costs) else sum(c for c in costs if c)
    return total
