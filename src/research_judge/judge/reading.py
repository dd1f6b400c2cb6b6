"""Read a judge request's session material back out of its rendered prompt.

A judge that is code rather than a model (the baseline judge) needs what a model would read:
the question, the answer and the references a request shows. It gets them from the request
itself, through the prompt templates that rendered it, never from the wording of those
templates: whatever ``--prompts`` folder is in use, the template is rendered once more with
placeholder values, which shows where each session text sits relative to the marker lines.

Two facts make this exact. Every line holding the request's nonce is a marker line, because no
session text may contain the nonce (``judge.markers``); so the n-th marker line of the request
is the n-th marker line of the placeholder rendering, and the text between two of them is the
same template text around different values. And the reading is checked: the template is
rendered once more with the values read, and that must give the request's text exactly, or the
request is refused with ``UnreadableRequest`` (a template that prints the session in a way this
reading cannot invert, e.g. a reference's extra keys). A conversation's earlier turns have marker
lines of their own, like references: their number is found by trying 0, 1, 2 ... turns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

from ..clients.base import JudgeRequest
from ..errors import ResearchJudgeError
from .markers import NONCE_LENGTH
from .prompts import PromptPair, PromptSet


class UnreadableRequest(ResearchJudgeError):
    """The request's prompt could not be read back into session material."""


@dataclass(frozen=True)
class ShownReference:
    id: str
    content: str
    title: str | None = None
    url: str | None = None
    tool_call: str | None = None  # the call that pulled it, as the shipped templates show it

    def variables(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "content_ref": None,
            "title": self.title,
            "url": self.url,
            "tool_call": self.tool_call,
            "excerpts": [],
        }


@dataclass(frozen=True)
class ShownSession:
    """What one request shows of its session. ``claims`` is the claim list a follow-up counting
    call fixes (None when the judge is to find the claims)."""

    call: str
    question: str
    answer: str
    references: tuple[ShownReference, ...]
    claims: tuple[tuple[str, str], ...] | None


ClaimsFor = Callable[[str], Sequence[tuple[str, str]]]
"""Given the answer, the claim list a follow-up counting call was shown (its caller fixed it)."""

_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use characters delimit placeholders


def _slot(name: str) -> str:
    return f"{_OPEN}{name}{_CLOSE}"


_NONCE = _slot("nonce")
_Layout = list[tuple[str, str]]  # ("text", literal) or ("slot", name)


class RequestReader:
    """Reads requests rendered from one ``PromptSet``."""

    def __init__(self, prompts: PromptSet) -> None:
        self.prompts = prompts
        self._skeletons: dict[tuple[str, int, tuple[bool, bool, bool] | None, int], str] = {}

    def read(self, request: JudgeRequest, claims_for: ClaimsFor | None = None) -> ShownSession:
        """The session material ``request`` shows. A follow-up counting call (the prompt lists
        fixed claims) needs ``claims_for`` to name the claims it lists."""
        try:
            return self._read(request, claims_for)
        except UnreadableRequest:
            raise
        except ResearchJudgeError as exc:  # a template that needs more than the reading has
            raise UnreadableRequest(
                f"{_who(request)}: the prompt could not be read back exactly ({exc}); "
                "templates that print more of a reference than its id, title, url, tool call "
                "and content are not readable"
            ) from None

    def _read(self, request: JudgeRequest, claims_for: ClaimsFor | None) -> ShownSession:
        pair, pack = self._pair(request)
        if not request.messages or request.messages[0].role != "user":
            raise UnreadableRequest(f"{_who(request)}: the request has no session message")
        text = request.messages[0].content
        nonce = self._nonce(pair, text, request)
        markers = _count(text, nonce)
        # The earlier turns of a conversation come with marker lines of their own, as the
        # references do: try 0, 1, 2 ... turns while the template still has room for them.
        failure = UnreadableRequest(
            f"{_who(request)}: the prompt's marker lines do not match its template"
        )
        before = -1
        for turns in range(markers + 1):
            base = _count(self._skeleton(pair, 0, None, turns), _NONCE)
            if base > markers or base == before:
                break  # too many turns, or a template that shows no conversation
            before = base
            try:
                return self._read_turns(request, pair, pack, text, nonce, turns, claims_for)
            except UnreadableRequest as exc:
                failure = exc
        raise failure

    def _read_turns(
        self,
        request: JudgeRequest,
        pair: PromptPair,
        pack: bool,
        text: str,
        nonce: str,
        turns: int,
        claims_for: ClaimsFor | None,
    ) -> ShownSession:
        markers = _count(text, nonce)
        base = _count(self._skeleton(pair, 0, None, turns), _NONCE)
        per_reference = _count(self._skeleton(pair, 1, None, turns), _NONCE) - base
        k = 0
        if request.call == "counting":
            extra = markers - base
            if per_reference <= 0 or extra < 0 or extra % per_reference:
                raise UnreadableRequest(
                    f"{_who(request)}: the prompt's marker lines do not match its template"
                )
            k = extra // per_reference
        values: dict[str, str] = {"nonce": nonce}
        # Each optional one-line field shown or not (tool call, title, url): fewest first.
        fields: list[tuple[bool, bool, bool]] = sorted(
            ((tool, title, url) for tool, title, url in product((False, True), repeat=3)),
            key=sum,
        )
        variants = [self._skeleton(pair, k, f, turns) for f in fields]
        segments = _segments(text, nonce)
        plain = _segments(variants[0], _NONCE)
        if len(segments) != len(plain):
            raise UnreadableRequest(f"{_who(request)}: the prompt's markers do not match")
        # Marker lines first (odd places): the ids they hold are exact, and known values are
        # then literal text in the runs between them (the list of ids in a sentence, say).
        order = [*range(1, len(segments), 2), *range(0, len(segments), 2)]
        for index in order:
            segment = segments[index]
            if _OPEN not in plain[index]:
                continue
            found = None
            # Fewest optional fields first, so a reference's content is read whole; a title or
            # url is one line, so a reading that puts a line break in one is a last resort.
            for variant in variants:
                layout = _layout(_segments(variant, _NONCE)[index])
                candidate = _match(segment, layout, values)
                if candidate is None:
                    continue
                found = found or candidate
                if not any(
                    "\n" in v for k, v in candidate.items() if k[:3] in ("tit", "url", "too")
                ):
                    found = candidate
                    break
            if found is None:
                raise UnreadableRequest(
                    f"{_who(request)}: part {index + 1} of the prompt does not match its template"
                )
            for name, value in found.items():
                if values.setdefault(name, value) != value:
                    raise UnreadableRequest(f"{_who(request)}: {name} is shown two ways")
        shown = self._shown(request, values, k, pack, claims_for)
        try:
            earlier = [(values[f"turnq{j}"], values[f"turna{j}"]) for j in range(turns)]
        except KeyError:
            raise UnreadableRequest(f"{_who(request)}: its earlier turns are not shown") from None
        if self._render(pair, shown, nonce, earlier) != text:
            raise UnreadableRequest(
                f"{_who(request)}: the prompt could not be read back exactly (templates that "
                "print more of a reference than its id, title, url, tool call and content are not "
                "readable)"
            )
        return shown

    def _pair(self, request: JudgeRequest) -> tuple[PromptPair, bool]:
        if request.call == "scoring":
            return self.prompts.calls["scoring"], False
        counting = self.prompts.calls["counting"]
        if request.system == counting.system:
            return counting, False
        pack = self.prompts.pack
        if pack is not None and request.system == pack.system:
            return pack, True
        raise UnreadableRequest(
            f"{_who(request)}: its instructions are not those of the prompts folder in use "
            f"({self.prompts.directory})"
        )

    @staticmethod
    def _nonce(pair: PromptPair, text: str, request: JudgeRequest) -> str:
        skeleton = pair.render_user(**_placeholders(0, None, claims=0))
        first = skeleton.find(_OPEN)
        if first < 0 or not skeleton.startswith(_NONCE, first):
            raise UnreadableRequest(
                f"{_who(request)}: its template shows session text before the marker nonce"
            )
        head = skeleton[:first]
        nonce = text[len(head) : len(head) + NONCE_LENGTH]
        if not text.startswith(head) or len(nonce) != NONCE_LENGTH:
            raise UnreadableRequest(f"{_who(request)}: the prompt does not start as its template")
        return nonce

    def _skeleton(
        self, pair: PromptPair, k: int, fields: tuple[bool, bool, bool] | None, turns: int = 0
    ) -> str:
        # The same few placeholder renderings serve every request with k references (and t
        # earlier turns): rendering them was half the cost of reading a request back.
        key = (pair.name, k, fields, turns)
        skeleton = self._skeletons.get(key)
        if skeleton is None:
            skeleton = pair.render_user(**_placeholders(k, fields, claims=0, turns=turns))
            self._skeletons[key] = skeleton
        return skeleton

    @staticmethod
    def _shown(
        request: JudgeRequest,
        values: dict[str, str],
        k: int,
        pack: bool,
        claims_for: ClaimsFor | None,
    ) -> ShownSession:
        try:
            question, answer = values["question"], values.get("answer", "")
            refs = tuple(
                ShownReference(
                    values[f"id{i}"],
                    values[f"content{i}"],
                    values.get(f"title{i}"),
                    values.get(f"url{i}"),
                    values.get(f"tool{i}"),
                )
                for i in range(k)
            )
        except KeyError as exc:
            raise UnreadableRequest(
                f"{_who(request)}: its template does not show the {exc.args[0]}"
            ) from None
        claims = None
        if pack:
            if claims_for is None:
                raise UnreadableRequest(f"{_who(request)}: a follow-up call needs its claim list")
            claims = tuple(claims_for(answer))
        return ShownSession(request.call, question, answer, refs, claims)

    def _render(
        self,
        pair: PromptPair,
        shown: ShownSession,
        nonce: str,
        earlier: Sequence[tuple[str, str]] = (),
    ) -> str:
        variables: dict[str, Any] = {
            "nonce": nonce,
            "question": shown.question,
            "answer": shown.answer,
            "references": [r.variables() for r in shown.references],
            # A reference's excerpts are not read apart: shown after its content, they are
            # read as part of it (the same text renders again, and the judge's quotes from
            # them verify, as quotes from excerpts do).
            "conversation": [{"question": q, "answer": a} for q, a in earlier],
        }
        if shown.claims is not None:
            variables["claims"] = [
                {"id": i, "text": " ".join(t.replace(nonce, "").split())} for i, t in shown.claims
            ]
        return pair.render_user(**variables)


def _who(request: JudgeRequest) -> str:
    return f"session {request.session_id!r} ({request.call} call)"


def _placeholders(
    k: int, fields: tuple[bool, bool, bool] | None, claims: int, turns: int = 0
) -> dict[str, Any]:
    tool, title, url = fields or (False, False, False)
    return {
        "nonce": _NONCE,
        "question": _slot("question"),
        "answer": _slot("answer"),
        "references": [
            {
                "id": _slot(f"id{i}"),
                "content": _slot(f"content{i}"),
                "content_ref": None,
                "title": _slot(f"title{i}") if title else None,
                "url": _slot(f"url{i}") if url else None,
                "tool_call": _slot(f"tool{i}") if tool else None,
                "excerpts": [],
            }
            for i in range(k)
        ],
        "conversation": [
            {"question": _slot(f"turnq{j}"), "answer": _slot(f"turna{j}")} for j in range(turns)
        ],
        "claims": [{"id": f"c{n + 1}", "text": _slot(f"claim{n}")} for n in range(claims)],
    }


def _count(text: str, nonce: str) -> int:
    return sum(1 for line in text.split("\n") if nonce in line)


def _segments(text: str, nonce: str) -> list[str]:
    """The text cut at marker lines: runs of other lines and each marker line, in order."""
    out: list[str] = []
    run: list[str] = []
    for line in text.split("\n"):
        if nonce in line:
            out.append("\n".join(run))
            out.append(line)
            run = []
        else:
            run.append(line)
    out.append("\n".join(run))
    return out


def _layout(segment: str) -> _Layout:
    """A placeholder segment as literal text and named slots, in order."""
    out: _Layout = []
    rest = segment
    while (start := rest.find(_OPEN)) >= 0:
        end = rest.index(_CLOSE, start)
        if start:
            out.append(("text", rest[:start]))
        out.append(("slot", rest[start + 1 : end]))
        rest = rest[end + 1 :]
    if rest:
        out.append(("text", rest))
    return out


def _match(segment: str, layout: _Layout, known: dict[str, str]) -> dict[str, str] | None:
    """The slot values that make ``layout`` read ``segment``, or None. Known values are literal
    text; a slot ends at the first occurrence of the literal after it, the last slot at the
    segment's closing literal."""
    items = [("text", known[v]) if k == "slot" and v in known else (k, v) for k, v in layout]
    merged: _Layout = []
    for kind, value in items:
        if kind == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + value)
        else:
            merged.append((kind, value))
    found: dict[str, str] = {}
    position, end = 0, len(segment)
    if merged and merged[-1][0] == "text":
        tail = merged.pop()[1]
        if not segment.endswith(tail) or len(segment) - len(tail) < 0:
            return None
        end = len(segment) - len(tail)
    for n, (kind, value) in enumerate(merged):
        if kind == "text":
            if not segment.startswith(value, position) or position + len(value) > end:
                return None
            position += len(value)
            continue
        after = merged[n + 1] if n + 1 < len(merged) else None
        if after is None:
            found[value] = segment[position:end]
            position = end
        elif after[0] == "slot":
            return None  # two slots side by side cannot be told apart
        else:
            stop = segment.find(after[1], position, end)
            if stop < 0:
                return None
            found[value] = segment[position:stop]
            position = stop
    return found if position == end else None
