"""`research-judge compare BASELINE CURRENT`: did the current run get worse?

Exit 0 when every gate passed, 1 when one failed (``compare.model.FAIL_RULE``: a regression or a
significant drop by default, any flagged drop with ``--fail-on any``; or the judge changed and
that was not allowed), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._text import inert_json, inline, inline_lines
from ..compare.model import (
    DEFAULT_CRITICAL_THRESHOLD,
    DEFAULT_FAIL_ON,
    DEFAULT_THRESHOLD,
    FAIL_ON,
    FAIL_RULE,
)
from ..errors import ExitCode, UserError
from ._ci import add_ci_flags, check_stdout, emit, main_output
from .config import add_config_flag


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare two results files and flag metrics that dropped",
        description=(
            "Compare two results files on the sessions they share: pass rate and the six "
            "criteria (scores on the 0..1 scale as (score - 1) / 2), each with a paired "
            "significance test, plus regressions (pass -> fail) and fixes. By default: "
            f"{FAIL_RULE}. Also 1 when the judge changed (unless allowed); 2 on bad input."
        ),
    )
    p.add_argument("baseline", metavar="BASELINE.jsonl", help="results of the reference run")
    p.add_argument("current", metavar="CURRENT.jsonl", help="results of the run to check")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (the comparison's keys plus tests, judges, movers, warnings)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        metavar="X",
        help="flag a metric that drops by more than X on the 0..1 scale (default %(default)s)",
    )
    p.add_argument(
        "--critical-threshold",
        type=float,
        default=DEFAULT_CRITICAL_THRESHOLD,
        metavar="X",
        help="a pass-rate drop beyond X is flagged critical rather than warning "
        "(default %(default)s)",
    )
    p.add_argument(
        "--rejudged",
        metavar="REJUDGED.jsonl",
        help="the baseline's sessions graded by the current judge: splits every delta into "
        "judge_shift (REJUDGED - BASELINE) and agent_change (CURRENT - REJUDGED), each with "
        "its paired test",
    )
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default=DEFAULT_FAIL_ON,
        help="significant: exit 1 on a regressed session or a drop the paired test finds "
        "significant (a drop within noise only warns); any: exit 1 on every drop past the "
        "threshold too (default %(default)s)",
    )
    p.add_argument(
        "--allow-judge-change",
        action="store_true",
        help="do not fail when the two runs were graded by different judges (model or prompt "
        "hashes); the deltas then mix the agent's change with the judge's",
    )
    add_ci_flags(p)
    add_config_flag(p)
    # Any one of these may be `-`: standard input (cli._stdin).
    p.set_defaults(
        run=run,
        stdin_inputs={"baseline": "BASELINE", "current": "CURRENT", "rejudged": "--rejudged"},
    )


def run(args: argparse.Namespace) -> int:
    from ..ci.gates import REGRESSIONS_GATE, compare_gates, failed
    from ..ci.github import command
    from ..ci.junit import gate_cases, to_xml
    from ..ci.markdown import compare_markdown
    from ..compare import compare_runs, render_text
    from ..results.rows import ResultsRun
    from ..safety import check_distinct

    check_stdout(args)
    check_distinct(
        [("BASELINE", args.baseline), ("CURRENT", args.current), ("--rejudged", args.rejudged)],
        [("--junit", args.junit)],
    )
    # Rows, not full results: a run of a million sessions fits (results.rows).
    baseline = ResultsRun.load(args.baseline)
    current = ResultsRun.load(args.current)
    rejudged = None if args.rejudged is None else ResultsRun.load(args.rejudged)
    cmp = compare_runs(
        baseline,
        current,
        threshold=args.threshold,
        critical_threshold=args.critical_threshold,
        rejudged=rejudged,
    )
    if cmp.n_common == 0:
        # A gate that passes because it compared nothing would hide a broken pipeline.
        raise UserError(
            f"{args.baseline} and {args.current} share no session ids: nothing to compare"
        )
    # `--rejudged` (a rerun of the baseline by the current judge) separates the two changes,
    # so it allows a judge change too.
    allowed = args.allow_judge_change or rejudged is not None
    gates = compare_gates(cmp, fail_on=args.fail_on, allow_judge_change=allowed)
    out = main_output(args)
    if args.json:
        data = json.dumps(cmp.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)
        print(inert_json(data), file=out)  # ids exact, nothing a CI runner would run
    else:
        # Every line inert (``_text``), whatever a results file put in an id or a warning.
        print(inline_lines(render_text(cmp)), end="", file=out)
    bad = failed(gates)
    # The text's verdict line speaks of flags only; the gates decide the exit status: say which
    # failed and which drops were let through, and why.
    for gate in gates:
        if gate.waived:
            print(f"research-judge compare: not failing: {inline(gate.message)}", file=sys.stderr)
        elif not gate.passed:
            # The regressed ids come from the results files: inert (``_text``).
            ids = f": {gate.detail}" if gate.name == REGRESSIONS_GATE else ""
            print(f"research-judge compare: failing: {inline(gate.message + ids)}", file=sys.stderr)

    def annotations() -> list[str]:
        lines = [
            command("error", g.message, title=f"research-judge compare: {g.name}") for g in bad
        ]
        lines += [
            command("warning", g.message, title=f"research-judge compare: {g.name}")
            for g in gates
            if g.waived
        ]
        lines += [
            command("error", "passed in the baseline, fails now", title=f"regression: {sid}")
            for sid in cmp.regressions
        ]
        return lines

    emit(
        args,
        junit=lambda: to_xml("research-judge compare", gate_cases(gates)),
        summary=lambda: compare_markdown(cmp, gates, fail_on=args.fail_on),
        annotations=annotations,
    )
    return ExitCode.FLAGGED if bad else ExitCode.OK
