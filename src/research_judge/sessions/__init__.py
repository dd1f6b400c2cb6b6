"""Stage 1, ingest: the session model and reading sessions files (contract section 1)."""

from .model import Reference, Session, iter_sessions, parse_session_line

__all__ = ["Reference", "Session", "iter_sessions", "parse_session_line"]
