"""The Python API: the CLI's verbs as functions over objects in memory (contract section 10).

    import research_judge as rj
    results = rj.grade(sessions, model="gpt-4.1-mini")     # list[Result], input order
    rj.validate(results, {"s-1": "pass"}).to_dict()        # == validate --json
    rj.compare(baseline, results).regressions
    rj.to_dataframe(results)

``grade`` builds the same client chain as ``research-judge grade`` (``clients.chain``), with the
same settings and defaults, grades through the same engine into a list instead of a file, and
closes its clients before returning. Every argument that names data takes the objects or a path.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import warnings
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeAlias, TypeVar, cast

from pydantic import ValidationError

from ._validation import describe_validation_error
from .clients.chain import ClientSettings
from .compare import DEFAULT_CRITICAL_THRESHOLD, DEFAULT_THRESHOLD
from .cost.prices import PriceTable
from .cost.windows import WindowTable
from .engine.progress import Progress
from .engine.run import RunOptions, grade_sessions
from .engine.select import Selection, selected
from .errors import (
    InputFileError,
    InvalidSessionsError,
    MaxCostReached,
    ProviderDownError,
    UserError,
)
from .grading import check_jury, juror_specs, open_client, run_limits, run_prices, samples_for
from .judge.build import build_judge
from .judge.estimate import Budget, Estimator
from .judge.policy import VerdictPolicy, load_policy
from .judge.settings import DEFAULT_REPEATS, JudgeSettings
from .report import DEFAULT_WORST
from .results.model import Result, read_results
from .results.sink import ResultsList
from .safety import check_finite
from .safety.settings import DEFAULT_MAX_REF_BYTES
from .sessions.model import Session, iter_sessions
from .sessions.store import open_store
from .stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

if TYPE_CHECKING:
    import pandas

    from .compare import Comparison
    from .results.rows import ResultsRun
    from .validate import Labels, ValidationReport

PathLike: TypeAlias = str | os.PathLike[str]
SessionsInput: TypeAlias = PathLike | Iterable[Session | Mapping[str, Any]]
ResultsInput: TypeAlias = PathLike | Iterable[Result]
LabelsInput: TypeAlias = "PathLike | Mapping[str, str] | Labels"

P = ParamSpec("P")
T = TypeVar("T")

_C, _J = ClientSettings, JudgeSettings  # their fields' defaults are the defaults below


async def agrade(
    sessions: SessionsInput,
    *,
    model: str = _C.model,
    provider: str = _C.provider,
    base_url: str | None = _C.base_url,
    api_key: str | None = _C.api_key,
    mode: str | None = _C.mode,
    timeout: float | None = _C.timeout,  # noqa: ASYNC109 (one HTTP request's, not this call's)
    concurrency: int = _C.concurrency,
    retries: int = _C.retries,
    down_after: float = _C.down_after,
    cache: bool = _C.cache,
    cache_dir: PathLike | None = _C.cache_dir,
    record: PathLike | None = _C.record,
    replay: PathLike | None = _C.replay,
    token_field: str | None = _C.token_field,
    batch: bool = _C.batch,
    batch_poll: float = _C.batch_poll,
    batch_dir: PathLike | None = _C.batch_dir,
    max_attempts: int = _J.max_attempts,
    temperature: float | None = _J.temperature,
    strict_evidence: bool = _J.strict_evidence,
    counting_max_tokens: int = _J.counting_max_tokens,
    scoring_max_tokens: int = _J.scoring_max_tokens,
    max_cost: float | None = None,
    repeats: int = DEFAULT_REPEATS,
    prompts: PathLike | None = None,
    policy: VerdictPolicy | PathLike | None = None,
    prices: PriceTable | PathLike | None = None,
    context_window: int | None = None,
    progress: bool = False,
    store: str | None = None,
    max_ref_bytes: int = DEFAULT_MAX_REF_BYTES,
    jury: str | Sequence[str] | None = None,
    where: Mapping[str, str] | None = None,
    sample: int | None = None,
    seed: int = Selection.seed,
) -> list[Result]:
    """Grade ``sessions`` and return one ``Result`` per session, in input order.

    ``sessions``: dicts or ``Session`` objects, or the path of a sessions JSONL file. Every
    session is checked first: any bad one raises ``InvalidSessionsError`` listing them all, and
    nothing is sent. The settings and their defaults are the ``grade`` command's (``cache``
    is ``not --no-cache``; ``policy`` a ``VerdictPolicy`` or a TOML file with a [policy] table;
    ``prices`` a ``PriceTable`` or a price file adding to the shipped table, whose
    ``context_window`` entries count too; ``context_window`` overrides the model's window;
    ``repeats`` K samples of every call, combined, as ``--repeats``). ``progress`` prints the
    CLI's progress line on stderr. ``store`` (a folder or ``s3://bucket/prefix``) is where
    references with ``content_ref`` are read from, as ``grade --store``; ``max_ref_bytes`` is
    the largest object read from it (``--max-ref-bytes``).
    ``jury`` (``"provider:model,..."`` or a list of such) adds jurors to the ``model`` judge, one
    client chain each, as ``--jury``: every call gets one sample per juror, combined as
    ``repeats`` are. ``where`` (metadata key -> value) and ``sample``/``seed`` choose the
    sessions graded, as ``--where``/``--sample``/``--seed``. A model whose context window is
    guessed is a ``UserWarning``, the line the CLI prints.
    ``counting_max_tokens`` / ``scoring_max_tokens`` are the output allowances of the two calls
    (``--counting-max-tokens`` / ``--scoring-max-tokens``).

    ``batch=True`` sends every call through the provider's batch API at batch prices, as
    ``grade --batch``; ``batch_dir`` (required with it) is the folder its batches are recorded
    in (the CLI's ``RESULTS.jsonl.batches/``): a call with the same folder picks up batches still
    out instead of sending them again. ``batch_poll`` is ``--batch-poll``.

    ``max_cost`` (USD) stops sending new sessions before spend plus the estimates of those in
    flight would pass it, as ``grade --max-cost``; the model needs a price. When it stops the
    run, ``MaxCostReached`` is raised with ``.results``: the sessions graded, in input order
    (what the CLI's results file holds), and ``.not_sent``.

    A provider that stays down raises ``ProviderDownError`` with ``.results``, the sessions
    graded before the stop, in input order; a prompt template that cannot
    render a session raises ``ConfigError``. Every other failure is one session's ``error``.
    """
    selection = Selection(where=dict(where or {}), sample=sample, seed=seed)
    items = selected(_sessions(sessions), selection)
    jurors = juror_specs(jury)
    check_jury(jurors, repeats)
    settings = ClientSettings(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key=api_key,
        mode=mode,
        timeout=timeout,
        concurrency=concurrency,
        retries=retries,
        down_after=down_after,
        cache=cache,
        cache_dir=_path(cache_dir),
        record=_path(record),
        replay=_path(replay),
        token_field=token_field,
        batch=batch,
        batch_poll=batch_poll,
        batch_dir=_path(batch_dir),
    )
    judge_settings = JudgeSettings(
        max_attempts=max_attempts,
        temperature=temperature,
        strict_evidence=strict_evidence,
        counting_max_tokens=counting_max_tokens,
        scoring_max_tokens=scoring_max_tokens,
    )
    check_finite("max_cost", max_cost)
    chosen_policy = policy if isinstance(policy, VerdictPolicy) else load_policy(_path(policy))
    table = prices if isinstance(prices, PriceTable) else PriceTable.load(_path(prices))
    table = run_prices(table, settings)  # every result's cost and the max_cost estimates
    sink = ResultsList()
    content_store = open_store(store, max_ref_bytes) if store is not None else None
    client = open_client(settings, jurors, _path(prompts))
    try:
        windows = WindowTable.load(None if isinstance(prices, PriceTable) else _path(prices))
        limits, notices = run_limits(windows, settings, jurors, context_window)
        for notice in notices:
            warnings.warn(f"research-judge: {notice}", UserWarning, stacklevel=2)
        judge = build_judge(
            client,
            prompts=_path(prompts),
            policy=chosen_policy,
            settings=judge_settings,
            prices=table,
            repeats=samples_for(client, repeats),
            limits=limits,
        )
        budget = Budget(max_cost, Estimator(judge, table)) if max_cost is not None else None
        shown = Progress(len(items), stream=sys.stderr) if progress else None
        try:
            stats = await grade_sessions(
                items,
                sink,
                judge,
                RunOptions.for_client(settings),
                progress=shown,
                budget=budget,
                store=content_store,
            )
        except ProviderDownError as stop:
            stop.results = sink.results  # what the CLI's results file would hold: not lost
            raise
    finally:
        await client.aclose()
    if max_cost is not None and stats.stopped == "budget":
        raise MaxCostReached(max_cost, sink.results, stats.not_sent)
    return sink.results


def _sync(coroutine: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking form of an ``async`` API function, with the same signature."""

    @functools.wraps(coroutine)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coroutine(*args, **kwargs))
        name = coroutine.__name__
        raise UserError(
            f"{name.removeprefix('a')}() cannot run inside a running event loop (Jupyter and "
            f"IPython run one): use `await research_judge.{name}(...)` with the same arguments"
        )

    return run


grade = _sync(agrade)
grade.__name__ = grade.__qualname__ = "grade"
grade.__doc__ = f"""``agrade`` for code without an event loop (scripts; not Jupyter, which runs one
and should ``await research_judge.agrade(...)``).

{agrade.__doc__}"""


def validate(
    results: ResultsInput,
    labels: LabelsInput,
    *,
    seed: int = BOOTSTRAP_SEED,
    n_boot: int = BOOTSTRAP_RESAMPLES,
    min_kappa: float | None = None,
    min_fail_agreement: float | None = None,
) -> ValidationReport:
    """The judge's agreement with human labels; ``.to_dict()`` is ``validate --json``.

    ``labels``: a mapping session id -> ``"pass"``/``"fail"``, a ``Labels``, or a labels file
    (CSV or JSONL, as for ``validate --labels``). ``min_kappa`` / ``min_fail_agreement`` set
    the gates of ``validate --min-kappa / --min-fail-agreement``: ``.gates_passed``.
    """
    from .validate import validate_run

    return validate_run(
        _run(results),
        _labels(labels),
        seed=seed,
        n_boot=n_boot,
        min_kappa=min_kappa,
        min_fail_agreement=min_fail_agreement,
    )


def compare(
    baseline: ResultsInput,
    current: ResultsInput,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    critical_threshold: float = DEFAULT_CRITICAL_THRESHOLD,
    rejudged: ResultsInput | None = None,
) -> Comparison:
    """``current`` against ``baseline`` on their common sessions; ``.to_dict()`` is
    ``compare --json``, ``.regressions`` the ids that passed before and fail now. ``rejudged``
    (the baseline's sessions graded by the current judge) splits each delta into judge shift
    and agent change, as ``compare --rejudged``."""
    from .compare import compare_runs

    return compare_runs(
        _run(baseline),
        _run(current),
        threshold=threshold,
        critical_threshold=critical_threshold,
        rejudged=None if rejudged is None else _run(rejudged),
    )


def write_report(
    results: ResultsInput,
    *,
    html: PathLike | None = None,
    md: PathLike | None = None,
    labels: LabelsInput | None = None,
    baseline: ResultsInput | None = None,
    rejudged: ResultsInput | None = None,
    worst: int = DEFAULT_WORST,
    threshold: float = DEFAULT_THRESHOLD,
) -> None:
    """Write the ``report`` command's HTML page and/or Markdown summary of ``results``."""
    from .report import write_report as write

    write(
        _run(results),
        html=None if html is None else Path(html),
        md=None if md is None else Path(md),
        labels=None if labels is None else _labels(labels),
        baseline=None if baseline is None else _run(baseline),
        rejudged=None if rejudged is None else _run(rejudged),
        worst=worst,
        threshold=threshold,
    )


def to_dataframe(results: ResultsInput) -> pandas.DataFrame:
    """One row per result: id, verdict, error, the six criteria, usage and cost, evidence, judge,
    and each metadata key as ``metadata.<key>``. Needs pandas: ``pip install
    'research-judge[pandas]'``."""
    try:
        import pandas
    except ImportError as exc:
        raise UserError("to_dataframe needs pandas: pip install 'research-judge[pandas]'") from exc
    from .results.table import result_rows

    return pandas.DataFrame.from_records(result_rows(_results(results)))


# --- turning what the caller has into what the library takes -------------------------------


def _sessions(sessions: SessionsInput) -> list[Session]:
    if isinstance(sessions, str | os.PathLike):
        items = [item for _, item in iter_sessions(Path(sessions))]
    else:
        items = _in_memory_sessions(sessions)
    bad = [item for item in items if isinstance(item, InputFileError)]
    if bad:
        raise InvalidSessionsError(bad)
    return [item for item in items if isinstance(item, Session)]


def _in_memory_sessions(
    sessions: Iterable[Session | Mapping[str, Any]],
) -> list[Session | InputFileError]:
    out: list[Session | InputFileError] = []
    seen: set[str] = set()
    for index, raw in enumerate(cast(Iterable[object], sessions)):
        where = f"sessions[{index}]"
        if isinstance(raw, Session):
            session = raw
        elif isinstance(raw, Mapping):
            try:
                session = Session.model_validate(dict(raw))
            except ValidationError as exc:
                label = f"session {raw['id']!r}: " if isinstance(raw.get("id"), str) else ""
                out.append(InputFileError(where, label + describe_validation_error(exc)))
                continue
        else:
            kind = type(raw).__name__
            out.append(InputFileError(where, f"expected a dict or a Session, got {kind}"))
            continue
        if session.id in seen:
            out.append(InputFileError(where, f"duplicate session id {session.id!r}"))
            continue
        seen.add(session.id)
        out.append(session)
    return out


def _path(path: PathLike | None) -> Path | None:
    return None if path is None else Path(path)


def _run(results: ResultsInput) -> ResultsRun | Sequence[Result]:
    """A results file as rows (the verbs' own slim reading), or the results given in memory."""
    if isinstance(results, str | os.PathLike):
        from .results.rows import ResultsRun

        return ResultsRun.load(Path(results))
    return _results(results)


def _results(results: ResultsInput) -> Sequence[Result]:
    if isinstance(results, str | os.PathLike):
        return read_results(Path(results))
    out: list[Result] = []
    for index, item in enumerate(cast(Iterable[object], results)):
        if not isinstance(item, Result):  # an easy slip: a list of dicts from to_dict()
            raise UserError(f"results[{index}]: expected a Result, got {type(item).__name__}")
        out.append(item)
    return out


def _labels(labels: LabelsInput) -> Labels:
    from .validate import HumanLabel, Labels, read_labels
    from .validate.labels import parse_verdict

    if isinstance(labels, Labels):
        return labels
    if isinstance(labels, str | os.PathLike):
        return read_labels(Path(labels))
    items: dict[str, HumanLabel] = {}
    for number, (session_id, value) in enumerate(labels.items(), start=1):
        try:
            items[session_id] = HumanLabel(session_id, parse_verdict(value), line=number)
        except ValueError as exc:
            raise UserError(f"labels[{session_id!r}]: {exc}") from exc
    return Labels(path="labels", items=items)
