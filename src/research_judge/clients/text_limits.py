"""Length caps on the reply's free-text fields, added to the schema for servers that enforce them.

Servers whose structured output compiles the schema into a grammar (llama.cpp, vLLM, Ollama)
enforce ``maxLength``, so a small model cannot ramble until its reply is cut at the token cap.
OpenAI's strict mode refuses ``maxLength``, so the judge's schemas (which are also what
recordings and the cache hash) leave them out, and the OpenAI-compatible client adds them only
for other servers. Replies are not rejected for length: a reply holding the contract's fields is
valid whatever the server enforced. The judge's planner sizes its worst-case reply from the same
table.
"""

from __future__ import annotations

from typing import Any

TEXT_LIMITS: dict[str, int] = {"evidence": 400, "claim": 400, "reasoning": 800}


def with_text_limits(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a wire schema whose free-text string properties carry ``maxLength``."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {
                name: _limited(name, prop) if isinstance(prop, dict) else prop
                for name, prop in value.items()
            }
        elif isinstance(value, dict):
            out[key] = with_text_limits(value)
        else:
            out[key] = value
    return out


def _limited(name: str, prop: dict[str, Any]) -> dict[str, Any]:
    prop = with_text_limits(prop)
    kind = prop.get("type")
    is_text = kind == "string" or (isinstance(kind, list) and "string" in kind)
    if name in TEXT_LIMITS and is_text:
        prop = {**prop, "maxLength": TEXT_LIMITS[name]}
    return prop
