"""A wrong endpoint or a server refusing the request format stops the run at once, exit 3,
saying why: not minutes of retries ending in a column of API errors."""

from __future__ import annotations

import io
import socket
from pathlib import Path

import pytest

from research_judge.cli import build_parser
from research_judge.cli._grading import execute
from research_judge.clients._http import format_rejection
from research_judge.clients.resilience import SAME_REFUSAL_AFTER, Health, RetryPolicy
from research_judge.errors import (
    ApiError,
    ProviderDownError,
    TransientApiError,
    UnreachableError,
)
from research_judge.results.model import read_results

from http_stub import StubServer, json_answer
from support import session, write_sessions

# What llama-cpp-python's server answered to --mode json_schema (HTTP 500), in substance.
LLAMA_CPP_REFUSAL = {
    "error": {
        "message": "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
        "  Input should be 'text' or 'json_object' [type=literal_error]",
        "type": "internal_server_error",
    }
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def grade(tmp_path: Path, base_url: str, *extra: str) -> tuple[int, str, Path]:
    src = write_sessions(tmp_path / "s.jsonl", [session(f"s-{i}") for i in range(20)])
    out = tmp_path / "o.jsonl"
    args = build_parser().parse_args(
        ["grade", str(src), "--out", str(out), "--model", "m", "--base-url", base_url,
         "--no-cache", "--quiet", *extra]
    )  # fmt: skip
    err = io.StringIO()
    code = await execute(args, err, io.StringIO())
    return code, err.getvalue(), out


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")


async def test_connection_refused_stops_the_run_with_exit_3_and_the_cause(tmp_path: Path) -> None:
    code, err, out = await grade(tmp_path, f"http://127.0.0.1:{free_port()}/v1")
    assert code == 3
    assert "cannot reach the provider" in err and "check --base-url" in err
    assert "Connect call failed" in err or "refused" in err.lower()
    # Nothing was graded, so nothing is recorded as an error: a rerun grades every session.
    assert not out.exists() or read_results(out) == []


async def test_an_unknown_host_stops_the_run_with_exit_3(tmp_path: Path) -> None:
    # .invalid never resolves (RFC 2606); no request leaves the machine.
    code, err, _ = await grade(tmp_path, "http://judge.invalid/v1")
    assert code == 3
    assert "cannot reach the provider" in err and "judge.invalid" in err


async def test_a_server_refusing_the_mode_stops_at_its_first_reply(tmp_path: Path) -> None:
    async with StubServer(json_answer(LLAMA_CPP_REFUSAL, status=500)) as server:
        code, err, _ = await grade(tmp_path, server.base_url, "--concurrency", "1")
        sent = len(server.seen)
    assert code == 3
    assert sent == 1  # not retried as a transient 500
    assert "refused the request format of --mode json_schema" in err
    assert "--mode json_object" in err


def test_refused_connections_after_an_answer_are_an_outage_not_a_wrong_address() -> None:
    now = [0.0]
    health = Health(RetryPolicy(), clock=lambda: now[0])
    refused = UnreachableError("openai request could not connect (http://h/v1): refused")
    health.success()
    for _ in range(9):  # a restart of the server: retried under the usual outage rule
        health.failure(refused)
    now[0] = 200.0
    with pytest.raises(ProviderDownError, match="no successful judge call"):
        health.failure(refused)


def test_a_server_that_answers_with_errors_is_reachable() -> None:
    health = Health(RetryPolicy())
    health.failure(TransientApiError("HTTP 502", 502))
    for _ in range(5):
        health.failure(UnreachableError("could not connect"))  # no stop: it answered before


@pytest.mark.parametrize(
    ("status", "detail", "refused"),
    [
        (500, "response_format.type: Input should be 'text' or 'json_object'", True),
        (400, "Invalid parameter: 'tool_choice' is not supported", True),
        (422, "json_schema is not supported by this backend", True),
        (500, "CUDA out of memory", False),
        (503, "response_format busy", False),
        (429, "tools: slow down", False),
    ],
)
def test_only_a_refusal_naming_a_format_parameter_is_one(
    status: int, detail: str, refused: bool
) -> None:
    found = format_rejection("openai", "json_schema", "http://h/v1", status, detail)
    assert (found is not None) == refused


def test_an_address_that_never_answered_stops_after_a_few_attempts_not_a_time_window() -> None:
    # The clock never moves: the stop cannot be the outage rule (down_after seconds of failures).
    health = Health(RetryPolicy(), clock=lambda: 0.0)
    refused = UnreachableError("openai request could not connect (http://h/v1): refused")
    attempts = RetryPolicy().unreachable_after
    for _ in range(attempts - 1):
        health.failure(refused)
    expected = rf"cannot reach the provider \({attempts} attempts, none answered\)"
    with pytest.raises(ProviderDownError, match=expected):
        health.failure(refused)
    assert health.stopped is not None and "refused" in str(health.stopped)


# What a server answers when a required option is missing from every request, in substance.
MISSING_OPTION = {
    "error": {
        "message": "reasoning_effort is required for this deployment",
        "type": "invalid_request_error",
    }
}


async def test_the_same_4xx_on_the_first_calls_stops_the_run_with_the_servers_words(
    tmp_path: Path,
) -> None:
    async with StubServer(json_answer(MISSING_OPTION, status=400)) as server:
        code, err, out = await grade(tmp_path, server.base_url, "--concurrency", "1")
        sent = len(server.seen)
    assert code == 3
    assert sent == SAME_REFUSAL_AFTER  # not all 20 sessions, one by one
    assert "all refused with the same answer" in err
    assert "reasoning_effort is required for this deployment" in err
    assert "HTTP 400" in err
    # At most the sessions whose calls got the answer are recorded, as API errors; the stop
    # says how to send them again.
    recorded = read_results(out) if out.exists() else []
    assert len(recorded) < SAME_REFUSAL_AFTER
    assert all(r.error_kind == "api" for r in recorded)
    assert "--retry-errors" in err


def test_a_4xx_after_a_success_is_that_sessions_problem_not_the_runs() -> None:
    health = Health(RetryPolicy())
    health.success()
    for _ in range(2 * SAME_REFUSAL_AFTER):
        health.failure(ApiError("HTTP 400: this session's image is too large", 400))
    assert health.stopped is None


def test_different_4xx_answers_do_not_add_up_to_a_stop() -> None:
    health = Health(RetryPolicy())
    for i in range(2 * SAME_REFUSAL_AFTER):
        health.failure(ApiError(f"HTTP 400: bad request {i % 2}", 400))
    assert health.stopped is None
    with pytest.raises(ProviderDownError, match="same answer"):
        for _ in range(SAME_REFUSAL_AFTER):
            health.failure(ApiError("HTTP 422: unknown field 'x'", 422))
