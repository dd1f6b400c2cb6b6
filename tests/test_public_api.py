"""The package's public names resolve, and importing it loads no heavy dependency."""

from __future__ import annotations

import subprocess
import sys

import research_judge


def test_all_lists_exactly_the_exports() -> None:
    assert set(research_judge.__all__) == {"__version__", *research_judge._EXPORTS}


def test_every_public_name_resolves() -> None:
    for name in research_judge.__all__:
        assert getattr(research_judge, name) is not None, name


def test_import_is_cheap() -> None:
    code = (
        "import sys, research_judge; "
        "print(sorted(m for m in ('openai', 'anthropic', 'sklearn', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
