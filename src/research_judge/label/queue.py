"""What the labelling page shows, and in which order.

INPUT is a sessions file (the text to label) or a results file. A results file carries the
question and the judge's verdict but not the answer or the trajectory, so with one the sessions
it was graded from are read too (``--sessions``); the judge's side decides the order
(``suggest``) and, only with ``--show-judge``, is shown.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError, InputFileError
from ..results.model import Result
from ..safety import jsonin
from ..sessions.model import Session, iter_sessions

Order = Literal["suggest", "input", "random"]


@dataclass(frozen=True)
class Reference:
    id: str
    title: str | None
    url: str | None
    tool: str | None
    content: str


@dataclass(frozen=True)
class Item:
    """One session to label: its text and, when the input was a results file, the judge's side."""

    session_id: str
    question: str
    answer: str
    references: tuple[Reference, ...]
    judge_verdict: str | None = None
    judge_reasons: tuple[str, ...] = ()
    result: Result | None = field(default=None, compare=False, repr=False)

    def to_dict(self, *, show_judge: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "question": self.question,
            "answer": self.answer,
            "references": [r.__dict__ for r in self.references],
        }
        if show_judge:  # blind by default: the page never receives the verdict otherwise
            out["judge"] = {"verdict": self.judge_verdict, "reasons": list(self.judge_reasons)}
        return out


def is_results_file(path: Path) -> bool:
    """A results line has ``session_id``; a session line has ``id`` and ``answer``."""
    try:
        with path.open("rb") as handle:
            for raw in handle:
                if raw.strip():
                    first = jsonin.loads(raw.decode("utf-8-sig").strip())
                    return isinstance(first, dict) and "session_id" in first
    except OSError as exc:
        raise InputFileError(path, f"cannot read: {exc.strerror or exc}") from exc
    except (jsonin.UnusableJson, UnicodeDecodeError) as exc:
        raise InputFileError(path, f"not a sessions or results file: {exc}", 1) from exc
    raise InputFileError(path, "empty: no session to label")


def read_sessions(path: Path) -> list[Session]:
    """Every good session; each bad line is reported on stderr by file:line and skipped."""
    sessions = []
    for _, item in iter_sessions(path):
        if isinstance(item, InputFileError):
            print(f"research-judge label: {item} (skipped)", file=sys.stderr)
        else:
            sessions.append(item)
    if not sessions:
        raise InputFileError(path, "no good session to label")
    return sessions


def load_items(
    input_path: str | Path, sessions_path: str | Path | None = None
) -> tuple[list[Item], list[Result] | None]:
    """The items to label in input order, and the results when INPUT was a results file."""
    path = Path(input_path)
    if not is_results_file(path):
        return [_item(s) for s in read_sessions(path)], None
    from ..results.model import read_results

    if sessions_path is None:
        raise ConfigError(
            f"{path} is a results file, which carries no answer or trajectory to label: give "
            "the sessions it was graded from with --sessions SESSIONS.jsonl"
        )
    results = read_results(path)
    sessions = {s.id: s for s in read_sessions(Path(sessions_path))}
    missing = [r.session_id for r in results if r.session_id not in sessions]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        print(
            f"research-judge label: {len(missing)} result(s) have no session in "
            f"{sessions_path} and cannot be labelled: {shown}",
            file=sys.stderr,
        )
    items = [_item(sessions[r.session_id], r) for r in results if r.session_id in sessions]
    if not items:
        raise InputFileError(Path(sessions_path), f"no session of {path} is in this file")
    return items, results


def _item(session: Session, result: Result | None = None) -> Item:
    refs = tuple(
        Reference(
            id=r.id,
            title=r.title,
            url=r.url,
            tool=_tool(r.model_extra or {}),
            content=r.content if not r.offloaded else f"(offloaded to storage: {r.content_ref})",
        )
        for r in session.trajectory
    )
    return Item(
        session_id=session.id,
        question=session.question,
        answer=session.answer,
        references=refs,
        judge_verdict=None if result is None else result.verdict,
        judge_reasons=() if result is None else tuple(result.verdict_reasons),
        result=result,
    )


def _tool(extra: dict[str, Any]) -> str | None:
    value = extra.get("tool") or extra.get("tool_name")
    return value if isinstance(value, str) else None


def order_items(
    items: Sequence[Item],
    order: Order,
    *,
    seed: int = 0,
    sample: int | None = None,
    lead: Literal["pass", "fail"] = "fail",
    policy: Any = None,
) -> list[Item]:
    """The queue: ``suggest`` (results only) puts first the sessions that would most narrow the
    judge's agreement intervals, as ``validate --suggest`` ranks them, then the rest in input
    order; ``input`` keeps the file's order; ``random`` shuffles with ``seed``. ``sample`` keeps
    the first N of that order (decided before anything is labelled, so a restart sees the same
    queue)."""
    queue = list(items)
    if order == "random":
        random.Random(seed).shuffle(queue)
    elif order == "suggest":
        results = [i.result for i in items if i.result is not None]
        if len(results) != len(items):
            raise ConfigError("--order suggest needs a results file as INPUT (the judge's margins)")
        from ..validate.labels import Labels
        from ..validate.suggest import suggest

        ranked = suggest(results, Labels("", {}), len(results), policy, lead)
        position = {s.session_id: i for i, s in enumerate(ranked)}
        queue.sort(key=lambda i: position.get(i.session_id, len(position)))
    return queue if sample is None else queue[:sample]
