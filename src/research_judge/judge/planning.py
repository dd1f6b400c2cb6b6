"""Fitting counting calls into the judge's window: packs of references, parts of big ones.

Every request is planned so that its prompt plus its output allowance fit the model's window,
less a margin. Prompt sizes use ``cost.tokens.planning_tokens``, a count that errs on the large
side; the margin covers what a count cannot see (the provider's own message framing).

Output allowances. ``JudgeSettings.counting_max_tokens`` and ``scoring_max_tokens`` are caps: no
request asks for more. A call is sent with its cap when the window has room for it (so a session
that fits keeps the request ``Judge.first_requests`` built: same prompt, same cache key), else
with the room left. A counting call is planned so that the largest reply its verdicts could need
fits, the claims' verdicts (which every call repeats, so no split makes them smaller) at their
expected size; when even one reference (or none) needs more than the cap or the room, that
call cannot be split further and is sent with what is left, down to the reply's expected size
(``cost.tokens.estimate_output_tokens``). The scoring call cannot be split: it goes with what is
left down to ``MIN_SCORING_TOKENS``. Below those a session is an error of kind ``context`` that
says what window it would need; it is never sent. A reply cut at its allowance is re-asked or
re-planned, never taken for a verdict.

A larger session is split:
references, in trajectory order, are packed into as few calls as fit; the first call (the
standard counting prompt) fixes the claim list, later calls (``prompts/counting_pack.*``) are
shown a pack plus that list. A reference too big for any call is cut into parts, at whitespace,
that each fit: nothing is truncated, and the parts together are the whole text.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..clients.base import JudgeRequest, Message
from ..clients.text_limits import TEXT_LIMITS
from ..cost.tokens import (
    REPLY_ENVELOPE_TOKENS,
    estimate_output_tokens,
    guess_claim_count,
    planning_request_tokens,
    planning_tokens,
)
from ..cost.windows import MIN_CONTEXT_WINDOW, ModelLimits
from ..errors import ResearchJudgeError
from ..sessions.model import Reference, Session
from .markers import marker_nonce
from .prompts import PromptPair, PromptSet, session_variables
from .settings import MIN_SCORING_TOKENS
from .verdicts import COUNTING_SCHEMA, SCORE_NAMES

QUOTE_CHARS = 300
"""The longest quote the counting prompts allow ("Keep each quote under 300 characters");
the output allowance assumes every quote (and every copied claim) is this long."""

MARGIN_SHARE = 0.03
MARGIN_TOKENS = 512
"""Kept free in every call: 3% of the window plus 512 tokens, for the provider's own framing."""

MIN_PART_TOKENS = 256
"""A part smaller than this is not worth a call: when even that does not fit, the reference is
recorded as not judged instead."""

_ENVELOPE_TOKENS = 16


def _verdict_tokens(claim: bool) -> int:
    """Planning tokens of one verdict object at its largest: every quote ``QUOTE_CHARS`` long."""
    quote = "x" * QUOTE_CHARS
    obj = {
        "id": "c1000" if claim else "r-reference-id",
        "check": "grounded" if claim else "relevant",
        "answer": "yes",
        "evidence": quote,
        "claim": quote if claim else None,
        "source": "r-reference-id" if claim else None,
    }
    return planning_tokens(json.dumps(obj, indent=1)) + 2


REFERENCE_VERDICT_TOKENS = _verdict_tokens(claim=False)
CLAIM_VERDICT_TOKENS = _verdict_tokens(claim=True)


def _scoring_reply_tokens() -> int:
    """Planning tokens of a scoring reply at its largest: every criterion's reasoning and
    evidence as long as the schema's ``maxLength`` allows (``clients.text_limits``)."""
    score = {
        "criterion": max(SCORE_NAMES, key=len),
        "reasoning": "x" * TEXT_LIMITS["reasoning"],
        "evidence": "x" * TEXT_LIMITS["evidence"],
        "score": 3,
    }
    reply = {"scores": [score] * len(SCORE_NAMES)}
    return planning_tokens(json.dumps(reply, indent=1)) + _ENVELOPE_TOKENS


SCORING_REPLY_TOKENS = _scoring_reply_tokens()
"""What a full scoring reply needs (about 1,300 tokens); the default cap (2,048) covers it."""


class Unplannable(ResearchJudgeError):
    """A request that cannot fit the window whatever the split (question and answer alone are
    too big, or the claim list leaves no room for a verdict)."""


# The copied claim inside a claim verdict at its longest; replaced by the claim's real length
# once the claim list is known.
_CLAIM_COPY_TOKENS = planning_tokens(json.dumps("x" * QUOTE_CHARS))


def output_allowance(references: int, claim_tokens: int) -> int:
    """Output tokens a counting reply may need: two verdicts per reference shown, each with a
    quote as long as the prompt allows, plus ``claim_tokens`` for the claims' verdicts."""
    return _ENVELOPE_TOKENS + 2 * REFERENCE_VERDICT_TOKENS * references + claim_tokens


def claim_tokens(claims: Sequence[Claim]) -> int:
    """Output tokens for one grounded verdict per listed claim: a quote as long as allowed, and
    the claim copied (its real length)."""
    per_claim = CLAIM_VERDICT_TOKENS - _CLAIM_COPY_TOKENS
    return sum(per_claim + planning_tokens(json.dumps(c.text)) for c in claims)


def guessed_claim_tokens(answer: str) -> int:
    """``claim_tokens`` before the judge has listed the claims: ``claims_guess`` verdicts, whose
    copied claims together cannot be much longer than the answer they are copied from."""
    n = claims_guess(answer)
    copied = min(n * _CLAIM_COPY_TOKENS, planning_tokens(json.dumps(answer)) + 2 * n)
    return n * (CLAIM_VERDICT_TOKENS - _CLAIM_COPY_TOKENS) + copied


def claims_guess(answer: str) -> int:
    """Claims expected before the judge has listed them: the answer's sentences, plus half again
    (a sentence often carries two facts) so the first call's allowance errs large."""
    sentences = guess_claim_count(answer)
    return sentences + (sentences + 1) // 2


def reference_variables(ref: Reference) -> dict[str, Any]:
    """A reference as the templates see it: every key, plus ``tool_call`` (None when no tool
    is named), so a template can show what the agent asked for without testing for extras."""
    return {**ref.model_dump(), "tool_call": ref.tool_call}


@dataclass(frozen=True)
class Piece:
    """A reference, or the part ``[start, end)`` of its content, as shown in one call."""

    index: int  # position in the trajectory
    ref_id: str
    start: int
    end: int
    total: int  # length of the whole content

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end == self.total

    def variables(self, ref: Reference) -> dict[str, Any]:
        """What the templates see: the reference itself, or the part with its range in the title
        (so the judge knows it reads a part); with ``tool_call``, the call that pulled it."""
        data = reference_variables(ref)
        if self.whole:
            return data
        label = f"[characters {self.start + 1:,}-{self.end:,} of {self.total:,}]"
        data["title"] = f"{ref.title} {label}" if ref.title else label
        data["content"] = ref.content[self.start : self.end]
        return data


@dataclass(frozen=True)
class Claim:
    id: str
    text: str


@dataclass(frozen=True)
class Pack:
    """One planned counting call: its pieces and its request. ``first`` fixes the claim list."""

    pieces: tuple[Piece, ...]
    request: JudgeRequest
    first: bool

    @property
    def ref_ids(self) -> list[str]:
        return [p.ref_id for p in self.pieces]


@dataclass(frozen=True)
class FirstPlan:
    """The first counting call and the pieces left for later calls (none when one call fits)."""

    pack: Pack
    rest: tuple[Piece, ...]
    unfit: tuple[Piece, ...] = ()

    @property
    def single(self) -> bool:
        return not self.rest and not self.unfit


class Planner:
    """Plans one session's counting calls for one model's limits."""

    def __init__(
        self,
        prompts: PromptSet,
        limits: ModelLimits,
        *,
        counting_max_tokens: int,
        temperature: float | None,
    ) -> None:
        self.prompts = prompts
        self.limits = limits
        self.counting_cap = counting_max_tokens
        self.temperature = temperature
        self._set_limits(limits)

    def _set_limits(self, limits: ModelLimits) -> None:
        self.limits = limits
        self.budget = limits.context_window - _margin(limits.context_window)
        self.input_cap = (
            limits.max_input_tokens - MARGIN_TOKENS if limits.max_input_tokens else None
        )
        # The most a counting call may ask for: the user's cap or the model's limit.
        self.output_cap = min(self.counting_cap, limits.max_output_tokens)

    def learn_window(self, error: str) -> bool:
        """Adopt the window a provider's context-length error states, when it is smaller than
        the one planned with (a local server started with a smaller context than the model's),
        so later calls and sessions are planned to fit instead of each being refused first."""
        stated = window_in(error)
        # The floor ``--context-window`` has: a smaller figure is more likely a misread number
        # than a window, and not even the instructions would fit in it.
        if stated is None or stated >= self.limits.context_window or stated < MIN_CONTEXT_WINDOW:
            return False
        self._set_limits(
            replace(
                self.limits,
                context_window=stated,
                max_output_tokens=min(self.limits.max_output_tokens, stated // 2),
                source="provider",
            )
        )
        return True

    # --- fitting ------------------------------------------------------------------------------

    def fits(self, prompt_tokens: int, need: int, *, least: int | None = None) -> int | None:
        """The output allowance to send with a counting prompt of ``prompt_tokens`` whose reply
        may need ``need`` tokens, or None when the two do not fit together.

        The allowance is the cap (``output_cap``), or the room the window leaves when that is
        less. ``least``: the call cannot be made smaller by packing (one reference or part, or
        none); it may then go with less than its worst-case need, down to ``least`` (or the cap,
        if smaller), since real quotes are rarely as long as allowed; a reply cut anyway is
        re-planned or reported, never taken for a verdict."""
        wanted = need if least is None else min(need, least, self.output_cap)
        return self._allowance(prompt_tokens, self.output_cap, wanted)

    def _allowance(self, prompt_tokens: int, cap: int, wanted: int) -> int | None:
        """``cap``, or the room the window leaves beside the prompt when that is less; None when
        the prompt is over the input limit or that room is under ``wanted`` (at least 1)."""
        if self.input_cap is not None and prompt_tokens > self.input_cap:
            return None
        allowance = min(cap, self.budget - prompt_tokens)
        return allowance if allowance >= max(wanted, 1) else None

    def fit_scoring(self, request: JudgeRequest) -> JudgeRequest:
        """The scoring request with an allowance that fits the window: its cap (the request is
        returned unchanged) or the room left, down to ``MIN_SCORING_TOKENS``; ``Unplannable``
        below that."""
        prompt = planning_request_tokens(request)
        cap = min(request.max_output_tokens, self.limits.max_output_tokens)
        least = min(MIN_SCORING_TOKENS, cap)
        allowance = self._allowance(prompt, cap, least)
        if allowance is None:
            raise Unplannable(self._too_big(prompt, least))
        if allowance == request.max_output_tokens:
            return request
        return replace(request, max_output_tokens=allowance)

    def _too_big(self, prompt: int, least: int) -> str:
        """Why a call cannot fit, with the window it would need."""
        limits = self.limits
        if self.input_cap is not None and prompt > self.input_cap:
            return (
                f"the question and answer alone make a prompt of about {prompt:,} tokens, over "
                f"the judge's prompt limit ({limits.describe()})"
            )
        return (
            f"the question and answer alone do not fit the judge's window "
            f"({limits.describe()}): it needs a window of about {window_for(prompt + least):,} "
            f"tokens (a prompt of about {prompt:,} and a reply of at least {least:,})"
        )

    # --- the first call ----------------------------------------------------------------------

    def first(self, session: Session, request: JudgeRequest) -> FirstPlan:
        """Plan the first counting call; ``request`` is the one-call request of the session."""
        claims = self._claim_load(session, None)
        refs = len(session.trajectory)
        allowance = self.fits(
            planning_request_tokens(request),
            output_allowance(refs, claims),
            least=self._least(session, refs, None) if self._unsplittable(refs, claims) else None,
        )
        pieces = [_whole(i, ref) for i, ref in enumerate(session.trajectory)]
        if allowance is not None:
            if allowance != request.max_output_tokens:
                request = replace(request, max_output_tokens=allowance)
            return FirstPlan(Pack(tuple(pieces), request, first=True), ())
        packs, unfit = self._pack(session, pieces, None, claims)
        if not packs:
            # Nothing fits beside the answer: send the question and answer alone, so the claim
            # list still gets fixed, and record every reference as not judged.
            empty = self._request(session, (), None, claims)
            if empty is None:
                prompt = planning_request_tokens(self._unsized(session, (), None))
                least = min(self._least(session, 0, None), self.output_cap)
                raise Unplannable(self._too_big(prompt, least))
            return FirstPlan(Pack((), empty, first=True), (), tuple(unfit))
        # Everything not in the first pack (including pieces that fit no first call: a later
        # call is planned again, and says what still fits nowhere).
        head = packs[0]
        return FirstPlan(head, tuple(_pieces_after(session, head.pieces)))

    # --- the later calls ---------------------------------------------------------------------

    def later(
        self, session: Session, pieces: Sequence[Piece], claims: Sequence[Claim]
    ) -> tuple[list[Pack], list[Piece]]:
        """Packs for ``pieces`` once the claim list is fixed, and the pieces that fit nowhere."""
        if not pieces:
            return [], []
        self.prompts.require_pack(session.id)
        return self._pack(session, list(pieces), tuple(claims), self._claim_load(session, claims))

    def smaller(
        self, session: Session, pack: Pack, claims: Sequence[Claim] | None, *, cut: bool = False
    ) -> tuple[list[Pack], list[Piece], list[Piece]]:
        """Re-plan a pack the provider refused or whose reply was cut. After a refusal that
        taught the planner a smaller window (``learn_window``), the same pack with the allowance
        that window leaves, when that is smaller than the one refused. Otherwise its pieces in
        two halves (a lone piece cut in two), each half packed again under the current limits
        (which a provider's error may have just lowered). Returns the packs to send, the pieces
        that fit no call, and, for a first call, the pieces moved out of it to the later calls
        (its first half keeps the first role). ``cut``: the reply was cut at its allowance; a
        lone piece's reply (two verdicts and the claims') does not shrink with its text, so it
        is not cut up: it fits no call."""
        claim_load = self._claim_load(session, claims)
        fixed = None if claims is None else tuple(claims)
        if not cut:
            # Refused for the window: if the provider's error taught a smaller one, the same
            # call with a smaller allowance may now fit, as later calls planned for it do.
            # Only a strictly smaller allowance, so a refusal that taught nothing cannot loop.
            again = self._request(session, pack.pieces, fixed, claim_load)
            if again is not None and again.max_output_tokens < pack.request.max_output_tokens:
                return [replace(pack, request=again)], [], []
        pieces = list(pack.pieces)
        if cut and self._unsplittable(2, claim_load):
            return [], pieces, []  # the claims' verdicts alone fill the cap: halves would too
        if len(pieces) > 1:
            halves = [pieces[: len(pieces) // 2], pieces[len(pieces) // 2 :]]
        elif pieces and not cut and pieces[0].end - pieces[0].start >= 2 * MIN_PART_TOKENS:
            halves = [[half] for half in _halve(session, pieces[0])]
        else:
            return [], pieces, []
        if pack.first:
            packs, unfit = self._pack(session, halves[0], None, claim_load)
            if not packs:
                return [], unfit, [p for g in halves[1:] for p in g]
            head = packs[0]
            moved = [*_minus(halves[0], [*head.pieces, *unfit]), *halves[1]]
            return [head], unfit, moved
        out: list[Pack] = []
        unfit_all: list[Piece] = []
        for half in halves:
            packs, unfit = self._pack(session, half, fixed or (), claim_load)
            out.extend(packs)
            unfit_all.extend(unfit)
        return out, unfit_all, []

    def forecast(self, session: Session, request: JudgeRequest) -> list[Pack]:
        """Every counting call a session is expected to take, before any is sent (for
        ``--dry-run`` and ``--max-cost``): the first call as planned, later calls planned with
        the answer's sentences standing in for the claim list the first call will fix."""
        plan = self.first(session, request)
        if plan.single:
            return [plan.pack]
        guessed = [
            Claim(f"c{i}", sentence) for i, sentence in enumerate(_sentences(session.answer), 1)
        ]
        later, _ = self.later(session, plan.rest, guessed)
        return [plan.pack, *later]

    # --- internals ---------------------------------------------------------------------------

    def _pack(
        self,
        session: Session,
        pieces: list[Piece],
        claims: tuple[Claim, ...] | None,
        claim_load: int,
    ) -> tuple[list[Pack], list[Piece]]:
        """Greedy packing in trajectory order; ``claims`` None plans first-call packs."""
        pair = self._pair(claims, session.id)
        base_text = self._render(pair, session, (), claims)
        fixed = planning_tokens(base_text) + self._frame_tokens(pair)
        costs: dict[Piece, int] = {}

        def cost(piece: Piece) -> int:
            if piece not in costs:
                text = self._render(pair, session, (piece,), claims)
                costs[piece] = planning_tokens(text) - planning_tokens(base_text) + 2
            return costs[piece]

        # Cut every piece too big for a call of its own into parts that fit beside the output a
        # lone piece may be sent with (all of its need up to the cap, ``fits``). When no part of
        # a useful size fits beside that, a lone piece goes with less, down to its least.
        lone_allowance = min(output_allowance(1, claim_load), self.output_cap)
        lone_least = min(lone_allowance, self._least(session, 1, claims))
        fitted: list[Piece] = []
        unfit: list[Piece] = []
        for piece in pieces:
            ref = session.trajectory[piece.index]
            overhead = cost(piece) - planning_tokens(ref.content[piece.start : piece.end])
            for allowance in (lone_allowance, lone_least):
                room_one = self.budget - fixed - allowance
                if self.input_cap is not None:
                    room_one = min(room_one, self.input_cap - fixed)
                if cost(piece) <= room_one:
                    fitted.append(piece)
                    break
                target = room_one - overhead - 16
                if target >= MIN_PART_TOKENS:
                    fitted.extend(_split(ref, piece, target))
                    break
            else:
                unfit.append(piece)

        packs: list[Pack] = []
        group: list[Piece] = []
        used = 0

        def close() -> None:
            nonlocal group, used
            if group:
                done, dropped = self._finish(session, group, claims, claim_load)
                packs.extend(done)
                unfit.extend(dropped)
            group, used = [], 0

        for piece in fitted:
            if claims is None and packs:
                break  # only the first pack is a first call; the rest wait for the claim list
            c = cost(piece)
            n = len(group) + 1
            need = output_allowance(n, claim_load)
            over = bool(group) and (
                fixed + used + c + need > self.budget
                or (need > self.output_cap and not self._unsplittable(n, claim_load))
                or (self.input_cap is not None and fixed + used + c > self.input_cap)
                or any(p.ref_id == piece.ref_id for p in group)
            )
            if over:
                close()
            group.append(piece)
            used += c
        if not (claims is None and packs):
            close()
        return packs[:1] if claims is None else packs, unfit

    def _finish(
        self,
        session: Session,
        group: list[Piece],
        claims: tuple[Claim, ...] | None,
        claim_load: int,
    ) -> tuple[list[Pack], list[Piece]]:
        """Render a planned group; if the real render is over (the per-piece sums are close but
        not exact), move pieces out one at a time. Also returns pieces that fit no call."""
        out: list[Pack] = []
        dropped: list[Piece] = []
        pending = list(group)
        while pending:
            take = len(pending)
            while take > 0:
                request = self._request(session, pending[:take], claims, claim_load)
                if request is not None:
                    out.append(Pack(tuple(pending[:take]), request, first=claims is None))
                    break
                take -= 1
            if take == 0:  # a lone piece that does not fit after all: it is not judged
                dropped.append(pending[0])
                pending = pending[1:]
                continue
            pending = pending[take:]
        return out, dropped

    def _request(
        self,
        session: Session,
        pieces: Sequence[Piece],
        claims: tuple[Claim, ...] | None,
        claim_load: int,
    ) -> JudgeRequest | None:
        request = self._unsized(session, pieces, claims)
        unsplittable = self._unsplittable(len(pieces), claim_load)
        allowance = self.fits(
            planning_request_tokens(request),
            output_allowance(len(pieces), claim_load),
            least=self._least(session, len(pieces), claims) if unsplittable else None,
        )
        if allowance is None:
            return None
        return replace(request, max_output_tokens=allowance)

    def _unsized(
        self, session: Session, pieces: Sequence[Piece], claims: tuple[Claim, ...] | None
    ) -> JudgeRequest:
        """The counting request showing ``pieces``, its allowance not yet planned."""
        pair = self._pair(claims, session.id)
        text = self._render(pair, session, tuple(pieces), claims)
        return JudgeRequest(
            call="counting",
            system=pair.system,
            messages=(Message("user", text),),
            schema_name="counting_verdicts",
            schema=COUNTING_SCHEMA,
            max_output_tokens=self.counting_cap,
            temperature=self.temperature,
            session_id=session.id,
        )

    def _unsplittable(self, references: int, claim_load: int) -> bool:
        """Whether splitting a call's references cannot bring its reply under the output cap:
        a call of one reference (or none), or claims whose verdicts alone (in every call) are
        over the cap. Such a call goes with what is left, down to its expected size (``fits``'
        ``least``), rather than as many calls each over the cap."""
        return references <= 1 or output_allowance(0, claim_load) > self.output_cap

    def _claim_load(self, session: Session, claims: Sequence[Claim] | None) -> int:
        """The output a counting call reserves for its claims' verdicts. Every call carries a
        verdict for every claim, so splitting the references across calls cannot shrink this
        part of the reply, only repeat it: it is planned at its expected size, and the largest
        size is kept for what a split does spread, the references' verdicts. (Planned at the
        claims' largest size, a long answer beside two short references went as two calls,
        each repeating every claim.)"""
        largest = guessed_claim_tokens(session.answer) if claims is None else claim_tokens(claims)
        expected = self._least(session, 0, claims) - REPLY_ENVELOPE_TOKENS
        return min(largest, expected)

    @staticmethod
    def _least(session: Session, references: int, claims: Sequence[Claim] | None) -> int:
        """The expected size of a counting reply (the cost estimate's): the least a call that
        cannot be split further is sent with. Before the claim list is fixed, the answer's
        sentences stand in for its claims."""
        n_claims = guess_claim_count(session.answer) if claims is None else len(claims)
        return estimate_output_tokens("counting", references, n_claims)

    def _pair(self, claims: tuple[Claim, ...] | None, session_id: str) -> PromptPair:
        if claims is None:
            return self.prompts.calls["counting"]
        return self.prompts.require_pack(session_id)

    def _frame_tokens(self, pair: PromptPair) -> int:
        # System prompt, message framing and the schema: what every request of ``pair`` carries.
        probe = JudgeRequest(
            call="counting",
            system=pair.system,
            messages=(Message("user", ""),),
            schema_name="counting_verdicts",
            schema=COUNTING_SCHEMA,
        )
        return planning_request_tokens(probe)

    def _render(
        self,
        pair: PromptPair,
        session: Session,
        pieces: tuple[Piece, ...],
        claims: tuple[Claim, ...] | None,
    ) -> str:
        nonce = marker_nonce(session, extra_keys=not self.prompts.shipped)
        references = [p.variables(session.trajectory[p.index]) for p in pieces]
        variables = session_variables(session, nonce, references)
        if claims is not None:
            # Claim text is the judge's copy of the answer; it must not be able to close a marker.
            variables["claims"] = [
                {"id": c.id, "text": " ".join(c.text.replace(nonce, "").split())} for c in claims
            ]
        return pair.render_user(**variables)


# How providers state the window in a context-length error: OpenAI and vLLM "maximum context
# length is 128000 tokens", Anthropic "prompt is too long: 208310 tokens > 200000 maximum" and
# "... exceed context limit: 188240 + 21333 > 200000".
_STATED_WINDOW = (
    re.compile(r"maximum context length is ([\d,]+) tokens"),
    re.compile(r"> ([\d,]+) maximum"),
    re.compile(r"context limit: [\d,]+ \+ [\d,]+ > ([\d,]+)"),
)


def _margin(window: int) -> int:
    return math.ceil(window * MARGIN_SHARE + MARGIN_TOKENS)


def window_for(tokens: int) -> int:
    """The smallest window whose budget (less the margin) holds ``tokens``."""
    window = math.ceil((tokens + MARGIN_TOKENS) / (1 - MARGIN_SHARE))
    while window - _margin(window) < tokens:
        window += 1
    return window


def window_in(error: str) -> int | None:
    """The window a context-length error message states, if it states one."""
    for pattern in _STATED_WINDOW:
        found = pattern.search(error)
        if found:
            return int(found.group(1).replace(",", ""))
    return None


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+|\n", text) if part.strip()]


def _whole(index: int, ref: Reference) -> Piece:
    return Piece(index, ref.id, 0, len(ref.content), len(ref.content))


def _pieces_after(session: Session, shown: Sequence[Piece]) -> list[Piece]:
    """Every piece of the trajectory not in ``shown``, whole where a reference was not touched
    and as its remaining range where a part of it was shown."""
    shown_ranges: dict[str, list[tuple[int, int]]] = {}
    for p in shown:
        shown_ranges.setdefault(p.ref_id, []).append((p.start, p.end))
    out: list[Piece] = []
    for index, ref in enumerate(session.trajectory):
        ranges = sorted(shown_ranges.get(ref.id, []))
        if not ranges:
            out.append(_whole(index, ref))
            continue
        position = 0
        for start, end in [*ranges, (len(ref.content), len(ref.content))]:
            if start > position:
                out.append(Piece(index, ref.id, position, start, len(ref.content)))
            position = max(position, end)
    return out


def _minus(pieces: Sequence[Piece], taken: Sequence[Piece]) -> list[Piece]:
    """What is left of ``pieces`` once the ranges of ``taken`` (pieces or parts of them) are
    removed, as pieces in order."""
    out: list[Piece] = []
    for piece in pieces:
        ranges = sorted(
            (t.start, t.end)
            for t in taken
            if t.ref_id == piece.ref_id and t.start < piece.end and t.end > piece.start
        )
        position = piece.start
        for start, end in [*ranges, (piece.end, piece.end)]:
            if start > position:
                out.append(Piece(piece.index, piece.ref_id, position, start, piece.total))
            position = max(position, end)
    return out


def _split(ref: Reference, piece: Piece, target_tokens: int) -> list[Piece]:
    """Cut ``piece`` into consecutive parts of at most ``target_tokens`` planning tokens each,
    preferably at whitespace; the parts cover the piece exactly."""
    content = ref.content
    parts: list[Piece] = []
    position = piece.start
    while position < piece.end:
        end = min(piece.end, position + target_tokens * 3)
        while planning_tokens(content[position:end]) > target_tokens and end > position + 1:
            # Non-ASCII text counts more per character: shrink in proportion, then re-check.
            over = planning_tokens(content[position:end])
            end = position + max(1, (end - position) * target_tokens // over)
        if end < piece.end:
            # Cut where the text breaks, within the last fifth of the part: after a paragraph,
            # else a line, else a sentence, else a space (only then mid-word).
            floor = position + (end - position) * 4 // 5
            for breaker in ("\n\n", "\n", ". ", " "):
                cut = content.rfind(breaker, floor, end - len(breaker) + 1)
                if cut > position:
                    end = cut + len(breaker)
                    break
        parts.append(Piece(piece.index, piece.ref_id, position, end, piece.total))
        position = end
    return parts


def _halve(session: Session, piece: Piece) -> list[Piece]:
    ref = session.trajectory[piece.index]
    half = max(MIN_PART_TOKENS, planning_tokens(ref.content[piece.start : piece.end]) // 2 + 1)
    return _split(ref, piece, half)
