"""`research-judge label INPUT --labels LABELS.csv --annotator NAME`: label sessions on a page."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Literal

from ..errors import ConfigError
from .config import add_config_flag

DESCRIPTION = """\
Serve a local page (127.0.0.1 only, nothing loaded from elsewhere) that shows one session at a
time: the question, the answer with its citation markers linked to the references they cite,
and the trajectory (every reference collapsible and searchable). Keys: p pass, f fail (both save
and move on), s skip, u undo the last label, ? help; an optional note goes with each label.
Blind by default: the judge's verdict is not shown unless --show-judge.

Each label is appended to LABELS at once as a row session_id,label,annotator,labelled_at,note
and flushed to disk; stopping the command (even kill -9) loses nothing saved, and running it
again resumes at the next session this annotator has not labelled. `validate` reads the file as
it is; several annotators may share one file. The first line on stdout is the page's address.
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "label",
        help="label sessions pass/fail on a local page (blind, resumable, several annotators)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "input",
        metavar="INPUT",
        help="a sessions file (JSONL), or a results file written by grade (then --sessions too)",
    )
    p.add_argument(
        "--labels",
        required=True,
        metavar="LABELS.csv",
        help="the labels file to append to (created with its header if missing)",
    )
    p.add_argument(
        "--annotator",
        required=True,
        metavar="NAME",
        help="who is labelling: written on every row; a restart resumes this annotator's queue",
    )
    p.add_argument(
        "--sessions",
        metavar="SESSIONS.jsonl",
        help="with a results file as INPUT: the sessions it was graded from (their text)",
    )
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    p.add_argument(
        "--order",
        choices=("suggest", "input", "random"),
        help="suggest: the sessions that would most narrow the judge's agreement intervals "
        "first, as validate --suggest ranks them (the default with a results file); input: "
        "file order (the default with a sessions file); random: shuffled with --seed",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of --order random (default: 0)")
    p.add_argument(
        "--sample", type=int, metavar="N", help="label at most the first N sessions of the order"
    )
    p.add_argument(
        "--show-judge",
        action="store_true",
        help="show the judge's verdict and reasons (off by default, so labels stay independent)",
    )
    p.add_argument(
        "--script",
        metavar="FILE",
        help="no page: read keys from FILE (- for stdin), one per line: p or f (optionally "
        "followed by a note), s, u; lines starting with # are ignored",
    )
    add_config_flag(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..judge.policy import load_policy
    from ..label import LabelRun, LabelStore, load_items, order_items
    from ..label.queue import Order
    from ..safety import check_distinct

    if args.sample is not None and args.sample < 1:
        raise ConfigError(f"--sample must be 1 or more, got {args.sample}")
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0-65535, got {args.port}")
    if not args.annotator.strip():
        raise ConfigError("--annotator must be a name")
    check_distinct(
        [("INPUT", args.input), ("--sessions", args.sessions)], [("--labels", args.labels)]
    )
    items, results = load_items(args.input, args.sessions)
    order: Order = args.order or ("suggest" if results is not None else "input")
    store = LabelStore(args.labels, args.annotator.strip())
    lead: Literal["pass", "fail"] = _lead(results, store) if order == "suggest" else "fail"
    queue = order_items(
        items,
        order,
        seed=args.seed,
        sample=args.sample,
        lead=lead,
        policy=load_policy(args.config) if order == "suggest" else None,
    )
    labelling = LabelRun(queue, store, show_judge=args.show_judge)
    if args.script is not None:
        return _script(labelling, args.script)
    return _serve(labelling, args.port)


def _lead(results: Any, store: Any) -> Literal["pass", "fail"]:
    # The verdict that leads is the one holding the human class whose agreement interval is the
    # wider, from the labels so far (the team's majority), as validate --suggest decides it.
    from ..validate.agreement import pass_fail_stats
    from ..validate.dataset import pair
    from ..validate.suggest import weaker_class

    data, _ = pair(results, store.existing())
    return weaker_class(pass_fail_stats(data.human_pass, data.judge_pass, seed=0, n_boot=0))


def _serve(labelling: Any, port: int) -> int:
    from ..label.server import LabelServer

    try:
        server = LabelServer(labelling, port=port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from exc
    print(f"labelling at {server.url}", flush=True)
    print(
        f"research-judge label: {labelling.progress} in {labelling.store.path}; "
        "Ctrl-C stops (every label is already saved)",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    print(f"research-judge label: stopped at {labelling.progress}", file=sys.stderr)
    return 0


def _script(labelling: Any, path: str) -> int:
    from .._files import read_text
    from .._text import inline
    from ..label.run import UnknownSession

    # Session ids are the logs' text: printed through the one rule (``_text``), so an id cannot
    # start a CI workflow command in the job that runs this.
    text = sys.stdin.read() if path == "-" else read_text(path, "label script")
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, note = line.partition(" ")
        item = labelling.current()
        if key in ("p", "f"):
            if item is None:
                print(f"{path}:{number}: nothing left to label; stopping", file=sys.stderr)
                break
            verdict = "pass" if key == "p" else "fail"
            progress = labelling.label(item.session_id, verdict, note.strip())
            print(f"labelled {inline(item.session_id)} {verdict} ({progress})")
        elif key == "s" and item is not None:
            labelling.skip()
            print(f"skipped {inline(item.session_id)}")
        elif key == "u":
            try:
                print(f"undid {inline(labelling.undo())}")
            except (ConfigError, UnknownSession) as exc:
                raise ConfigError(f"{path}:{number}: {exc}") from exc
        elif key != "s":
            raise ConfigError(f"{path}:{number}: unknown key {key!r} (expected p, f, s or u)")
    print(f"research-judge label: {labelling.progress} in {labelling.store.path}")
    return 0
