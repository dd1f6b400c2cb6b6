"""What the judge makes of one session: the ``Result`` and its parts, as a results line holds them.

The judge builds them, so they live with it; the results layer above reads and writes them (one
line per input session, in input order) and re-exports them from ``results.model``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from ..errors import ErrorKind
from . import verdicts

RATIO_NAMES = ("relevance", "utilization", "grounding")
# The citation audit's two ratios (judge/citations.py); reported and compared, not in the policy.
CITATION_NAMES = ("citation_precision", "citation_recall")
SCORE_NAMES: tuple[str, ...] = verdicts.SCORE_NAMES  # the judge's scoring criteria, one list
CRITERIA = RATIO_NAMES + SCORE_NAMES

# A session's verdict (``judge.verdicts.Verdict`` is something else: one call-1 answer).
PassFail = Literal["pass", "fail"]


class _Model(BaseModel):
    # Results files are ours, but extra keys from newer versions must not break old readers.
    model_config = ConfigDict(extra="allow")

    def to_dict(self) -> dict[str, Any]:
        """This object as it is written in a results file."""
        return self.model_dump(mode="json")


# A ratio is a share: NaN, infinity or 7.5 in a results file is damage, named at its line.
Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class Ratios(_Model):
    """The three ratios of contract section 3; None is undefined (a zero denominator)."""

    relevance: Share | None = None
    utilization: Share | None = None
    grounding: Share | None = None


class VerdictRecord(_Model):
    """One validated call-1 verdict as a result keeps it, with what evidence checking found.

    ``claim``, ``source`` and ``claim_verified`` belong to ``grounded`` verdicts only: the other
    checks are written without them.
    """

    id: str
    check: verdicts.Check
    answer: verdicts.Answer
    evidence: str = ""
    evidence_verified: bool | None = None
    claim: str | None = None
    source: str | None = None
    claim_verified: bool | None = None

    @model_serializer(mode="wrap")
    def _claim_fields_on_claims_only(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if self.check != "grounded" and isinstance(data, dict):
            for key in ("claim", "source", "claim_verified"):
                data.pop(key, None)
        return data


class CriterionScore(_Model):
    score: Literal[1, 2, 3]
    reasoning: str = ""
    evidence: str = ""


class PromptRef(_Model):
    name: str
    sha256: str


class JudgeInfo(_Model):
    provider: str
    model: str
    prompts: dict[str, PromptRef] = Field(default_factory=dict)
    fingerprint: str = ""


class UsageInfo(_Model):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float | None = None


class EvidenceSummary(_Model):
    verified: int = 0
    total: int = 0
    share: float | None = None


class NotJudgedClaim(_Model):
    id: str
    claim: str = ""


class ContextInfo(_Model):
    """How big the session's trajectory was and what judging it took (contract section 11)."""

    trajectory_tokens: int = 0
    references: int = 0
    references_judged: int = 0
    largest_reference_tokens: int = 0
    duplicate_references: int = 0
    used_token_share: float | None = None
    counting_calls: int = 0
    split: bool = False
    not_judged_references: list[str] = Field(default_factory=list)
    not_judged_claims: list[NotJudgedClaim] = Field(default_factory=list)
    not_judged_reasons: list[str] = Field(default_factory=list)

    @property
    def not_judged(self) -> int:
        """References plus claims that no call could judge."""
        return len(self.not_judged_references) + len(self.not_judged_claims)


class ClaimCitation(_Model):
    """One claim of the answer: its citations and what the audit made of them."""

    id: str
    status: str  # correct, misattributed, unsupported, fabricated, uncited, ungrounded, unlocated
    cited: list[str | None] = Field(default_factory=list)  # None: points outside the trajectory
    source: str | None = None  # the judge's supporting reference, when grounded


class CitationSummary(_Model):
    """The citation audit of one answer (see ``judge.citations`` for the definitions)."""

    precision: float | None = None
    recall: float | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    citations: int = 0
    fabricated_citations: int = 0
    claims: list[ClaimCitation] = Field(default_factory=list)


class AnswerStats(_Model):
    chars: int = 0
    words: int = 0


class Sample(_Model):
    """One of `grade --repeats K` judge samples of a session, as graded on its own."""

    verdict: PassFail | None = None
    ratios: Ratios | None = None
    scores: dict[str, int] = Field(default_factory=dict)
    error: str | None = None
    juror: str | None = None  # with `grade --jury`: the provider/model that gave this sample


class Repeats(_Model):
    """Every sample of a repeated session, and how the session's own numbers were combined."""

    k: int
    aggregation: str
    samples: list[Sample]


class Result(_Model):
    session_id: str
    ratios: Ratios | None = None
    scores: dict[str, CriterionScore] | None = None
    verdicts: list[VerdictRecord] = Field(default_factory=list)
    verdict: PassFail | None = None
    verdict_reasons: list[str] = Field(default_factory=list)
    error: str | None = None
    error_kind: ErrorKind | None = None
    judge: JudgeInfo | None = None
    usage: UsageInfo = Field(default_factory=UsageInfo)
    evidence: EvidenceSummary = Field(default_factory=EvidenceSummary)
    citations: CitationSummary | None = None  # absent in results written before the audit
    answer_stats: AnswerStats = Field(default_factory=AnswerStats)
    # None in results written before context diagnostics existed.
    context: ContextInfo | None = None
    question: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    repeats: Repeats | None = None  # only with `grade --repeats K`; absent from the line otherwise

    @model_serializer(mode="wrap")
    def _drop_absent_repeats(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and "repeats" in data and data["repeats"] is None:
            del data["repeats"]
        return data

    @property
    def ok(self) -> bool:
        return self.error is None and self.verdict is not None

    def criterion_value(self, name: str) -> float | None:
        """A criterion on one 0..1 scale: ratios as they are, 1-3 scores as (score - 1) / 2."""
        if name in RATIO_NAMES:
            return None if self.ratios is None else getattr(self.ratios, name)
        if name in SCORE_NAMES:
            if self.scores is None or name not in self.scores:
                return None
            return (self.scores[name].score - 1) / 2
        if name in CITATION_NAMES:
            if self.citations is None:
                return None
            if name == "citation_precision":
                return self.citations.precision
            return self.citations.recall
        raise KeyError(name)

    def to_json_line(self) -> str:
        # pydantic's serializer writes the JSON directly (unescaped UTF-8), several times faster
        # than model_dump + json.dumps; the engine calls this once per session.
        return self.model_dump_json() + "\n"
