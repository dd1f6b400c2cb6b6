"""Context diagnostics of one session (``context`` in every result): how much the agent pulled
into its context, how much of it the answer used, and what the counting took.

Token figures are ``cost.tokens.estimate_tokens`` (about four characters a token), the same
forecast used everywhere else; they describe the trajectory, not a bill.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..cost.tokens import estimate_tokens
from ..sessions.model import Reference, Session
from .record import ContextInfo, NotJudgedClaim
from .verdicts import Verdict

if TYPE_CHECKING:
    from .counting import CountingReport


def reference_tokens(ref: Reference) -> int:
    """Estimated tokens one reference put into the agent's context (title, url and content)."""
    return (
        estimate_tokens(ref.content)
        + estimate_tokens(ref.title or "")
        + estimate_tokens(ref.url or "")
    )


def duplicate_references(session: Session) -> int:
    """References whose url, or whose (non-empty) content, repeats an earlier reference's: the
    same page pulled twice."""
    urls: set[str] = set()
    contents: set[str] = set()
    duplicates = 0
    for ref in session.trajectory:
        url = (ref.url or "").strip()
        repeated = (url and url in urls) or (ref.content and ref.content in contents)
        duplicates += bool(repeated)
        if url:
            urls.add(url)
        if ref.content:
            contents.add(ref.content)
    return duplicates


def context_info(
    session: Session, report: CountingReport | None, verdicts: Sequence[Verdict] | None
) -> ContextInfo:
    sizes = {ref.id: reference_tokens(ref) for ref in session.trajectory}
    total = sum(sizes.values())
    share: float | None = None
    if verdicts is not None and total:
        used = {v.id for v in verdicts if v.check == "used" and v.answer}
        share = round(sum(sizes[i] for i in used if i in sizes) / total, 4)
    judged = 0
    if verdicts is not None:
        judged = report.references_judged if report is not None else len(session.trajectory)
    return ContextInfo(
        trajectory_tokens=total,
        references=len(session.trajectory),
        references_judged=judged,
        largest_reference_tokens=max(sizes.values(), default=0),
        duplicate_references=duplicate_references(session),
        used_token_share=share,
        counting_calls=report.calls if report is not None else 0,
        split=bool(report and report.split),
        not_judged_references=list(report.not_judged_references) if report else [],
        not_judged_claims=[
            NotJudgedClaim(id=c.id, claim=c.text)
            for c in (report.not_judged_claims if report else [])
        ],
        not_judged_reasons=list(report.reasons) if report else [],
    )
