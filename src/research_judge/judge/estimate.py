"""Pre-call token and cost estimates: what ``--dry-run`` prints and ``--max-cost`` reserves.

Input tokens are the rendered requests at about four characters per token (tiktoken cannot load
its encodings offline); output tokens follow the expected reply size per call. A session larger
than the judge's window counts every call it will be split into (``Planner.forecast``). Re-asks and
provider prompt-cache discounts are not included, so real runs usually cost a little less
(cache) or a little more (re-asks) than the estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..clients.base import JudgeRequest
from ..cost.prices import PriceTable
from ..cost.tokens import estimate_output_tokens, estimate_request, guess_claim_count
from ..errors import ConfigError
from ..safety.settings import check_finite
from ..sessions.model import Session
from ..usage import Usage
from .grader import Judge
from .planning import Unplannable
from .verdicts import SCORE_NAMES


@dataclass(frozen=True)
class Estimate:
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    calls: int = 2  # counting calls (more than one when the session is split) plus scoring


class Estimator:
    def __init__(self, judge: Judge, prices: PriceTable | None) -> None:
        self.judge = judge
        self.prices = prices

    def session(
        self, session: Session, requests: tuple[JudgeRequest, JudgeRequest] | None = None
    ) -> Estimate:
        """The estimate for one session; ``requests``: its already rendered first requests."""
        counting, scoring = requests or self.judge.first_requests(session)
        claims = guess_claim_count(session.answer)
        try:
            # A session larger than one call is estimated as the calls it will be split into.
            packs = [
                (p.request, len(p.pieces)) for p in self.judge.planner.forecast(session, counting)
            ]
        except Unplannable:
            packs = [(counting, len(session.trajectory))]  # it will error: one failed call
        k = self.judge.samples_per_call  # each call is sent K times with `grade --repeats K`
        input_tokens = k * (estimate_request(scoring) + sum(estimate_request(r) for r, _ in packs))
        output_tokens = k * (
            estimate_output_tokens("scoring", 0, 0, len(SCORE_NAMES))
            + sum(estimate_output_tokens("counting", shown, claims) for _, shown in packs)
        )
        cost = None
        if self.prices is not None:
            cost = self.prices.cost(self.judge.client.model, Usage(input_tokens, 0, output_tokens))
        return Estimate(input_tokens, output_tokens, cost, calls=k * (len(packs) + 1))


class Budget:
    """Stops new work before spent cost plus reserved estimates would pass ``limit``."""

    def __init__(self, limit: float, estimator: Estimator) -> None:
        check_finite("--max-cost", limit)  # nan once meant "no limit"
        model = estimator.judge.client.model
        if estimator.prices is None or estimator.prices.price_for(model) is None:
            raise ConfigError(
                f"--max-cost needs a price for model {model!r}; add it with --prices FILE"
            )
        self.limit = limit
        self.estimator = estimator
        self.spent = 0.0
        self.reserved = 0.0

    def reserve(
        self, session: Session, requests: tuple[JudgeRequest, JudgeRequest] | None = None
    ) -> float | None:
        """The reserved amount, or None when this session would break the budget."""
        amount = self.estimator.session(session, requests).cost_usd or 0.0
        if self.spent + self.reserved + amount > self.limit:
            return None
        self.reserved += amount
        return amount

    def settle(self, reserved: float, actual: float | None) -> None:
        self.reserved -= reserved
        self.spent += actual or 0.0
