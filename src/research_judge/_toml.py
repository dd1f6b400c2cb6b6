"""Reading a TOML config file: the CLI's config (every verb's flags) and the verdict policy read
the same files, so they fail the same way, naming the file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .errors import ConfigError


def read_toml(path: Path) -> dict[str, Any]:
    """The file's tables; a file that cannot be read or parsed is a ``ConfigError`` naming it."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 (byte {exc.start + 1})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
