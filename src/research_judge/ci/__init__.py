"""What CI needs on top of each verb's own output: gates, JUnit XML, GitHub Actions.

- ``gates``: the pass/fail decisions of ``compare`` and ``validate`` as named ``Gate`` objects,
  one per metric or bar, so the exit status, JUnit test cases and annotations agree;
- ``junit``: JUnit XML (built with junitparser) for grade, validate, compare and tasks;
- ``github``: the step summary and workflow commands (annotations), escaped;
- ``markdown``: the short Markdown summaries the verbs append to the step summary;
- ``output``: writing an output file, or stdout for ``-``.
"""

from __future__ import annotations

from ..compare.model import FAIL_ON
from .gates import Gate, compare_gates, failed, validate_gates

__all__ = ["FAIL_ON", "Gate", "compare_gates", "failed", "validate_gates"]
