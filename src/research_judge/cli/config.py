"""The config file: every flag of every verb, one table per verb, so CI commands stay short.

Where it comes from, first found wins: ``--config FILE``; ``research-judge.toml`` in the working
directory; the ``[tool.research-judge]`` table of ``pyproject.toml`` there. Inside, one table per
verb (``[grade]``, ``[validate]``, ``[compare]``, ``[report]``, ``[tasks]``) whose keys are the
verb's long flags without the dashes (``max-cost = 2.0``, ``no-cache = true``,
``where = ["lang=en"]``), plus ``[policy]``, which ``grade`` reads through ``load_policy``.

Generic over argparse: the keys a table may hold are read from the verb's parser, so a new flag
is configurable the day it is added. A value goes through the flag's own type and choices, flags
on the command line win, and an unknown table or key is an error naming it (exit 2), never
ignored.

Trust: the working directory is often a checked-out pull request. A file found there by
discovery may set how the judge grades, but not where keys or data go (``TRUSTED_ONLY``: a
``base-url`` would receive the API key, a ``store`` of ``/`` plus ``record`` would copy CI
secrets into recordings, ``prompts`` are templates from the repository). Those need a file the
user named: ``--config FILE`` or ``RESEARCH_JUDGE_CONFIG=FILE``. ``check_trust`` is that rule.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._toml import read_toml
from ..errors import ConfigError

FILE_NAME = "research-judge.toml"
PYPROJECT = "pyproject.toml"
PYPROJECT_TABLE = "tool.research-judge"
# Tables read elsewhere, not flags: [policy] is the verdict policy (judge/policy.py).
OWN_TABLES = frozenset({"policy"})
# Never from a file: what the file is, and the flags that print and exit.
_NOT_CONFIGURABLE = frozenset({"help", "version", "config"})
# Where keys and data go: only from a config file the user named, never from one found. And
# --force, which would let such a file aim an output at any of the user's files.
TRUSTED_ONLY = frozenset(
    {"base-url", "store", "prompts", "record", "replay", "cache-dir", "prices", "force"}
)
# Naming the config file in the environment is naming it, as --config is.
CONFIG_ENV = "RESEARCH_JUDGE_CONFIG"


@dataclass(frozen=True)
class Config:
    path: Path
    tables: Mapping[str, Any]  # verb or own table -> its contents, as TOML gave them
    named: bool = True  # given with --config or RESEARCH_JUDGE_CONFIG, not found by discovery

    def where(self, table: str) -> str:
        prefix = f"{PYPROJECT_TABLE}." if self.path.name == PYPROJECT else ""
        return f"{self.path}: [{prefix}{table}]"


def add_config_flag(parser: argparse.ArgumentParser | Any, help_extra: str = "") -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=f"TOML config file, one table per verb{help_extra} (default: ${CONFIG_ENV}, else "
        f"{FILE_NAME} or [{PYPROJECT_TABLE}] in {PYPROJECT} in the working directory, which may "
        f"not set {', '.join(sorted(TRUSTED_ONLY))})",
    )


def find_config(argv: Sequence[str], cwd: Path | None = None) -> Config | None:
    """The config file this command line uses, read and parsed; None when there is none."""
    explicit = _explicit_path(argv) or os.environ.get(CONFIG_ENV) or None
    if explicit is not None:
        return Config(Path(explicit), read_toml(Path(explicit)))
    folder = Path.cwd() if cwd is None else cwd
    own = folder / FILE_NAME
    if own.is_file():
        return Config(own, read_toml(own), named=False)
    pyproject = folder / PYPROJECT
    if pyproject.is_file():
        section = read_toml(pyproject).get("tool", {}).get("research-judge")
        if section is not None:
            if not isinstance(section, dict):
                raise ConfigError(f"{pyproject}: [{PYPROJECT_TABLE}] must be a table")
            return Config(pyproject, section, named=False)
    return None


def check_trust(config: Config) -> None:
    """A discovered config file may not set ``TRUSTED_ONLY`` keys, in any table."""
    if config.named:
        return
    for table, content in config.tables.items():
        if not isinstance(content, dict):
            continue
        for key in content:
            if key in TRUSTED_ONLY:
                raise ConfigError(
                    f"{config.where(table)}: {key!r} says where keys or data go, and this file "
                    f"was found in the working directory, not named; to allow it, name the file: "
                    f"--config {config.path} or {CONFIG_ENV}={config.path}"
                )


def config_notice(config: Config, argv: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """What the file sets for this command, said on stderr at start ('' when nothing)."""
    active = _active_verb(argv, _verb_parsers(parser))
    content = config.tables.get(active) if active is not None else None
    keys = list(content) if isinstance(content, dict) else []
    if active == "grade" and isinstance(config.tables.get("policy"), dict):
        keys.append("[policy]")
    if not keys:
        return ""
    return f"config: {config.path} sets {', '.join(keys)}"


def apply_config(
    parser: argparse.ArgumentParser, argv: Sequence[str], config: Config
) -> dict[str, list[Any]]:
    """Check every table of ``config`` and make the active verb's values its flags' defaults.

    Returns the list values given to repeatable flags, for ``drop_config_lists``: a repeatable
    flag on the command line replaces the file's list rather than adding to it.
    """
    check_trust(config)
    verbs = _verb_parsers(parser)
    for table, content in config.tables.items():
        if table in OWN_TABLES:
            continue
        if not isinstance(content, dict) and table not in verbs:
            raise ConfigError(
                f"{config.path}: {table!r} is outside any table; flags go in their verb's table, "
                f"e.g. [grade] (tables: {', '.join(sorted([*verbs, *OWN_TABLES]))})"
            )
        if table not in verbs:
            known = sorted([*verbs, *OWN_TABLES])
            raise ConfigError(f"{config.path}: unknown table [{table}]{_hint(table, known)}")
        if not isinstance(content, dict):
            raise ConfigError(f"{config.where(table)} must be a table of flag = value")
        options = _options(verbs[table])
        for key, value in content.items():
            if key not in options:
                raise ConfigError(
                    f"{config.where(table)}: unknown key {key!r}{_hint(key, sorted(options))}"
                )
            # Every table's values are checked, not only the running verb's: a typo in [grade]
            # should not wait for the nightly job to surface.
            _convert(options[key], value, f"{config.where(table)}: {key}")
    active = _active_verb(argv, verbs)
    if active is None or active not in config.tables:
        _default_config_path(parser, verbs, active, config)
        return {}
    leaf = verbs[active]
    options = _options(leaf)
    defaults: dict[str, Any] = {}
    lists: dict[str, list[Any]] = {}
    for key, value in config.tables[active].items():
        action = options[key]
        converted = _convert(action, value, f"{config.where(active)}: {key}")
        defaults[action.dest] = converted
        if isinstance(action, argparse._AppendAction):
            lists[action.dest] = converted
        # A required flag the file provides is no longer required on the command line.
        action.required = False
    leaf.set_defaults(**defaults)
    _default_config_path(parser, verbs, active, config)
    return lists


def drop_config_lists(args: argparse.Namespace, lists: Mapping[str, list[Any]]) -> None:
    """argparse appends command-line values to the default list; the flags must win instead."""
    for dest, from_file in lists.items():
        value = getattr(args, dest, None)
        if isinstance(value, list) and len(value) > len(from_file):
            setattr(args, dest, value[len(from_file) :])


def _default_config_path(
    parser: argparse.ArgumentParser,
    verbs: Mapping[str, argparse.ArgumentParser],
    active: str | None,
    config: Config,
) -> None:
    # A discovered file is the --config of the verb too: grade reads its [policy] from there.
    if active is not None and "config" in {a.dest for a in verbs[active]._actions}:
        verbs[active].set_defaults(config=str(config.path))


def _verb_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Table name -> the parser whose flags it configures; ``tasks`` is ``tasks run``."""
    out: dict[str, argparse.ArgumentParser] = {}
    for name, sub in _subparsers(parser).items():
        nested = _subparsers(sub)
        if not nested:
            out[name] = sub
        elif len(nested) == 1:
            out[name] = next(iter(nested.values()))
        else:
            out.update({f"{name}.{action}": leaf for action, leaf in nested.items()})
    return out


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _active_verb(argv: Sequence[str], verbs: Mapping[str, argparse.ArgumentParser]) -> str | None:
    # The top-level parser takes no option with a value, so the verb is the first word (and
    # the action of a verb with several, the second).
    words = [a for a in argv if not a.startswith("-")][:2]
    for size in (2, 1):
        name = ".".join(words[:size])
        if name in verbs:
            return name
    return None


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Config key (long flag without dashes) -> its action."""
    out: dict[str, argparse.Action] = {}
    for action in parser._actions:
        longs = [o[2:] for o in action.option_strings if o.startswith("--")]
        if not longs or action.dest in _NOT_CONFIGURABLE:
            continue
        if isinstance(action, argparse.BooleanOptionalAction):
            longs = [o for o in longs if not o.startswith("no-")]
        out[longs[0]] = action
    return out


def _convert(action: argparse.Action, value: object, where: str) -> Any:
    flag = f"--{next(o[2:] for o in action.option_strings if o.startswith('--'))}"
    if action.nargs == 0:  # store_true / store_false / BooleanOptionalAction / store_const
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false (the flag {flag}), got {value!r}")
        if isinstance(action, argparse.BooleanOptionalAction):
            return value
        if not value:
            return action.default
        return action.const
    if isinstance(action, argparse._AppendAction):
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list (repeatable flag {flag}), got {value!r}")
        return [_one(action, item, where, flag) for item in value]
    return _one(action, value, where, flag)


def _one(action: argparse.Action, value: object, where: str, flag: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConfigError(f"{where}: expected a value for {flag}, got {value!r}")
    text = str(value)
    converted: Any = text
    if action.type is not None and callable(action.type):
        try:
            converted = action.type(text)
        except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
            raise ConfigError(f"{where}: invalid value for {flag}: {exc}") from exc
    if action.choices is not None and converted not in action.choices:
        shown = ", ".join(map(str, action.choices))
        raise ConfigError(f"{where}: {value!r} is not one of {shown}")
    return converted


def _explicit_path(argv: Sequence[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--config" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--config="):
            return arg.partition("=")[2]
    return None


def _hint(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    suggestion = f"; did you mean {close[0]!r}?" if close else ""
    return f"{suggestion} (known: {', '.join(known)})"
