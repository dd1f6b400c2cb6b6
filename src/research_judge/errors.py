"""One small hierarchy: the user's mistakes, the judge's misbehaviour, the API's failures.

The CLI maps each branch to a one-line message and an exit code; library code raises the most
specific class so callers can tell a bad file from a flaky provider.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .clients.base import Usage


class ResearchJudgeError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code = 1


# --- the user's mistakes -------------------------------------------------------------------


class UserError(ResearchJudgeError):
    """Bad input, bad configuration or a bad flag: fixable by the person running the tool."""

    exit_code = 2


class InputFileError(UserError):
    """A problem located in a file, optionally at a line: rendered as ``file:line: what``."""

    def __init__(self, path: str | Path, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class ConfigError(UserError):
    """An invalid setting (flag, config file value, environment)."""


class ReplayMissError(UserError):
    """Replay was asked for an exchange that was never recorded."""


class OutputError(ResearchJudgeError):
    """The output cannot be written (disk full, read-only, in use by another run).

    Nothing is wrong with the input: what was written so far is intact, and the same command
    resumes once the cause is gone.
    """

    exit_code = 5


# --- the judge's misbehaviour ----------------------------------------------------------------


class JudgeError(ResearchJudgeError):
    """The judge answered, but not with something we can use."""


class InvalidJudgeOutput(JudgeError):
    """One reply broke the wire format; ``problems`` says how, in words fit to send back."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class JudgeRefusal(JudgeError):
    """The model declined to answer or stopped before finishing its reply.

    ``usage`` is what the provider billed for the reply anyway (a cut reply costs its tokens).
    """

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        self.usage = usage
        super().__init__(message)


# --- the API's failures ------------------------------------------------------------------------


class ApiError(ResearchJudgeError):
    """The provider could not be reached or rejected the request."""

    exit_code = 3

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        self.usage: Usage | None = None  # set when an error reply still reported usage
        super().__init__(message)


class TransientApiError(ApiError):
    """Worth retrying: timeouts, connection resets, 5xx, overload."""

    def __init__(
        self, message: str, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status)
        self.retry_after = retry_after


class RateLimitError(TransientApiError):
    """HTTP 429 (or Anthropic's 529): slow down, then retry."""


class ProviderDownError(ApiError):
    """Requests kept failing for long enough that carrying on would only burn time."""
