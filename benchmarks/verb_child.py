"""Child process of the scale benchmark: run one verb as the CLI does, then print its peak RSS
and CPU as JSON on the last line of stderr.

    python verb_child.py validate RESULTS --labels LABELS
    python verb_child.py grade-summary RESULTS      # what grade does after its last session

``grade-summary`` is the closing summary of ``grade`` (``--out`` read back and folded), the part
of a run whose memory grew with the number of sessions; the rest of ``grade`` is measured by
the rss benchmark. Peak RSS is ``VmHWM`` of this process image (see rss_child.py for why).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time

from rss_child import peak_rss_kb


def main(argv: list[str]) -> int:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if argv[0] == "grade-summary":
        from research_judge.cli._grading import _covered_rows
        from research_judge.results.rows import iter_rows
        from research_judge.results.summary import format_summary, summarize

        # The run's own list of ids (the engine keeps it); not timed, as grade has it at hand.
        order = [r.session_id for r in iter_rows(argv[1]) if not isinstance(r, Exception)]
        cpu0, wall0 = time.process_time(), time.perf_counter()
        text = format_summary(summarize(_covered_rows(argv[1], order)))
        code = 0 if text else 1
    else:
        from research_judge.cli import main as cli

        with contextlib.redirect_stdout(io.StringIO()):
            code = cli(argv)
    figures = {
        "code": code,
        "cpu": time.process_time() - cpu0,
        "wall": time.perf_counter() - wall0,
        "maxrss_kb": peak_rss_kb(),
    }
    print(json.dumps(figures), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
