"""Resolve an ``--agent package.module:function`` spec to a callable, the way uvicorn resolves
its app: put a directory (the current one by default) on ``sys.path``, import, getattr.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from ..errors import ConfigError
from .running import Agent

_SHAPE = "expected 'package.module:function'"


def load_agent(spec: str, app_dir: str | Path = ".") -> Agent:
    """Import ``module:attr`` (``attr`` may be dotted, e.g. ``mod:Agent.run``) from ``app_dir``.

    Every way this can go wrong raises ``ConfigError`` with a one-line message naming the spec.
    """
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path or ":" in attr_path:
        raise ConfigError(f"--agent {spec!r}: {_SHAPE}")
    directory = str(Path(app_dir).resolve())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # Only a missing module *named by the spec* is the user's typo; a missing dependency
        # inside the agent's module deserves its own name in the message.
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise ConfigError(f"--agent {spec!r}: no module named {exc.name!r}") from exc
        raise ConfigError(f"--agent {spec!r}: importing {module_name!r} failed: {exc}") from exc
    except Exception as exc:
        message = f"importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        raise ConfigError(f"--agent {spec!r}: {message}") from exc
    target: object = module
    for part in attr_path.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as exc:
            raise ConfigError(f"--agent {spec!r}: {module_name!r} has no {attr_path!r}") from exc
    if not callable(target):
        kind = type(target).__name__
        raise ConfigError(f"--agent {spec!r}: {attr_path!r} is a {kind}, not a callable")
    return target
