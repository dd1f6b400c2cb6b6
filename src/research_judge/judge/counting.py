"""Run a session's counting calls as planned: one call when it fits, else a split.

The first call fixes the claim list; later calls (run concurrently) are shown their pack and that
list. A call the provider refuses as too long, or whose reply is cut at its allowance, is
re-planned into smaller packs (``Planner.smaller``), never re-asked with the same pack and never
taken for a verdict. A later pack whose re-asks are spent, or that cannot be made to fit, is
recorded as not judged; the first call's failure fails the session, as in a one-call session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from ..clients.base import JudgeRequest
from ..sessions.model import Session
from .packs import Answered, claims_of, merge, parse_pack
from .planning import Claim, FirstPlan, Pack, Piece, Planner
from .verdicts import Verdict, parse_counting

if TYPE_CHECKING:
    from .grader import _Outcome

T = TypeVar("T")
Ask = Callable[..., Awaitable["_Outcome[Any]"]]

MAX_REASONS = 5


@dataclass
class CountingReport:
    """What the counting took and what it could not judge (``context`` in the result)."""

    calls: int = 0
    split: bool = False
    references_judged: int = 0
    not_judged_references: list[str] = field(default_factory=list)
    not_judged_claims: list[Claim] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def note(self, reason: str) -> None:
        if len(self.reasons) < MAX_REASONS and reason not in self.reasons:
            self.reasons.append(reason)


class _Run:
    def __init__(self, session: Session, planner: Planner, ask: Ask, total: _Outcome[Any]) -> None:
        self.session = session
        self.planner = planner
        self.ask = ask
        self.total = total
        self.report = CountingReport()
        self.answered: list[Answered] = []
        self.failed: list[Piece] = []
        self.fatal: _Outcome[Any] | None = None
        self.sample = 0  # `grade --repeats K`: every call of a sample carries its number

    def _request(self, pack: Pack) -> JudgeRequest:
        request = pack.request
        return request if request.sample == self.sample else replace(request, sample=self.sample)

    def _add(self, out: _Outcome[Any]) -> None:
        self.total.absorb(out)
        self.report.calls += out.calls

    async def first(self, pack: Pack) -> tuple[list[Verdict] | None, list[Piece]]:
        """The first call, halved until it fits; returns its verdicts and pieces moved out."""
        ids = pack.ref_ids
        out = await self.ask(
            self._request(pack), lambda text: parse_counting(text, ids), replan=True
        )
        self._add(out)
        if out.value is not None:
            self.answered.append(Answered(pack, out.value))
            return out.value, []
        if not out.replan:
            self.fatal = out
            return None, []
        self.report.split = True
        smaller, unfit, moved = self.planner.smaller(
            self.session, pack, None, cut=out.replan == "cut"
        )
        if not smaller:
            if out.replan == "cut":
                # Nothing left to split: the allowance was too small for the reply.
                out.error = (
                    f"{out.error} (sent with {pack.request.max_output_tokens:,} output tokens, "
                    f"the most --counting-max-tokens ({self.planner.counting_cap:,}) and the "
                    "window allow: raise the cap, or judge with a larger window)"
                )
            self.fatal = out
            return None, []
        self._fail(unfit, out.error or "")
        verdicts, more = await self.first(smaller[0])
        return verdicts, [*more, *moved]

    async def later(self, pack: Pack, claims: list[Claim]) -> None:
        ids = pack.ref_ids
        out = await self.ask(
            self._request(pack), lambda text: parse_pack(text, ids, claims), replan=True
        )
        self._add(out)
        if out.value is not None:
            self.answered.append(Answered(pack, out.value))
            return
        if out.error_kind == "replay_miss":
            self.fatal = out
            return
        if out.replan:
            smaller, unfit, _ = self.planner.smaller(
                self.session, pack, claims, cut=out.replan == "cut"
            )
            self._fail(unfit, out.error or "")
            await asyncio.gather(*(self.later(p, claims) for p in smaller))
            return
        self._fail(list(pack.pieces), out.error or "")

    def _fail(self, pieces: list[Piece], reason: str) -> None:
        if pieces:
            self.failed.extend(pieces)
            self.report.note(reason or "no call could hold it")


async def count(
    session: Session,
    planner: Planner,
    plan: FirstPlan,
    ask: Ask,
    total: _Outcome[Any],
    *,
    sample: int = 0,
) -> CountingReport:
    """Run the plan; ``total`` receives the verdicts (merged when split) or the error, and the
    usage of every call. ``sample``: which ``grade --repeats`` sample this is."""
    run = _Run(session, planner, ask, total)
    run.sample = sample
    first, moved = await run.first(plan.pack)
    if first is None:
        fatal = run.fatal
        assert fatal is not None
        total.error, total.error_kind = fatal.error, fatal.error_kind
        return run.report
    if plan.single and not moved and not run.report.split:
        total.value = first
        run.report.references_judged = len(session.trajectory)
        return run.report
    run.report.split = True
    run._fail(list(plan.unfit), "larger than any call the window allows")
    claims = claims_of(first)
    rest = sorted([*plan.rest, *moved], key=lambda p: (p.index, p.start))
    packs, unfit = planner.later(session, rest, claims)
    run._fail(unfit, "larger than any call the window allows")
    await asyncio.gather(*(run.later(p, claims) for p in packs))
    if run.fatal is not None:
        total.error, total.error_kind = run.fatal.error, run.fatal.error_kind
        return run.report
    merged = merge(session, claims, run.answered, run.failed)
    total.value = merged.verdicts
    run.report.references_judged = merged.references_judged
    run.report.not_judged_references = merged.not_judged_references
    run.report.not_judged_claims = merged.not_judged_claims
    return run.report
