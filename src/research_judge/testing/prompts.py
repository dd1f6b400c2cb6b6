"""Reading a rendered prompt back, for fake judges that must answer about the right references."""

from __future__ import annotations

# The counting prompt lists the ids on one line: "The trajectory holds 2 references: r1, r2."
_LISTING = "The trajectory holds"


def reference_ids_in(prompt: str) -> list[str]:
    """The reference ids a rendered counting prompt lists ([] for a session without any)."""
    for line in prompt.splitlines():
        if line.startswith(_LISTING) and ":" in line:
            return [part.strip(" .") for part in line.split(":", 1)[1].split(",")]
    return []
