"""Grade one session: two judge calls, re-asks on invalid output, ratios, scores, verdict.

Invalid output is the judge's misbehaviour, not a verdict: the judge is told what was wrong and
asked again, up to ``max_attempts`` in all; then the session is recorded with an error and no
verdict, so it stays out of every statistic. Transport failures are retried below this layer
(see ``engine.resilience``) and reach this module only once retries are spent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Generic, TypeVar

from .._canonical import content_hash
from ..clients.base import (
    CallKind,
    JudgeClient,
    JudgeRequest,
    JudgeResponse,
    Message,
    ReplyCheckListener,
    Usage,
)
from ..clients.variant import fingerprint_part
from ..cost.prices import PriceTable
from ..cost.windows import ModelLimits, WindowTable
from ..errors import (
    ApiError,
    ContentRefError,
    ContextLengthError,
    ErrorKind,
    InvalidJudgeOutput,
    JudgeRefusal,
    OutputError,
    OutputTruncated,
    ProviderDownError,
    ReplayMissError,
    ResearchJudgeError,
)
from ..safety import jsonin
from ..sessions.model import Session
from .citations import Claim, audit_citations
from .context import context_info
from .counting import CountingReport, count
from .evidence import CheckedVerdict, EvidenceChecker
from .markers import marker_nonce
from .planning import Planner, Unplannable, reference_variables
from .policy import VerdictPolicy
from .prompts import PromptSet, session_variables
from .record import (
    AnswerStats,
    CriterionScore,
    EvidenceSummary,
    JudgeInfo,
    PromptRef,
    Ratios,
    Result,
    UsageInfo,
    VerdictRecord,
)
from .settings import JudgeSettings

__all__ = ["Judge", "JudgeSettings"]
from .ratios import compute_ratios
from .verdicts import COUNTING_SCHEMA, SCORING_SCHEMA, Score, Verdict, parse_scoring

T = TypeVar("T")


@dataclass
class _Outcome(Generic[T]):
    value: T | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    usage: Usage = field(default_factory=Usage)
    billable: Usage = field(default_factory=Usage)
    calls: int = 0
    cache_hits: int = 0
    # Why the caller must plan this call smaller: "context" (too long for the window) or "cut"
    # (the reply was cut at its allowance); None when it need not.
    replan: str | None = None

    def bill(self, usage: Usage | None) -> None:
        """Count tokens the provider says it spent (only believable figures can be counted)."""
        if usage is not None and usage_problem(usage) is None:
            self.usage += usage
            self.billable += usage

    def absorb(self, other: _Outcome[Any]) -> None:
        """Add the tokens and calls of ``other`` (another call made for the same purpose)."""
        self.usage += other.usage
        self.billable += other.billable
        self.calls += other.calls
        self.cache_hits += other.cache_hits


# More tokens than any one reply can hold: a figure past this is a broken or hostile server.
MAX_TOKENS_PER_CALL = 100_000_000


def usage_problem(usage: Usage) -> str | None:
    """Why a reported usage cannot be believed, or None: every count a non-negative int."""
    for name in ("input_tokens", "cached_input_tokens", "output_tokens"):
        value = getattr(usage, name)
        if type(value) is not int or not 0 <= value <= MAX_TOKENS_PER_CALL:
            return f"the server reported impossible token usage ({name}={value!r})"
    if usage.cached_input_tokens > usage.input_tokens:
        return "the server reported more cached input tokens than input tokens"
    return None


class Judge:
    """Turns a ``Session`` into a ``Result`` using any ``JudgeClient``."""

    samples_per_call = 1  # `grade --repeats K` (judge.repeats.RepeatingJudge) sends K

    def __init__(
        self,
        client: JudgeClient,
        *,
        prompts: PromptSet | None = None,
        policy: VerdictPolicy | None = None,
        settings: JudgeSettings | None = None,
        prices: PriceTable | None = None,
        limits: ModelLimits | None = None,
    ) -> None:
        self.client = client
        self.prompts = prompts or PromptSet()
        self.policy = policy or VerdictPolicy()
        self.settings = settings or JudgeSettings()
        self.prices = prices
        self.reasks = 0  # requests re-sent after an invalid, refused or cut-off reply
        # The response cache (somewhere in the chain) stores only replies that pass validation.
        self._listener = client if isinstance(client, ReplyCheckListener) else None
        # The model's window and output limit (``cost.windows``); every counting call is planned
        # to fit them (``judge.planning``).
        self.limits = limits or WindowTable.load().limits_for(client.model)
        self.planner = Planner(
            self.prompts,
            self.limits,
            counting_max_tokens=self.settings.counting_max_tokens,
            temperature=self.settings.temperature,
        )
        self.prompt_refs = {
            name: {"name": name, "sha256": pair.sha256} for name, pair in self.prompts.calls.items()
        }
        if self.prompts.pack is not None:
            pack = self.prompts.pack
            self.prompt_refs[pack.name] = {"name": pack.name, "sha256": pack.sha256}
        # The re-ask wording shapes replies too, so a change to it must show in every result.
        self.prompt_refs["reask"] = {"name": "reask", "sha256": self.prompts.reask_sha256}
        # Everything that changes what a result would say; resume regrades on any difference.
        self.fingerprint = content_hash(
            {
                "provider": client.provider,
                "model": client.model,
                **fingerprint_part(client),  # another endpoint or --mode regrades on resume
                "prompts": self.prompt_refs,
                "settings": asdict(self.settings),
                "policy": self.policy.to_dict(),
            }
        )

    # --- requests ---------------------------------------------------------------------------

    def first_requests(self, session: Session) -> tuple[JudgeRequest, JudgeRequest]:
        """The two opening requests for a session (also what ``--dry-run`` estimates)."""
        nonce = marker_nonce(session, extra_keys=not self.prompts.shipped)
        references = [reference_variables(ref) for ref in session.trajectory]
        variables = session_variables(session, nonce, references)
        s = self.settings

        def request(
            call: CallKind, schema_name: str, schema: dict[str, Any], limit: int
        ) -> JudgeRequest:
            pair = self.prompts.calls[call]
            return JudgeRequest(
                call=call,
                system=pair.system,
                messages=(Message("user", pair.render_user(**variables)),),
                schema_name=schema_name,
                schema=schema,
                max_output_tokens=limit,
                temperature=s.temperature,
                session_id=session.id,
            )

        return (
            request("counting", "counting_verdicts", COUNTING_SCHEMA, s.counting_max_tokens),
            request("scoring", "criterion_scores", SCORING_SCHEMA, s.scoring_max_tokens),
        )

    # --- grading ------------------------------------------------------------------------------

    async def grade(
        self, session: Session, first: tuple[JudgeRequest, JudgeRequest] | None = None
    ) -> Result:
        """Grade one session; ``first`` is its ``first_requests`` when the caller already
        rendered them (the engine does, to estimate cost under ``--max-cost``)."""
        if session.offloaded:  # never judge a reference by its empty placeholder
            ref = session.offloaded[0]
            why = "not read; pass a store (grade --store ROOT) to read offloaded results"
            message = str(ContentRefError(ref.id, str(ref.content_ref), why))
            return self.error_result(session, message, ErrorKind.CONTENT_REF)
        counting_request, scoring_request = first or self.first_requests(session)
        try:
            scoring_request = self.planner.fit_scoring(scoring_request)
        except Unplannable as exc:
            return self.error_result(session, f"scoring call: {exc}", ErrorKind.CONTEXT)
        try:
            plan = self.planner.first(session, counting_request)
        except Unplannable as exc:
            return self.error_result(session, f"counting call: {exc}", ErrorKind.CONTEXT)
        counted: _Outcome[list[Verdict]] = _Outcome()
        report, scored = await asyncio.gather(
            count(session, self.planner, plan, self._ask, counted, sample=counting_request.sample),
            self._score(scoring_request),
        )
        return self._assemble(session, counted, scored, report)

    async def _score(self, request: JudgeRequest) -> _Outcome[dict[str, Score]]:
        """The scoring call. Refused for a window the provider's error states, it is fitted to
        that window and sent once more, when that means a smaller allowance (a counting call
        is re-planned the same way)."""
        out = await self._ask(request, parse_scoring)
        if out.replan != "context":  # a context refusal always carries its error
            return out
        try:
            fitted = self.planner.fit_scoring(request)
        except Unplannable as exc:
            return _failed(out, f"scoring call: {exc}", ErrorKind.CONTEXT)
        if fitted.max_output_tokens >= request.max_output_tokens:
            return out  # nothing learned: the refusal stands
        again = await self._ask(fitted, parse_scoring)
        again.absorb(out)
        return again

    async def _ask(
        self, request: JudgeRequest, parse: Callable[[str], T], *, replan: bool = False
    ) -> _Outcome[T]:
        """Ask until a reply parses. A request too long for the window returns at once with
        ``replan`` "context"; with ``replan``, so does a reply cut at its allowance ("cut"), for
        the caller to split (else the judge is asked again, more briefly)."""
        out: _Outcome[T] = _Outcome()
        problems: list[str] = []
        for attempt in range(self.settings.max_attempts):
            self.reasks += attempt > 0
            try:
                response = await self.client.complete(request)
            except OutputTruncated as exc:
                out.calls += 1
                out.bill(exc.usage)  # a cut reply is paid for all the same
                if replan:
                    out.replan = "cut"
                    return _failed(out, f"{request.call} call: {exc}", ErrorKind.CONTEXT)
                problems = [f"the reply was cut off ({exc}); answer more briefly"]
                request = _with_feedback(request, None, self.prompts.render_reask(problems))
                continue
            except ContextLengthError as exc:
                out.bill(exc.usage)
                # A window the error states teaches the planner, for this call and every later
                # one (of this session and the next), whichever call was refused.
                self.planner.learn_window(str(exc))
                # Said even when not asked: the scoring call, which cannot be split, re-fits.
                # Whichever call it is, the session did not fit the window (kind ``context``,
                # which a resume does not re-send as it does a transient ``api`` error).
                out.replan = "context"
                return _failed(out, f"{request.call} call: {exc}", ErrorKind.CONTEXT)
            except JudgeRefusal as exc:
                out.calls += 1
                out.bill(exc.usage)  # a cut reply is paid for all the same
                problems = [f"the reply was refused or cut off ({exc}); answer more briefly"]
                request = _with_feedback(request, None, self.prompts.render_reask(problems))
                continue
            except ReplayMissError as exc:
                return _failed(out, f"{request.call} call: {exc}", ErrorKind.REPLAY_MISS)
            except (ProviderDownError, OutputError):
                raise  # the whole run stops; this session stays ungraded, not errored
            except ApiError as exc:
                out.bill(exc.usage)
                return _failed(out, f"{request.call} call: API error: {exc}", ErrorKind.API)
            except ResearchJudgeError as exc:
                return _failed(out, f"{request.call} call: {exc}", ErrorKind.CLIENT)
            out.calls += 1
            if (problem := usage_problem(response.usage)) is not None:
                # Negative usage would offset real spend against --max-cost: the reply is not
                # believed, and the same question is asked again.
                self._checked(request, response, valid=False)
                problems = [problem]
                continue
            if response.cached:
                out.usage += response.usage
                out.cache_hits += 1
            else:
                out.bill(response.usage)
            try:
                out.value = parse(response.content)
                self._checked(request, response, valid=True)
                return out
            except InvalidJudgeOutput as exc:
                self._checked(request, response, valid=False)
                problems = exc.problems
                feedback = self.prompts.render_reask(problems)
                request = _with_feedback(request, response.content, feedback)
        summary = "; ".join(problems[:5])
        return _failed(
            out,
            f"{request.call} call: invalid judge output after {out.calls} attempts: {summary}",
            ErrorKind.JUDGE_OUTPUT,
        )

    def _checked(self, request: JudgeRequest, response: JudgeResponse, *, valid: bool) -> None:
        if self._listener is not None:
            self._listener.reply_checked(request, response, valid)

    def _assemble(
        self,
        session: Session,
        counted: _Outcome[list[Verdict]],
        scored: _Outcome[dict[str, Score]],
        report: CountingReport | None = None,
    ) -> Result:
        usage = counted.usage + scored.usage
        billable = counted.billable + scored.billable
        cost: float | None = None
        if billable == Usage():
            cost = 0.0  # every reply came from a recording or the cache: nothing was spent
        elif self.prices is not None:
            cost = self.prices.cost(self.client.model, billable)
        usage_info = UsageInfo(
            input_tokens=usage.input_tokens,
            cached_input_tokens=usage.cached_input_tokens,
            output_tokens=usage.output_tokens,
            calls=counted.calls + scored.calls,
            cache_hits=counted.cache_hits + scored.cache_hits,
            cost_usd=cost,
        )
        if counted.value is None or scored.value is None:
            failed = counted if counted.value is None else scored
            errors = [o.error for o in (counted, scored) if o.error]
            return self.error_result(
                session,
                " | ".join(errors),
                failed.error_kind or ErrorKind.CLIENT,
                usage_info,
                report,
            )
        judged = report.references_judged if report is not None else len(session.trajectory)

        checker = EvidenceChecker(session)
        checked = [checker.check(v) for v in counted.value]
        strict = self.settings.strict_evidence
        # References and claims no call could judge are not in the verdicts, nor the denominators.
        answers = [(c.verdict.check, _counts_as_yes(c, strict)) for c in checked]
        ratios = compute_ratios(judged, answers)
        verdict, reasons = self.policy.decide(ratios, scored.value)
        audit = audit_citations(
            session,
            [
                Claim(v.id, v.claim or "", yes, v.source if yes else None)
                for c in checked
                if (v := c.verdict).check == "grounded"
                for yes in [_counts_as_yes(c, strict)]
            ],
        )
        quotes = [c.evidence_verified for c in checked] + [
            c.claim_verified for c in checked if c.claim_verified is not None
        ]
        verified = sum(quotes)
        return self._result(
            session,
            usage_info,
            ratios=ratios,
            scores={
                name: CriterionScore(score=s.score, reasoning=s.reasoning, evidence=s.evidence)
                for name, s in scored.value.items()
            },
            verdicts=[_verdict_record(c) for c in checked],
            verdict=verdict,
            verdict_reasons=reasons,
            citations=audit.summary(),
            evidence=EvidenceSummary(
                verified=verified,
                total=len(quotes),
                share=round(verified / len(quotes), 4) if quotes else None,
            ),
            context=context_info(session, report, counted.value),
        )

    def error_result(
        self,
        session: Session,
        error: str,
        kind: ErrorKind,
        usage: UsageInfo | None = None,
        report: CountingReport | None = None,
    ) -> Result:
        """A session this judge could not grade: no verdict, every ratio undefined (the ratios
        object is still there, so readers of ``ratios.relevance`` never meet a null object)."""
        return self._result(
            session,
            usage or UsageInfo(),
            ratios=Ratios(),
            error=error,
            error_kind=kind,
            context=context_info(session, report, None),
        )

    def _result(self, session: Session, usage: UsageInfo, **outcome: Any) -> Result:
        """A result with what every result of this judge carries, graded or not."""
        return Result(
            session_id=session.id,
            judge=JudgeInfo(
                provider=self.client.provider,
                model=self.client.model,
                prompts={k: PromptRef(**ref) for k, ref in self.prompt_refs.items()},
                fingerprint=self.fingerprint,
            ),
            usage=usage,
            answer_stats=AnswerStats(chars=len(session.answer), words=len(session.answer.split())),
            question=session.question,
            metadata=session.metadata,
            **outcome,
        )


def _failed(out: _Outcome[T], message: str, kind: ErrorKind) -> _Outcome[T]:
    out.error, out.error_kind = message, kind
    return out


def _with_feedback(request: JudgeRequest, bad_reply: str | None, feedback: str) -> JudgeRequest:
    """The same conversation plus the rejected reply and what was wrong with it.

    The rejected reply is echoed only up to ``max_output_tokens`` characters (about a quarter of
    the output budget in tokens), so a re-ask never grows by a whole reply's worth: a rambling
    reply must not push the next request out of the model's window. The problems found are
    always sent in full.
    """
    if bad_reply is not None and len(bad_reply) > request.max_output_tokens:
        kept = bad_reply[: request.max_output_tokens]
        bad_reply = f"{kept}\n[... {len(bad_reply) - len(kept)} more characters not repeated]"
    # A lone surrogate in the bad reply could not be sent back or hashed: shown as "?".
    extra = (Message("assistant", jsonin.printable(bad_reply)),) if bad_reply is not None else ()
    return replace(request, messages=(*request.messages, *extra, Message("user", feedback)))


def _counts_as_yes(checked: CheckedVerdict, strict: bool) -> bool:
    # Strict mode: a "yes" whose quote cannot be found is not believed.
    yes = checked.verdict.answer
    if strict and yes:
        return checked.evidence_verified and checked.claim_verified is not False
    return yes


def _verdict_record(checked: CheckedVerdict) -> VerdictRecord:
    v = checked.verdict
    claim = v.check == "grounded"  # only claims carry claim, source and claim_verified
    return VerdictRecord(
        id=v.id,
        check=v.check,
        answer="yes" if v.answer else "no",
        evidence=v.evidence,
        evidence_verified=checked.evidence_verified,
        claim=v.claim if claim else None,
        source=v.source if claim else None,
        claim_verified=checked.claim_verified if claim else None,
    )
