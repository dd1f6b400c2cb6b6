"""Follow-up counting replies of a split session, and the merge of every call's verdicts.

A follow-up call is shown one pack of references and the claim list the first call fixed; its
reply is the section-2 verdict objects for exactly those references and claims. The merge, in
code (contract section 11):

- a reference's ``relevant`` / ``used`` come from the call that showed it; a reference cut into
  parts is relevant (used) when any part is;
- a claim is grounded when some call says yes; a "yes" whose quote is verified in the named
  source (which must be a reference of that call's pack) is preferred as the one reported. An
  unverified "yes" is treated as one call treats it: counted by default, not under
  ``--strict-evidence``; so a split session's ratios equal the one-call ratios on the same
  verdicts;
- what no call could judge (a pack that failed, a reference that fits nowhere) is reported as
  not judged and left out of the denominators; a claim is not judged when no call said yes and
  some pack was not judged (its source may be there).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from ..errors import InvalidJudgeOutput
from ..sessions.model import Session
from .evidence import EvidenceChecker
from .planning import Claim, Pack, Piece
from .verdicts import REFERENCE_CHECKS, Verdict, WireCounting, _load, _schema_problems


def parse_pack(text: str, reference_ids: Sequence[str], claims: Sequence[Claim]) -> list[Verdict]:
    """Validate a follow-up reply: relevant/used for each reference of the pack, grounded for
    each listed claim (by id), sources from the pack. The claim text is the first call's."""
    try:
        wire = WireCounting.model_validate(_load(text))
    except ValidationError as exc:
        raise InvalidJudgeOutput(_schema_problems(exc)) from exc
    known = set(reference_ids)
    claim_text = {c.id: c.text for c in claims}
    problems: list[str] = []
    pairs = Counter((v.id, v.check) for v in wire.verdicts)
    for (vid, check), count in pairs.items():
        if count > 1:
            problems.append(f"{count} '{check}' verdicts for id {vid!r}; give exactly one")
    out: list[Verdict] = []
    for v in wire.verdicts:
        if v.check in REFERENCE_CHECKS:
            if v.id not in known:
                problems.append(f"'{v.check}' verdict names {v.id!r}, not a reference of this pack")
            out.append(Verdict(v.id, v.check, v.answer == "yes", v.evidence))
            continue
        if v.id not in claim_text:
            problems.append(f"grounded verdict names {v.id!r}, not a listed claim id")
            continue
        if v.source is not None and v.source not in known:
            problems.append(
                f"grounded verdict {v.id!r} names source {v.source!r}, not a reference of this pack"
            )
        if v.answer == "yes" and v.source is None:
            problems.append(f"grounded verdict {v.id!r} is 'yes' but names no source")
        out.append(
            Verdict(v.id, "grounded", v.answer == "yes", v.evidence, claim_text[v.id], v.source)
        )
    for ref_id in reference_ids:
        for check in REFERENCE_CHECKS:
            if (ref_id, check) not in pairs:
                problems.append(f"reference {ref_id!r} has no '{check}' verdict")
    for claim in claims:
        if (claim.id, "grounded") not in pairs:
            problems.append(f"claim {claim.id!r} has no 'grounded' verdict")
    if problems:
        raise InvalidJudgeOutput(problems)
    return out


def claims_of(verdicts: Sequence[Verdict]) -> list[Claim]:
    """The claim list the first call fixed, in its order."""
    return [Claim(v.id, v.claim or "") for v in verdicts if v.check == "grounded"]


@dataclass(frozen=True)
class Answered:
    """One successful counting call: what it was shown and what it said."""

    pack: Pack
    verdicts: list[Verdict]


@dataclass(frozen=True)
class Merged:
    verdicts: list[Verdict]
    references_judged: int
    not_judged_references: list[str]
    not_judged_claims: list[Claim]


def merge(
    session: Session,
    claims: Sequence[Claim],
    answered: Sequence[Answered],
    failed: Sequence[Piece],
) -> Merged:
    checker = EvidenceChecker(session)
    by_ref: dict[tuple[str, str], list[Verdict]] = {}
    by_claim: dict[str, list[Verdict]] = {}
    for call in answered:
        for v in call.verdicts:
            if v.check == "grounded":
                by_claim.setdefault(v.id, []).append(v)
            else:
                by_ref.setdefault((v.id, v.check), []).append(v)
    failed_refs = {p.ref_id for p in failed}

    verdicts: list[Verdict] = []
    not_judged: list[str] = []
    for ref in session.trajectory:
        chosen = [_pick(by_ref.get((ref.id, check), []), checker) for check in REFERENCE_CHECKS]
        complete = all(v is not None for v in chosen)
        # A "no" from the parts that were seen is only an answer when every part was seen.
        if not complete or (ref.id in failed_refs and not all(v and v.answer for v in chosen)):
            not_judged.append(ref.id)
            continue
        verdicts.extend(v for v in chosen if v is not None)

    claims_not_judged: list[Claim] = []
    for claim in claims:
        picked = _pick(by_claim.get(claim.id, []), checker)
        if picked is None or (not picked.answer and failed_refs):
            claims_not_judged.append(claim)
            continue
        verdicts.append(picked)
    return Merged(
        verdicts, len(session.trajectory) - len(not_judged), not_judged, claims_not_judged
    )


def _pick(candidates: Sequence[Verdict], checker: EvidenceChecker) -> Verdict | None:
    """Verified "yes" first, then any "yes", then the first "no"; None when nobody answered."""
    yes = [v for v in candidates if v.answer]
    for v in yes:
        if checker.check(v).evidence_verified:
            return v
    if yes:
        return yes[0]
    return candidates[0] if candidates else None
