"""Canonical JSON and its hash: the identity of a request, a judge configuration, a session.

Sorted keys, no whitespace, UTF-8 kept as is: the same value always gives the same bytes. This
module imports nothing of the package, so anything may use it without import cycles.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
