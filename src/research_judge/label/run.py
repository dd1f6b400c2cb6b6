"""The labelling state one annotator moves through: what is shown now, and what each key does.

The page and ``--script`` drive the same object, so the keys mean the same in both: ``label``
(p / f) saves and moves on, ``skip`` (s) puts the session at the back of the queue for this
run, ``undo`` (u) removes the last label this run saved and shows that session again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .queue import Item
from .store import LabelStore


class UnknownSession(ConfigError):
    """A label for a session id that is not in INPUT (or not in this run's queue)."""


@dataclass(frozen=True)
class Progress:
    labelled: int
    total: int

    def __str__(self) -> str:
        return f"{self.labelled} / {self.total} labelled"


class LabelRun:
    def __init__(self, items: Sequence[Item], store: LabelStore, *, show_judge: bool = False):
        self.items = {i.session_id: i for i in items}
        self.store = store
        self.show_judge = show_judge
        self._lock = threading.Lock()  # the page's requests arrive on several threads
        done = store.done()
        self._labelled = {i.session_id for i in items if i.session_id in done}
        self._queue = [i.session_id for i in items if i.session_id not in done]

    @property
    def progress(self) -> Progress:
        return Progress(len(self._labelled), len(self.items))

    def current(self) -> Item | None:
        return self.items[self._queue[0]] if self._queue else None

    def state(self) -> dict[str, Any]:
        """What the page shows: the current session (or none: all labelled) and the progress."""
        with self._lock:
            item = self.current()
            return {
                "session": None if item is None else item.to_dict(show_judge=self.show_judge),
                "labelled": self.progress.labelled,
                "total": self.progress.total,
                "progress": str(self.progress),
                "can_undo": self.store.can_undo,
            }

    def label(self, session_id: str, label: str, note: str = "") -> Progress:
        if label not in ("pass", "fail"):
            raise ConfigError(f"label must be pass or fail, got {label!r}")
        with self._lock:
            if session_id not in self.items:
                raise UnknownSession(f"session {session_id!r} is not in the input: not labelled")
            if session_id in self._labelled:
                raise ConfigError(f"session {session_id!r} is already labelled by this annotator")
            self.store.append(session_id, label, note)
            self._labelled.add(session_id)
            self._queue.remove(session_id)
            return self.progress

    def skip(self, session_id: str | None = None) -> None:
        with self._lock:
            if not self._queue:
                return
            sid = self._queue[0] if session_id is None else session_id
            if sid not in self._queue:
                raise UnknownSession(f"session {sid!r} is not waiting to be labelled")
            self._queue.remove(sid)
            self._queue.append(sid)

    def undo(self) -> str:
        """Remove the last label of this run; its session is shown next. Returns its id."""
        with self._lock:
            undone = self.store.undo()
            self._labelled.discard(undone.session_id)
            self._queue.insert(0, undone.session_id)
            return undone.session_id
