"""A trace's agents: which agent span each span works for, and the session built around them.

Both trace conventions (GenAI ``invoke_agent`` spans, OpenInference ``AGENT`` spans) map
multi-agent runs the same way: every span belongs to its nearest agent ancestor, the root agent
has none above it, and every other agent is a sub-agent. Only what marks an agent span and what
names it differ; each format says that and shares the walk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._common import SessionDict
from ._otlp import Span, Trace


class AgentTree:
    """A trace's spans in time order, each tied to the agent span it works for."""

    def __init__(
        self,
        trace: Trace,
        is_agent: Callable[[Span], bool],
        name_of: Callable[[Span], str | None],
    ) -> None:
        self.trace = trace
        self.spans = sorted(trace.spans, key=lambda s: s.start)
        self.by_id = {s.span_id: s for s in self.spans}
        self._is_agent = is_agent
        self._name_of = name_of
        # span id -> span id of the nearest agent above it (not the span itself)
        self.agent_of = self._agents_above()
        self.agents = [s for s in self.spans if is_agent(s)]
        self.roots = [a for a in self.agents if self.agent_of[a.span_id] is None]

    def agent_name(self, span_id: str | None) -> str | None:
        agent = self.by_id.get(span_id) if span_id else None
        return None if agent is None else self._name_of(agent)

    def owner(self, span: Span) -> str | None:
        """The span id of the agent a span works for: itself, for an agent span."""
        return span.span_id if self._is_agent(span) else self.agent_of[span.span_id]

    def owner_name(self, span: Span) -> str | None:
        return self.agent_name(self.owner(span))

    def session(
        self,
        session_id: str | None,
        root: Span | None,
        question: str,
        answer: str,
        trajectory: list[dict[str, Any]],
        **metadata: Any,
    ) -> SessionDict:
        """The converted session: id (else the trace id), and metadata naming the trace, the
        ``metadata`` given (those not None) and the sub-agents."""
        meta: dict[str, Any] = {"trace_id": self.trace.trace_id}
        meta.update((key, value) for key, value in metadata.items() if value is not None)
        sub_agents = [self.agent_name(a.span_id) for a in self.agents if a is not root]
        if sub_agents:
            meta["sub_agents"] = sub_agents
        return {
            "id": session_id or self.trace.trace_id,
            "question": question,
            "answer": answer,
            "trajectory": trajectory,
            "metadata": meta,
        }

    def _agents_above(self) -> dict[str, str | None]:
        """Every span's nearest agent ancestor, in time linear in the number of spans: each
        span's answer is its parent's (or the parent itself, if an agent), found once and kept.
        No recursion (a chain of 8,000 spans is no deeper for Python than one), and a parent
        cycle in a malformed trace ends the climb instead of looping."""
        above: dict[str, str | None] = {}
        for span in self.spans:
            chain: list[str] = []  # spans climbed through whose answer is not known yet
            on_chain: set[str] = set()
            current: Span | None = span
            found: str | None = None
            while current is not None and current.span_id not in above:
                if current.span_id in on_chain:  # a cycle: nothing above it is an agent
                    break
                chain.append(current.span_id)
                on_chain.add(current.span_id)
                parent = self.by_id.get(current.parent_id or "")
                if parent is None:
                    break
                if self._is_agent(parent):
                    found = parent.span_id
                    break
                current = parent
            else:
                if current is not None:
                    found = above[current.span_id]
            # Every span climbed through has the same nearest agent above: the one found.
            for span_id in chain:
                above[span_id] = found
        return above
