"""Names a package exports but imports on first use, so ``import research_judge`` and ``--help``
stay cheap (no SDK, no scikit-learn until a name that needs one is used)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``exports`` is read from its module
    (relative to ``package``, or absolute) when first asked for, then kept on the package."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        vars(sys.modules[package])[name] = value  # later lookups skip this function
        return value

    return __getattr__
