"""Judge prompts: Jinja2 files in ``prompts/``, rendered strictly, identified by content hash.

Each judge call has a static ``<name>.system.j2`` (the instructions, sent first so provider prompt
caches hit) and a ``<name>.user.j2`` (the session material). Session text only ever enters as
template *variables*: it is never compiled as a template and never HTML-escaped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta

from ..errors import ConfigError
from ..sessions.model import Session

CALLS = ("counting", "scoring")
PACK_CALL = "counting_pack"
"""The follow-up counting call of a session split across calls (``judge.counting``). Optional in
a user's prompts folder until a session needs it."""


# The variables the judge sets; a session's extra top-level key of the same name is not passed.
RESERVED = frozenset({"nonce", "question", "answer", "references", "conversation", "claims"})


def session_variables(
    session: Session, nonce: str, references: list[dict[str, Any]]
) -> dict[str, Any]:
    """What a user template is given of a session (beside ``claims`` for a pack call): also
    each extra top-level key of the session, by its name, for custom templates to print."""
    extras = {k: v for k, v in (session.model_extra or {}).items() if k not in RESERVED}
    return {
        **extras,
        "nonce": nonce,
        "question": session.question,
        "answer": session.answer,
        "references": references,
        # The earlier turns of a conversation ({question, answer} each), oldest first.
        "conversation": [turn.model_dump() for turn in session.conversation],
    }


def default_prompts_dir() -> Path:
    """The packaged prompts (in a wheel) or, in a source checkout, the top-level folder."""
    packaged = Path(str(resources.files("research_judge"))) / "prompts"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "prompts"


@dataclass(frozen=True)
class PromptPair:
    """The two templates of one call, their name and the hash of both texts."""

    name: str
    system: str
    user_template: jinja2.Template
    sha256: str
    user_file: Path

    def render_user(self, **variables: Any) -> str:
        return _render(self.user_file, self.user_template, **variables)


def _render(path: Path, template: jinja2.Template, **variables: Any) -> str:
    """Render strictly; a template error (an undefined variable, mostly) names the file."""
    try:
        return template.render(**variables)
    except jinja2.TemplateError as exc:
        raise ConfigError(f"{path}: {exc.message}") from exc


class PromptSet:
    """All templates the judge needs, loaded once from one folder."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_prompts_dir()
        # The shipped templates print only id, title, url, content and the tool call (tool and
        # args) of a reference.
        self.shipped = self.directory.resolve() == default_prompts_dir().resolve()
        if not self.directory.is_dir():
            raise ConfigError(f"prompts folder not found: {self.directory}")
        # Templates are compiled from the files' text (read once, also hashed); session text
        # only ever arrives as render variables.
        self._env = jinja2.Environment(
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
        )
        self._user_texts: list[str] = []
        self.calls = {name: self._load_pair(name) for name in CALLS}
        self.pack: PromptPair | None = None
        if (self.directory / f"{PACK_CALL}.system.j2").exists() or (
            self.directory / f"{PACK_CALL}.user.j2"
        ).exists():
            self.pack = self._load_pair(PACK_CALL)
        # The top-level variables the user templates read: a session's extra key outside them
        # is never shown to the judge (the run says so once).
        self.reads = frozenset(
            name
            for text in self._user_texts
            for name in jinja2.meta.find_undeclared_variables(self._env.parse(text))
        )
        reask_text, self.reask = self._compile("reask.j2")
        self.reask_sha256 = hashlib.sha256(reask_text.encode()).hexdigest()
        # Render once now: a broken re-ask template must fail at start-up, not mid-batch.
        _render(self.directory / "reask.j2", self.reask, problems=["example problem"])

    def _read(self, filename: str) -> str:
        path = self.directory / filename
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read prompt {path}: {exc.strerror or exc}") from exc

    def _compile(self, filename: str) -> tuple[str, jinja2.Template]:
        """The file's text (for hashing) and its compiled template."""
        text = self._read(filename)
        try:
            return text, self._env.from_string(text)
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(f"{self.directory / filename}:{exc.lineno}: {exc.message}") from exc

    def _load_pair(self, name: str) -> PromptPair:
        system_file, user_file = f"{name}.system.j2", f"{name}.user.j2"
        system_text, system_template = self._compile(system_file)
        user_text, user_template = self._compile(user_file)
        self._user_texts.append(user_text)
        # The system prompt is static; rendering it with no variables proves it has none.
        system = _render(self.directory / system_file, system_template)
        digest = hashlib.sha256(
            f"{system_file}\0{system_text}\0{user_file}\0{user_text}".encode()
        ).hexdigest()
        return PromptPair(name, system, user_template, digest, self.directory / user_file)

    def require_pack(self, session_id: str) -> PromptPair:
        """The follow-up counting prompts, or a configuration error naming what is missing."""
        if self.pack is None:
            raise ConfigError(
                f"session {session_id!r} does not fit one judge call, and the prompts folder "
                f"{self.directory} has no {PACK_CALL}.system.j2 / {PACK_CALL}.user.j2 for the "
                "follow-up calls (copy them from the packaged prompts)"
            )
        return self.pack

    def render_reask(self, problems: list[str]) -> str:
        return _render(self.directory / "reask.j2", self.reask, problems=problems)
