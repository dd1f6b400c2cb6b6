"""Offloaded tool results: ``content_ref`` read from a folder or an S3 server when grading."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from research_judge.clients import ScriptedClient
from research_judge.clients.base import JudgeRequest
from research_judge.clients.cache import CachingClient
from research_judge.engine import RunOptions, grade_file
from research_judge.judge.estimate import Budget, Estimator
from research_judge.judge.grader import Judge
from research_judge.results.model import Result, read_results
from research_judge.sessions.store import FolderStore, S3Store, open_store, store_key

from support import good_responder, offloaded, session, write_sessions

STORED = "Fact 1 is true here, read back from storage."
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOGS = FIXTURES / "agent_logs"


class Seen:
    """A scripted judge that remembers every counting prompt it was sent."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, request: JudgeRequest) -> dict[str, Any]:
        if request.call == "counting":
            self.prompts.append(request.messages[0].content)
        return good_responder(request)


async def grade(
    tmp_path: Path, sessions: list[dict[str, Any]], store: Any, **kw: Any
) -> list[Result]:
    src = write_sessions(tmp_path / "sessions.jsonl", sessions)
    out = tmp_path / "results.jsonl"
    out.unlink(missing_ok=True)
    judge = kw.pop("judge", None) or Judge(ScriptedClient(Seen()))
    await grade_file(src, out, judge, RunOptions(concurrency=4), store=store, **kw)
    return read_results(out)


def test_keys_stay_inside_the_store() -> None:
    assert store_key("a/b.txt", "s3://bkt/pre") == "a/b.txt"
    assert store_key("s3://bkt/pre/a/b.txt", "s3://bkt/pre") == "a/b.txt"
    for bad in ("../secret", "a/../../x", "/etc/passwd", "s3://other/a", "s3://bkt/prefix2/a", ""):
        with pytest.raises(ValueError):
            store_key(bad, "s3://bkt/pre")


def test_unknown_scheme_is_a_config_error() -> None:
    with pytest.raises(Exception, match="use a folder or s3://bucket/prefix"):
        open_store("gs://bucket")


# --- a folder ------------------------------------------------------------------------------


async def test_folder_store_resolves_content_ref_and_names_the_unreadable(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "run-7").mkdir(parents=True)
    (root / "run-7" / "call_1.txt").write_text(STORED, encoding="utf-8")
    (root / "binary.bin").write_bytes(b"\xff\xfe\x00")
    seen = Seen()
    results = await grade(
        tmp_path,
        [
            offloaded("s-1", "run-7/call_1.txt"),
            offloaded("s-2", "run-7/missing.txt"),
            session("s-3"),
            offloaded("s-4", "../outside.txt"),
            offloaded("s-5", "binary.bin"),
        ],
        FolderStore(root),
        judge=Judge(ScriptedClient(seen)),
    )
    assert [r.session_id for r in results] == ["s-1", "s-2", "s-3", "s-4", "s-5"]
    assert results[0].ok and results[2].ok
    assert any(STORED in p for p in seen.prompts)  # the judge saw the stored text
    assert len(seen.prompts) == 2  # and nothing was sent for the three unreadable sessions
    errors = {r.session_id: r.error for r in results if not r.ok}
    assert errors["s-2"] == (
        "reference 'r1': cannot read content_ref 'run-7/missing.txt': no such object "
        f"(store {root})"
    )
    assert "content_ref '../outside.txt'" in str(errors["s-4"]) and "'..'" in str(errors["s-4"])
    assert "not UTF-8 text" in str(errors["s-5"])
    assert {r.error_kind for r in results if not r.ok} == {"content_ref"}


async def test_without_a_store_an_offloaded_reference_is_an_error_naming_it(tmp_path: Path) -> None:
    (result,) = await grade(tmp_path, [offloaded("s-1", "k/1.txt")], None)
    assert result.error_kind == "content_ref"
    assert "reference 'r1': cannot read content_ref 'k/1.txt': no store given" in str(result.error)


async def test_the_response_cache_keys_on_the_resolved_text(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    text = root / "r.txt"

    async def run(name: str) -> int:
        client = CachingClient(ScriptedClient(Seen()), tmp_path / "cache")
        await grade(tmp_path / name, [offloaded("s-1", "r.txt")], FolderStore(root),
                    judge=Judge(client))  # fmt: skip
        return client.hits

    for d in ("a", "b", "c"):
        (tmp_path / d).mkdir()
    text.write_text(STORED, encoding="utf-8")
    assert await run("a") == 0
    assert await run("b") == 2  # same stored text: both calls from the cache
    text.write_text("Fact 1 is true here, but the stored page changed.", encoding="utf-8")
    # Both prompts change with it (the markers' nonce covers every text of the session).
    assert await run("c") == 0


async def test_with_max_cost_offloaded_texts_are_read_before_the_estimate(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "r.txt").write_text(STORED, encoding="utf-8")
    seen = Seen()
    judge = Judge(ScriptedClient(seen))
    from research_judge.cost.prices import PriceTable

    budget = Budget(100.0, Estimator(judge, PriceTable.load(None)))
    results = await grade(
        tmp_path,
        [offloaded("s-1", "r.txt"), offloaded("s-2", "gone.txt")],
        FolderStore(root),
        judge=judge,
        budget=budget,
    )
    assert results[0].ok and STORED in seen.prompts[0]
    assert results[1].error_kind == "content_ref"


def test_cli_grade_store_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from research_judge.cli import main

    code = main(["grade", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o.jsonl"),
                 "--model", "m", "--store", str(tmp_path / "nope")])  # fmt: skip
    assert code == 2
    assert f"--store {tmp_path / 'nope'}: no such folder" in capsys.readouterr().err


# --- an S3 API server on 127.0.0.1 (moto) ----------------------------------------------------


@pytest.fixture(scope="module")
def s3_server() -> Iterator[dict[str, str]]:
    boto3 = pytest.importorskip("boto3")
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    setup = {"endpoint_url": endpoint, "region_name": "us-east-1",
             "aws_access_key_id": "setup", "aws_secret_access_key": "setup"}  # fmt: skip
    try:
        iam = boto3.client("iam", **setup)
        iam.create_user(UserName="grader")
        key = iam.create_access_key(UserName="grader")["AccessKey"]
        allow = {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}
        policy = {"Version": "2012-10-17", "Statement": [allow]}
        iam.put_user_policy(UserName="grader", PolicyName="read", PolicyDocument=json.dumps(policy))
        s3 = boto3.client("s3", **setup)
        s3.create_bucket(Bucket="agent-results")
        s3.put_object(Bucket="agent-results", Key="traces/run-7/call_1.txt", Body=STORED.encode())
        # The demo's offloaded result, as the agent left it in its bucket.
        demo_text = (LOGS / "store" / "oai-bees-01" / "call_a1.txt").read_bytes()
        s3.put_object(Bucket="agent-results", Key="traces/oai-bees-01/call_a1.txt", Body=demo_text)
        # From here on the server checks every request's credentials, as a real store does.
        _moto_auth(endpoint, "0")
        yield {"endpoint": endpoint, "key": key["AccessKeyId"], "secret": key["SecretAccessKey"]}
        _moto_auth(endpoint, "inf")
    finally:
        server.stop()


def _moto_auth(endpoint: str, free_requests: str) -> None:
    """moto's server-mode switch: how many requests go unauthenticated before checks start."""
    import urllib.request

    request = urllib.request.Request(
        f"{endpoint}/moto-api/reset-auth",
        data=free_requests.encode(),
        headers={"Content-Type": "text/plain"},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=10).close()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, s3_server: dict[str, str], tmp_path: Path) -> None:
    # The standard AWS environment, nothing of the developer's own (no profile, no config file).
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server["endpoint"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3_server["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3_server["secret"])


async def test_s3_store_reads_offloaded_results_and_names_a_missing_object(
    aws_env: None, tmp_path: Path
) -> None:
    seen = Seen()
    results = await grade(
        tmp_path,
        [
            offloaded("s-1", "run-7/call_1.txt"),
            offloaded("s-2", "run-7/call_2.txt"),
            offloaded("s-3", "s3://agent-results/traces/run-7/call_1.txt"),
        ],
        open_store("s3://agent-results/traces"),
        judge=Judge(ScriptedClient(seen)),
    )
    assert results[0].ok and results[2].ok
    assert all(STORED in p for p in seen.prompts) and len(seen.prompts) == 2
    assert results[1].error == (
        "reference 'r1': cannot read content_ref 'run-7/call_2.txt': no such object "
        "(store s3://agent-results/traces)"
    )


async def test_s3_store_with_a_wrong_credential_is_an_error_per_session(
    aws_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG1")
    results = await grade(
        tmp_path,
        [offloaded("s-1", "run-7/call_1.txt"), session("s-2")],
        open_store("s3://agent-results/traces"),
    )
    assert results[1].ok
    assert results[0].error_kind == "content_ref"
    assert (
        "reference 'r1': cannot read content_ref 'run-7/call_1.txt': access denied, check"
        in str(results[0].error)
    )


def test_s3_store_without_s3fs_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "s3fs", None)  # as if the extra were not installed
    with pytest.raises(Exception, match=r"pip install 'research-judge\[s3\]'"):
        S3Store("s3://bucket/prefix")


def test_a_reference_with_both_content_and_content_ref_is_a_bad_line(tmp_path: Path) -> None:
    from research_judge.sessions import iter_sessions

    both = session("s-1")
    both["trajectory"][0]["content_ref"] = "k.txt"
    ((_, error),) = list(iter_sessions(write_sessions(tmp_path / "s.jsonl", [both])))
    assert "trajectory.0: has both content and content_ref; give one" in str(error)


def test_dry_run_reads_offloaded_texts_when_given_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from research_judge.cli import main

    root = tmp_path / "store"
    root.mkdir()
    (root / "big.txt").write_text("Fact 1 is true here. " * 2000, encoding="utf-8")
    src = write_sessions(tmp_path / "s.jsonl", [offloaded("s-1", "big.txt")])
    base = ["grade", str(src), "--out", str(tmp_path / "o.jsonl"), "--model", "m", "--dry-run"]

    def tokens_in(text: str) -> int:
        return int(text.split("estimated input tokens ")[1].split(",")[0])

    assert main(base) == 0
    without = capsys.readouterr().out
    assert "1 session(s) have offloaded references (content_ref) counted as empty" in without
    assert main([*base, "--store", str(root)]) == 0
    with_store = capsys.readouterr().out
    assert tokens_in(with_store) > tokens_in(without) + 5000  # ~42,000 characters were read
    missing = write_sessions(tmp_path / "m.jsonl", [offloaded("s-2", "gone.txt")])
    assert main(["grade", str(missing), *base[2:], "--store", str(root)]) == 2
    captured = capsys.readouterr()
    assert "session 's-2': reference 'r1': cannot read content_ref 'gone.txt'" in captured.err


def test_cli_grades_a_converted_log_from_s3(aws_env: None, tmp_path: Path) -> None:
    from research_judge.cli import main

    sessions, out = tmp_path / "sessions.jsonl", tmp_path / "results.jsonl"
    stub = r"\[stored: r2://agent-results/(?P<ref>\S+), \d+ chars\]"
    convert = ["convert", "openai-chat", str(LOGS / "openai_chat.jsonl"), "--out", str(sessions)]
    assert main([*convert, "--stub-pattern", stub, "--quiet"]) == 0
    code = main(["grade", str(sessions), "--out", str(out), "--provider", "scripted",
                 "--model", "authored-lenient-judge", "--replay", str(FIXTURES / "recordings"),
                 "--store", "s3://agent-results/traces", "--quiet"])  # fmt: skip
    assert code == 0  # the replayed judge saw exactly the text the folder store gives
    (result,) = read_results(out)
    assert result.ok and result.citations is not None
