"""The robustness suite: hostile inputs kept as fixtures (see ``hostile.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

# The shared builders (support.py and friends) live one folder up.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
