"""One small hierarchy: the user's mistakes, the judge's misbehaviour, the API's failures.

The CLI maps each branch to a one-line message and an exit code; library code raises the most
specific class so callers can tell a bad file from a flaky provider.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .usage import Usage


class ExitCode(IntEnum):
    """Every exit status of the command line, defined here once."""

    OK = 0
    FLAGGED = 1  # a gate failed: compare flagged a drop, tasks found a regression
    FAILED = 2  # bad input, flags or configuration; a session that could not be graded
    PROVIDER_DOWN = 3  # the provider was unreachable or refused us (a grade run resumes)
    STOPPED = 4  # --max-cost stopped the run before every session was sent
    OUTPUT_FAILED = 5  # an output could not be written
    JUDGE_FAILED = 6  # grade: every input was good, but some sessions ended with a judge error
    INTERNAL = 70  # a bug (sysexits' EX_SOFTWARE): never 1, so it cannot pass for a gate
    INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
    PIPE_CLOSED = 141  # 128 + SIGPIPE: the reader of stdout left (`| head`)
    TERMINATED = 143  # 128 + SIGTERM


class ErrorKind(StrEnum):
    """Why a session has no verdict: the ``error_kind`` of its result line."""

    API = "api"  # the provider failed the request after every retry
    CLIENT = "client"  # the client could not make the call (e.g. a bad recording)
    REPLAY_MISS = "replay_miss"  # --replay had no recording of the request
    JUDGE_OUTPUT = "judge_output"  # every attempt's reply broke the wire format
    CONTEXT = "context"  # the session could not be fitted into the judge's window
    INTERNAL = "internal"  # a bug of ours, caught so it costs one session, not the run
    CONTENT_REF = "content_ref"  # an offloaded tool result could not be read from the store


class ResearchJudgeError(Exception):
    """Base of every error this package raises on purpose.

    One that reaches the command line without a more specific class is a bug in the mapping.
    """

    exit_code: ExitCode = ExitCode.INTERNAL


# --- the user's mistakes -------------------------------------------------------------------


class UserError(ResearchJudgeError):
    """Bad input, bad configuration or a bad flag: fixable by the person running the tool."""

    exit_code = ExitCode.FAILED


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


class ContentRefError(UserError):
    """A reference's ``content_ref`` could not be read from the store: that session's error."""

    def __init__(self, reference_id: str, content_ref: str, why: str) -> None:
        self.reference_id = reference_id
        self.content_ref = content_ref
        super().__init__(
            f"reference {reference_id!r}: cannot read content_ref {content_ref!r}: {why}"
        )


class ReplayMissError(UserError):
    """Replay was asked for an exchange that was never recorded."""


class OutputError(ResearchJudgeError):
    """An output cannot be written (disk full, read-only, not a regular file, in use by another
    run). Nothing is wrong with the input: what was written so far is intact, and the same
    command resumes once the cause is gone."""

    exit_code = ExitCode.OUTPUT_FAILED


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


class OutputTruncated(JudgeRefusal):
    """The reply was cut at its output allowance (``finish_reason: length`` / ``max_tokens``).

    A counting call re-plans with a smaller pack of references instead of asking again with the
    same one, which would be cut at the same place.
    """


# --- the API's failures ------------------------------------------------------------------------


class ApiError(ResearchJudgeError):
    """The provider could not be reached or rejected the request."""

    exit_code = ExitCode.PROVIDER_DOWN

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        self.usage: Usage | None = None  # set when an error reply still reported usage
        # The server's own words, without our framing (which names the session): two answers
        # with the same status and detail are the same refusal.
        self.detail: str | None = None
        super().__init__(message)


class TransientApiError(ApiError):
    """Worth retrying: timeouts, connection resets, 5xx, overload."""

    def __init__(
        self, message: str, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status)
        self.retry_after = retry_after


class UnreachableError(TransientApiError):
    """Nothing answered at the provider's address: connection refused, unknown host, TLS
    handshake failed. Retried once the provider has answered at least once; before that, a
    wrong address, and the run stops within seconds (see ``clients.resilience.Health``)."""


class RequestFormatError(ApiError):
    """The server refused the shape of our request (its structured-output mode, mostly): every
    later request would be refused the same way, so the run stops at the first."""


class ContextLengthError(ApiError):
    """The provider refused the request as larger than the model's window (prompt plus output
    allowance). Not transient: the same request fails the same way, so the caller re-plans."""


class RateLimitError(TransientApiError):
    """HTTP 429 (or Anthropic's 529): slow down, then retry."""


class ProviderDownError(ApiError):
    """Requests kept failing for long enough that carrying on would only burn time.

    Raised by the Python API with ``results``: the sessions graded before the stop, in input
    order, as the CLI's results file holds them then (empty elsewhere)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message, status)
        # The graded ``results.Result`` objects. Typed loosely because errors sit below every
        # layer (the results model included) so that any layer may raise them.
        self.results: list[Any] = []


class MaxCostReached(ResearchJudgeError):
    """The Python API's ``max_cost`` stopped the run before every session was sent (the CLI's
    ``--max-cost`` exit 4). ``results`` holds the sessions graded, in input order, as the CLI's
    results file would; ``not_sent`` counts the rest."""

    exit_code = ExitCode.STOPPED

    def __init__(self, max_cost: float, results: list[Any], not_sent: int) -> None:
        self.max_cost = max_cost
        self.results = results
        self.not_sent = not_sent
        super().__init__(
            f"max_cost ${max_cost:g} reached: {len(results)} session(s) graded (in .results), "
            f"{not_sent} not sent. Raise max_cost and call again: with the response cache on "
            "(cache=True, the default) the sessions already graded cost nothing the second time."
        )


class InvalidSessionsError(UserError):
    """Sessions handed to the Python API that cannot be graded; ``errors`` names each one."""

    def __init__(self, errors: list[InputFileError]) -> None:
        self.errors = errors
        listed = "\n".join(f"  {e}" for e in errors)
        super().__init__(
            f"{len(errors)} session(s) cannot be graded, so nothing was sent "
            f"(fix or drop them):\n{listed}"
        )
