"""The key, schema and reply both Anthropic client test files send: offline through
``httpx2.MockTransport`` (test_clients_anthropic) and over real HTTP (test_clients_anthropic_http).

A helper module rather than one test file importing another (see results_support).
"""

from __future__ import annotations

from typing import Any

KEY = "sk-ant-test-0123456789abcdef"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {"type": "string"}}},
    "required": ["verdicts"],
    "additionalProperties": False,
}
VERDICTS = {"verdicts": ["r1 relevant", "r2 unused — ünïcode"]}
