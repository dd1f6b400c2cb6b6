"""`research-judge validate`: how far the judge's verdicts agree with human labels."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._files import check_replaceable
from .._text import inert_json, inline, inline_lines
from ..ci.output import STDOUT
from ..errors import ConfigError, ExitCode, UserError
from ..stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from ._ci import add_ci_flags, check_stdout, emit, main_output
from .config import add_config_flag

DESCRIPTION = """\
Compare the judge's pass/fail verdicts (and 1-3 scores, when the labels carry them) with human
labels on the sessions both cover. Reports the 2x2 table, raw agreement, Cohen's kappa with 95%
confidence intervals, agreement on human passes and on human fails separately (a lenient judge
agrees on the first far more than the second), an exact McNemar test of the direction of
disagreement, per-criterion weighted kappa, a length-bias test, and how many more labels would
make the numbers precise. Sessions the judge errored on are left out and listed, never counted.
It also corrects the judge's pass rate over the whole results file for the judge's measured
errors (Rogan-Gladen), and with --suggest N lists the unlabelled sessions worth labelling next.
Exit 0, or 1 when a --min-kappa / --min-fail-agreement bar is not met (each failed bar is
printed), or 2 on bad input.
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "validate",
        help="compare judge verdicts with human pass/fail labels (kappa, leniency, length bias)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("results", metavar="RESULTS.jsonl", help="results file written by `grade`")
    p.add_argument(
        "--labels",
        required=True,
        action="append",
        metavar="LABELS",
        help="human labels: CSV with header session_id,label (pass/fail) and optional 1-3 "
        "columns effectiveness, fluff, structure and annotator; or JSONL (.jsonl) with the same "
        "keys. Several annotators: one row per annotator and session (annotator column), or "
        "--labels once per annotator's file; the majority label is compared with the judge "
        "(ties left out) and the annotators' agreement with each other is reported beside it",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (every statistic, intervals, warnings) instead of text",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=BOOTSTRAP_SEED,
        help="random seed of the bootstrap, so reports are reproducible (default: %(default)s)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=BOOTSTRAP_RESAMPLES,
        metavar="N",
        help="bootstrap resamples for the kappa interval (default: %(default)s; 0 uses the "
        "analytic interval only)",
    )
    p.add_argument(
        "--min-kappa",
        type=float,
        metavar="X",
        help="gate: exit 1 when Cohen's kappa is below X (or undefined); the report shows the bar",
    )
    p.add_argument(
        "--min-fail-agreement",
        type=float,
        metavar="Y",
        help="gate: exit 1 when the judge agrees on less than this share (0-1) of human fails",
    )
    p.add_argument(
        "--suggest",
        type=int,
        metavar="N",
        help="also write a CSV of the N unlabelled graded sessions to label next: judge passes "
        "and fails alternate, each nearest the verdict threshold first (see --suggest-out)",
    )
    p.add_argument(
        "--suggest-out",
        default="suggested-labels.csv",
        metavar="PATH",
        help="where --suggest writes its CSV (default %(default)s; never overwritten; - for "
        "stdout, the text report then going to stderr)",
    )
    add_ci_flags(p)
    add_config_flag(p)
    # Any one of these may be `-`: standard input (cli._stdin).
    p.set_defaults(run=run, stdin_inputs={"results": "RESULTS", "labels": "--labels"})


def run(args: argparse.Namespace) -> int:
    from ..ci.gates import failed, validate_gates
    from ..ci.github import command
    from ..ci.junit import to_xml, validate_cases
    from ..ci.markdown import validate_markdown
    from ..results.rows import ResultsRun
    from ..safety import check_distinct
    from ..validate import read_labels, render_text, validate_run
    from ..validate.bars import check_bars

    if args.bootstrap < 0:
        raise ConfigError(f"--bootstrap must be 0 or more, got {args.bootstrap}")
    check_bars(args.min_kappa, args.min_fail_agreement)
    suggest_out = args.suggest_out if args.suggest is not None else None
    check_distinct(
        [("RESULTS", args.results), *(("--labels", path) for path in args.labels)],
        [("--junit", args.junit), ("--suggest-out", suggest_out)],
    )
    if args.suggest is not None and args.suggest < 1:
        raise ConfigError(f"--suggest must be 1 or more, got {args.suggest}")
    check_stdout(args)
    if suggest_out is not None:  # before any work, as every writer (``_files``)
        from ..validate.suggest import never_ours

        check_replaceable("--suggest-out", suggest_out, never_ours, force=args.force)
    to_stdout = suggest_out == STDOUT
    if to_stdout and (args.json or args.junit == STDOUT):
        raise ConfigError(
            f"--suggest-out - and {'--json' if args.json else '--junit -'} both want stdout; "
            "give one of them a file"
        )
    labels = read_labels(args.labels)
    results = ResultsRun.load(args.results)  # rows: a million results fit
    report = validate_run(
        results,
        labels,
        seed=args.seed,
        n_boot=args.bootstrap,
        min_kappa=args.min_kappa,
        min_fail_agreement=args.min_fail_agreement,
    )
    if args.suggest is not None:
        _write_suggestions(results, labels, report.pass_fail, args)
    # With the suggestions' CSV on stdout, the verb's own text moves to stderr.
    out = sys.stderr if to_stdout else main_output(args)
    if args.json:
        print(inert_json(json.dumps(report.to_dict(), indent=2, allow_nan=False)), file=out)
    else:
        out.write(inline_lines(render_text(report)))  # every line inert (``_text``)
    gates = validate_gates(report)
    bad = failed(gates)

    def annotations() -> list[str]:
        lines = [
            command("error", g.message, title=f"research-judge validate: {g.name}") for g in bad
        ]
        if report.n == 0:
            lines.append(
                command("error", "no labelled session has a judge verdict", title="validate")
            )
        return lines

    emit(
        args,
        junit=lambda: to_xml("research-judge validate", validate_cases(report, gates)),
        summary=lambda: validate_markdown(report, gates),
        annotations=annotations,
    )
    if report.n == 0:
        # Nothing was compared: almost always the wrong labels file for these results.
        print(
            "research-judge validate: error: no labelled session has a judge verdict "
            f"({', '.join(args.labels)} vs {args.results})",
            file=sys.stderr,
        )
        return ExitCode.FAILED
    for gate in bad:
        print(f"research-judge validate: gate failed: {inline(gate.message)}", file=sys.stderr)
    return ExitCode.FLAGGED if bad else ExitCode.OK


def _stdout_safe(table: str) -> str:
    """The suggestions CSV as it may go to stdout, or a refusal.

    A CSV cell cannot be escaped without changing the id a labeller copies back, so the printing
    rule cannot be applied to it; a row whose text a CI runner would read as a workflow command
    (a line starting ``::``, ``##[`` anywhere, a control character) is refused instead, and a file
    takes the same rows unchanged.
    """
    unsafe = [line for line in table.splitlines() if inline(line) != line]
    if unsafe:
        raise UserError(
            f"--suggest-out -: {len(unsafe)} line(s) of the suggestions hold text a CI runner "
            f"would read as a command (first: {inline(unsafe[0])[:80]}); write them to a file "
            "instead: --suggest-out FILE"
        )
    return table


def _write_suggestions(results: Any, labels: Any, stats: Any, args: argparse.Namespace) -> None:
    from ..ci.output import write_output
    from ..judge.policy import load_policy
    from ..validate.suggest import suggest, to_csv, weaker_class, write_suggestions

    # Margins are distances from the floors the sessions were graded against: the [policy] of
    # the same config file `grade` read, not the defaults.
    lead = weaker_class(stats)
    picked = suggest(results, labels, args.suggest, load_policy(args.config), lead)
    if args.suggest_out == STDOUT:
        write_output(STDOUT, _stdout_safe(to_csv(picked)), "suggestions")
    else:
        write_suggestions(args.suggest_out, picked, force=args.force)
    fails = sum(s.judge_verdict == "fail" for s in picked)
    n = args.suggest
    where = "stdout" if args.suggest_out == STDOUT else args.suggest_out
    short = f" (only {len(picked)} unlabelled graded sessions)" if len(picked) < n else ""
    print(
        f"research-judge validate: wrote {len(picked)} sessions to label to {where}"
        f"{short}: {fails} judge fails and {len(picked) - fails} judge passes, nearest the "
        f"threshold first, judge {_plural(lead)} leading (agreement on human {_plural(lead)} "
        "has the wider "
        "interval)",
        file=sys.stderr,
    )


def _plural(verdict: str) -> str:
    return "passes" if verdict == "pass" else "fails"
