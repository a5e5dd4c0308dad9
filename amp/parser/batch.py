"""Batch runs over many (prompt, LF0, LF1) items: streaming, cached-first, cancellable.

:func:`run_batch` is what the app's batch page and the experiment sweeps use.  It yields one
:class:`BatchItemResult` per item as soon as it is known:

1. every item already in the result cache, at once, without loading the model;
2. then the rest, in input order — in the order of their prompts on an engine whose prompts share
   the cells of a common prefix (:attr:`~amp.parser.core.capabilities.Capabilities.shares_prefixes`:
   then neighbours share the most) — ``batch_size`` items per model call.  An item that wants both
   a parse and a P(LF0) gets them from one prompt pass
   (:meth:`~amp.parser.parser.Parser.parse_and_score_many`); a batch shares one left-padded
   prompt pass, one ``generate`` and one forced pass.

With ``ordered=True`` results come strictly in input order instead (cached items still cost
nothing).  A failing item yields a result with ``error`` set and the run goes on (a batched
call that fails is retried item by item, so one bad LF does not sink its neighbours).
Cancellation is cooperative: ``cancel`` is checked before every item and every model call, and
inside the constrained search at every decode step (:func:`amp.parser.search.cancel.cancel_scope`),
so a cancel stops the model within one step, not at the end of its batch; the run then stops
cleanly and :attr:`BatchRun.cancelled`/:attr:`BatchRun.done` say how far it got.  A model
endpoint that cannot be reached (:class:`~amp.parser.core.errors.EndpointUnreachable`) ends the
run with that one error instead of failing each further item alike; finished items are cached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import Unpack

from amp.errors import AmpError
from amp.parser.core import limits
from amp.parser.core.errors import BackendError, EndpointUnreachable, ModelLoadError, SearchCancelled
from amp.parser.core.results import BatchItem, BatchItemResult, PairScore, ParseResult
from amp.parser.jobs import follow, run_as_job, search_of
from amp.parser.parser import Parser
from amp.parser.search.cancel import cancel_scope
from amp.parser.search.settings import SearchKeywords, SearchSettings

Progress = Callable[[int, int, "BatchItemResult"], None]
Cancel = threading.Event | Callable[[], bool]


def default_batch_size(parser: Parser) -> int:
    """8 items per model call, on a GPU and on a CPU alike.

    On the 2-core CPU with the default model and 10-example prompts, 8 items per call take
    ~0.55× the time per item of one-at-a-time calls (16 is slower again: every item of a batch
    decodes as long as its longest one); ``bench/experiments_bench.py --batch-sizes`` measures it.
    A backend may say otherwise in its capabilities (a model behind an API: its requests in
    flight, so an endpoint that dies mid-sweep loses at most that many items' work).
    """
    return parser.backend.capabilities().batch_size


class BatchRun(Iterator[BatchItemResult]):
    """The iterator :func:`run_batch` returns; also reports progress of the run.

    ``total`` items, ``done`` yielded so far, ``errors`` among them, ``cached`` among them,
    ``cancelled`` once a cancel request stopped the run, ``model_error`` if the model could not
    load (every uncached item then carries that error; cached items are still answered).
    """

    def __init__(self, gen_factory: Callable[[BatchRun], Generator[BatchItemResult]], total: int) -> None:
        self.total = total
        self.done = 0
        self.errors = 0
        self.cached = 0
        self.cancelled = False
        self.model_error: str | None = None
        #: The server job computing the uncached items, when the backend runs sweeps as jobs.
        self.job_id: str | None = None
        self._gen = gen_factory(self)

    def __next__(self) -> BatchItemResult:
        return next(self._gen)

    def record(self, result: BatchItemResult, on_progress: Progress | None = None) -> BatchItemResult:
        """Count ``result`` in this run's progress and report it (what every producer calls)."""
        self.done += 1
        self.errors += result.error is not None
        self.cached += result.cached
        if on_progress is not None:
            on_progress(self.done, self.total, result)
        return result

    def close(self) -> None:
        """Stop early (e.g. the consumer lost interest); the current model call finishes first."""
        self._gen.close()

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "running" if self.done < self.total else "finished"
        return f"BatchRun({self.done}/{self.total} {state}, {self.errors} errors, {self.cached} cached)"


def run_batch(
    parser: Parser,
    items: Iterable[BatchItem],
    search: SearchSettings | None = None,
    *,
    on_progress: Progress | None = None,
    cancel: Cancel | None = None,
    batch_size: int | None = None,
    ordered: bool = False,
    label: str = "",
    meta: dict | None = None,
    **settings: Unpack[SearchKeywords],
) -> BatchRun:
    """Parse and/or score every item, streaming a :class:`BatchItemResult` per item.

    ``search``: the search settings (the defaults when None; keywords override its fields).

    ``on_progress(done, total, result)`` is called after each result.  ``cancel`` is a
    ``threading.Event`` or a no-argument callable returning true to stop.  ``batch_size``
    defaults to :func:`default_batch_size`.  See the module docstring for the order.

    When the parser's backend runs sweeps as jobs (the parser service), the items cached here
    come first and the rest are submitted as one job (``label`` and ``meta`` go with it, so a
    page can find and reattach to it later; :attr:`BatchRun.job_id` names it) and stream back in
    input order; cancelling cancels the job.
    """
    search = SearchSettings.of(search, **settings)
    size = limits.prompts_per_call(search.beams, search.max_new_tokens, max(1, batch_size or default_batch_size(parser)))
    plan = _Plan(parser, list(items), search, _cancel_check(cancel), size, label, meta)
    in_order = ordered and parser.backend.jobs is None

    def generate(run: BatchRun) -> Generator[BatchItemResult]:
        for result in (_in_order(plan, run) if in_order else _cached_first(plan, run)):
            yield run.record(result, on_progress)
        run.cancelled = run.done < run.total

    return BatchRun(generate, len(plan.items))


@dataclass(frozen=True)
class _Plan:
    """What one :func:`run_batch` call works through: the items, the search and how to chunk it."""

    parser: Parser
    items: list[BatchItem]
    search: SearchSettings
    cancelled: Callable[[], bool]
    size: int
    label: str
    meta: dict | None

    def compute(self, indices: list[int], run: BatchRun) -> Iterator[BatchItemResult]:
        return _compute(self.parser, [self.items[k] for k in indices], self.search, self.cancelled, run)


def _in_order(plan: _Plan, run: BatchRun) -> Iterator[BatchItemResult]:
    """Results strictly in input order: each cached item at once, each run of uncached ones in chunks."""
    search, n, i = plan.search, len(plan.items), 0
    while i < n and not plan.cancelled():
        hit = _from_cache(plan.parser, plan.items[i], search)
        if hit is not None:
            yield hit
            i += 1
            continue
        chunk = [i]
        i += 1
        while i < n and len(chunk) < plan.size and not _in_cache(plan.parser, plan.items[i], search):
            chunk.append(i)
            i += 1
        yield from plan.compute(chunk, run)


def _cached_first(plan: _Plan, run: BatchRun) -> Iterator[BatchItemResult]:
    """Every cached item first, then the rest in chunks (or as one job when the backend runs jobs)."""
    misses: list[int] = []
    for i, item in enumerate(plan.items):
        if plan.cancelled():
            return
        hit = _from_cache(plan.parser, item, plan.search)
        if hit is None:
            misses.append(i)
        else:
            yield hit
    if plan.parser.backend.capabilities().shares_prefixes:  # neighbours share the most prompt
        misses.sort(key=lambda k: (plan.items[k].fmt, plan.items[k].prompt))
    if plan.parser.backend.jobs is not None and misses:  # the service computes them, as one job
        yield from run_as_job(plan.parser, [plan.items[k] for k in misses], plan.search, batch_size=plan.size,
                              cancelled=plan.cancelled, on_submit=lambda job_id: setattr(run, "job_id", job_id),
                              label=plan.label, meta=plan.meta)
        return
    for start in range(0, len(misses), plan.size):
        if plan.cancelled():
            return
        yield from plan.compute(misses[start:start + plan.size], run)


def _cancel_check(cancel: Cancel | None) -> Callable[[], bool]:
    if cancel is None:
        return lambda: False
    if isinstance(cancel, threading.Event):
        return cancel.is_set
    return lambda: bool(cancel())


def _in_cache(parser: Parser, item: BatchItem, search: SearchSettings) -> bool:
    """Whether every part of ``item`` is cached (a cheap key lookup; nothing is decoded)."""
    try:
        if item.parse and not parser.cached("parse", prompt=item.prompt, fmt=item.fmt, **search.as_dict()):
            return False
        if item.score:
            if item.lf0 is None or item.lf1 is None:
                return False
            return parser.cached("pair", prompt=item.prompt, fmt=item.fmt, lf0=item.lf0, lf1=item.lf1)
        return True
    except (AmpError, TypeError, ValueError):
        return False


def _from_cache(parser: Parser, item: BatchItem, search: SearchSettings) -> BatchItemResult | None:
    """The item's result if every part of it is cached and readable; never loads the model."""
    if parser.cache is None or not _in_cache(parser, item, search):
        return None
    try:
        parse = parser.cached_parse(item.prompt, fmt=item.fmt, search=search) if item.parse else None
        pair = parser.cached_pair(item.prompt, item.lf0, item.lf1, fmt=item.fmt) if item.score else None  # type: ignore[arg-type]
    except (AmpError, TypeError, ValueError):
        return None
    if (item.parse and parse is None) or (item.score and pair is None):
        return None  # an entry was dropped as unreadable: compute the item with the others
    return BatchItemResult(item.id, parse, pair, cached=True)


def _single(parser: Parser, item: BatchItem, search: SearchSettings) -> BatchItemResult:
    if item.score and (item.lf0 is None or item.lf1 is None):
        raise ValueError(f"item {item.id!r} asks for scoring but lacks lf0/lf1")
    if item.parse and item.score:  # one prompt pass for both
        ((both, joint_pair),) = parser.parse_and_score_many([(item.prompt, item.lf0, item.lf1)], fmt=item.fmt,
                                                            search=search)
        return BatchItemResult(item.id, both, joint_pair, cached=False)
    parse = parser.parse(item.prompt, fmt=item.fmt, search=search) if item.parse else None
    pair = parser.score_pair(item.prompt, item.lf0, item.lf1, fmt=item.fmt) if item.score else None  # type: ignore[arg-type]
    return BatchItemResult(item.id, parse, pair, cached=False)


def _error(item: BatchItem, exc: BaseException) -> BatchItemResult:
    return BatchItemResult(item.id, None, None, cached=False, error=f"{type(exc).__name__}: {exc}")


def _compute(parser: Parser, chunk: list[BatchItem], search: SearchSettings,
             cancelled: Callable[[], bool], run: BatchRun) -> Iterator[BatchItemResult]:
    """Results for ``chunk`` (uncached items): batched model calls, falling back per item.

    A model that cannot load is not the items' fault and would fail the same way for each:
    after the first :class:`ModelLoadError` every further uncached item gets that error at
    once (``run.model_error``), without another load attempt.
    """
    if run.model_error is None:
        try:
            parser.load()  # every uncached item needs the model: try loading once, here
        except ModelLoadError as exc:
            run.model_error = f"{type(exc).__name__}: {exc}"
    if run.model_error is None and len(chunk) > 1:
        try:
            with cancel_scope(cancelled):
                batched = _batched(parser, chunk, search)
        except SearchCancelled:
            return
        if batched is not None:
            for k, result in enumerate(batched):
                if k and cancelled():  # the rest is computed and cached, but the run was stopped
                    return
                yield result
            return
    for k, item in enumerate(chunk):
        if k and cancelled():
            return
        if run.model_error is not None:
            yield BatchItemResult(item.id, None, None, cached=False, error=run.model_error)
            continue
        try:
            with cancel_scope(cancelled):
                result = _single(parser, item, search)
        except SearchCancelled:
            return
        except EndpointUnreachable:
            raise  # the endpoint is gone: one error for the run, not one per item (what finished is cached)
        except ModelLoadError as exc:
            run.model_error = f"{type(exc).__name__}: {exc}"
            yield _error(item, exc)
        except Exception as exc:  # noqa: BLE001 - one failing item must not stop the batch
            yield _error(item, exc)
        else:
            yield result


def _batched(parser: Parser, chunk: list[BatchItem], search: SearchSettings) -> list[BatchItemResult] | None:
    """One batched parse call and one batched score call for ``chunk``; None if either fails."""
    try:
        groups: dict[str, list[int]] = {}
        for k, item in enumerate(chunk):
            if item.score and (item.lf0 is None or item.lf1 is None):
                return None  # let the per-item path report it
            groups.setdefault(item.fmt, []).append(k)
        parses: dict[int, ParseResult] = {}
        pairs: dict[int, PairScore] = {}
        for fmt, members in groups.items():
            to_parse = [k for k in members if chunk[k].parse]
            # parse + pair of an item share one prompt pass
            asks = [(chunk[k].prompt, chunk[k].lf0, chunk[k].lf1) if chunk[k].score else (chunk[k].prompt, None, None)
                    for k in to_parse]
            for k, (res, pair) in zip(to_parse, parser.parse_and_score_many(asks, fmt=fmt, search=search), strict=True):
                parses[k] = res
                if pair is not None:
                    pairs[k] = pair
            to_score = [k for k in members if chunk[k].score and k not in pairs]
            triples = [(chunk[k].prompt, chunk[k].lf0, chunk[k].lf1) for k in to_score]
            for k, scored in zip(to_score, parser.score_pairs(triples, fmt=fmt), strict=True):  # type: ignore[arg-type]
                pairs[k] = scored
    except (SearchCancelled, EndpointUnreachable):
        raise
    except Exception:  # noqa: BLE001 - retried item by item to find the culprit
        return None
    return [BatchItemResult(item.id, parses.get(k), pairs.get(k), cached=False) for k, item in enumerate(chunk)]


def attach(parser: Parser, job_id: str, *, cancel: Callable[[], bool] | None = None,
           on_progress: Callable[[int, int, BatchItemResult], None] | None = None) -> BatchRun:
    """Reattach to a job by id: a :class:`~amp.parser.batch.BatchRun` over its results in order."""
    jobs = parser.backend.jobs
    if jobs is None:
        raise BackendError("this model runs in-process: there are no server jobs to attach to", kind="refused")
    status = jobs.status(job_id)
    stop = cancel or (lambda: False)

    def generate(run: BatchRun) -> Generator[BatchItemResult]:
        run.job_id = job_id
        for result in follow(parser, jobs, job_id, search_of(status), stop):
            yield run.record(result, on_progress)
        run.cancelled = run.done < run.total

    return BatchRun(generate, status.total)
