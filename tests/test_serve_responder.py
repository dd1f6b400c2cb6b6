"""``python -m research_judge.testing.serve --responder MODULE:NAME``: what NAME may be.

A function of the body, or a header responder (an object with ``respond(body, headers)``, or its
class, made with no arguments) such as ``FakeJudge``, which answers from the request body.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from research_judge.clients.openai import OpenAIClient
from research_judge.clients.scripted import ScriptedClient
from research_judge.judge.grader import Judge
from research_judge.sessions.model import Session
from research_judge.testing import FakeJudge
from research_judge.testing.fake_openai import HeaderResponder
from research_judge.testing.serve import load_responder

MODULE = """
class Replies:
    def respond(self, body, headers):
        return headers.get("x-test-header", "none")

replies = Replies()

def by_body(body):
    return "body"

class NeedsArguments:
    def __init__(self, sessions):
        self.sessions = sessions
    def respond(self, body, headers):
        return ""

class NotAResponder:
    pass

NUMBER = 3
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "rj_serve_responders.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "rj_serve_responders"
    sys.modules.pop("rj_serve_responders", None)


def test_a_function_of_the_body_is_used_as_it_is(module: str) -> None:
    responder = load_responder(f"{module}:by_body")
    assert callable(responder) and responder({}) == "body"  # type: ignore[operator]


@pytest.mark.parametrize("name", ["replies", "Replies"])
def test_a_header_responder_or_its_class_reads_the_headers(module: str, name: str) -> None:
    responder = load_responder(f"{module}:{name}")
    assert isinstance(responder, HeaderResponder) and not isinstance(responder, type)
    assert responder.respond({}, {"x-test-header": "m"}) == "m"


def test_the_fake_judge_of_serve_fake_can_be_named() -> None:
    responder = load_responder("research_judge.testing.fake_judge:FakeJudge")
    assert isinstance(responder, FakeJudge)
    one = Session.model_validate(
        {
            "id": "s-1",
            "question": "Q?",
            "answer": "A.",
            "trajectory": [{"id": "r1", "content": "x"}],
        }
    )
    request, _ = Judge(ScriptedClient([])).first_requests(one)
    body = OpenAIClient("m", api_key="k", base_url="http://127.0.0.1:9/v1").request_body(request)
    verdicts = json.loads(responder.respond(body, {}))["verdicts"]
    assert {v["id"] for v in verdicts} == {"r1"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "must look like module:function"),
        ("rj_no_such_module_here:f", "cannot import"),
        ("{module}:missing", "no function or responder named 'missing'"),
        ("{module}:NUMBER", "no function or responder named 'NUMBER'"),
        ("{module}:NotAResponder", "class NotAResponder has no respond(body, headers) method"),
        ("{module}:NeedsArguments", "class NeedsArguments cannot be made without arguments"),
    ],
)
def test_what_cannot_answer_is_refused_with_a_reason(module: str, spec: str, message: str) -> None:
    with pytest.raises(SystemExit, match=re.escape(message)):
        load_responder(spec.format(module=module))
