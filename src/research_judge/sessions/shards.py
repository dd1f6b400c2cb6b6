"""Which shard of N a session belongs to (``grade --shard I/N``, ``research-judge merge``).

A SHA-256 of the session id alone: the same split on every machine, in every rerun, whatever
the file's order or the process's hash seed.
"""

from __future__ import annotations

import hashlib

from ..errors import ConfigError


def shard_of(session_id: str, count: int) -> int:
    """The shard (1..count) of this session id."""
    digest = hashlib.sha256(f"shard\0{session_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/8"`` -> ``(2, 8)``: shard I of N, 1 <= I <= N."""
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise ConfigError(f"--shard takes I/N (e.g. 2/8), got {text!r}") from None
    if not sep or n < 1 or not 1 <= i <= n:
        raise ConfigError(f"--shard takes I/N with 1 <= I <= N, got {text!r}")
    return i, n
