"""Sweeps as jobs of the parser service: records, the client interface, and the client-side run.

A backend that runs sweeps itself (:class:`amp.parser.remote.RemoteBackend`) exposes a
:class:`JobClient`.  :func:`amp.parser.batch.run_batch` then answers the items cached on this
machine at once and submits the rest as **one job** (:func:`run_as_job`): the service spreads
its items over its replicas, stores every result in its cache as it finishes, and keeps going
when the client goes away.  The client polls, yields results **in input order** (so output is
deterministic whatever the number of workers), stores them in its own cache, and cancels the
job when the run is cancelled.  :func:`attach` reattaches to a job by id (a reopened page).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from pydantic import AfterValidator

from amp.parser.backend import BackendError, SearchSettings
from amp.parser.results import PairScore, ParseResult
from amp.records import JsonObject, JsonRecord

if TYPE_CHECKING:
    from amp.parser.batch import BatchItem, BatchItemResult, BatchRun
    from amp.parser.parser import Parser

#: Job states: queued → running → done | cancelled | failed; interrupted = the service restarted
#: mid-run (it resumes such jobs by itself, recomputing nothing already cached).
STATES = ("queued", "running", "done", "cancelled", "failed", "interrupted")
FINAL = frozenset({"done", "cancelled", "failed"})

def _known_state(state: str) -> str:
    if state not in STATES:
        raise ValueError(f"unknown job state {state!r}")
    return state


#: Seconds between two polls of a running job.
POLL_S = 0.5


@dataclass(frozen=True)
class JobStatus(JsonRecord):
    """Where a job stands: ``done`` of ``total`` items (``cached`` answered from the server's
    cache, ``errors`` failed), times in seconds since the epoch, ``eta_s`` the estimated time
    left (None until an item was computed), ``meta`` what the submitter attached (e.g. the
    sweep's settings, so a page can rebuild its plan when it reattaches)."""

    id: str
    label: str
    state: Annotated[str, AfterValidator(_known_state)]
    total: int
    done: int = 0
    cached: int = 0
    errors: int = 0
    created: float = 0.0
    started: float | None = None
    finished: float | None = None
    eta_s: float | None = None
    error: str | None = None
    meta: JsonObject = field(default_factory=dict)

    @property
    def final(self) -> bool:
        return self.state in FINAL



@dataclass(frozen=True)
class JobResult:
    """One finished item of a job: its position, the item, and its result."""

    index: int
    item: BatchItem
    result: BatchItemResult


class JobClient(Protocol):
    """What a backend that runs sweeps offers (see :class:`amp.parser.remote.RemoteJobs`)."""

    def submit(self, items: Sequence[BatchItem], search: SearchSettings, *, top_n: int, batch_size: int,
               label: str = "", meta: dict[str, Any] | None = None) -> JobStatus: ...

    def status(self, job_id: str) -> JobStatus: ...

    def list(self) -> list[JobStatus]: ...

    def results(self, job_id: str, start: int = 0) -> builtins.list[JobResult]: ...

    def cancel(self, job_id: str) -> JobStatus: ...


def store_result(parser: Parser, item: BatchItem, result: BatchItemResult, search: SearchSettings) -> None:
    """Put a job's result into this machine's cache under the keys :class:`Parser` would use."""
    if parser.cache is None or result.error is not None:
        return
    if result.parse is not None:
        parser._store(parser.cache_key("parse", prompt=item.prompt, fmt=item.fmt, **search.as_dict()),
                      result.parse, ParseResult.to_dict)
    if result.pair is not None and item.lf0 is not None and item.lf1 is not None:
        parser._store(parser.cache_key("pair", prompt=item.prompt, fmt=item.fmt, lf0=item.lf0, lf1=item.lf1),
                      result.pair, PairScore.to_dict)


def follow(parser: Parser, jobs: JobClient, job_id: str, search: SearchSettings | None,
           cancelled: Callable[[], bool], *, poll_s: float = POLL_S,
           on_status: Callable[[JobStatus], None] | None = None) -> Iterator[BatchItemResult]:
    """Yield a job's results in input order as they finish; cancel the job if ``cancelled()``.

    Results go into ``parser``'s cache when ``search`` is known (a reattached job gets it from
    its ``meta``).  Raises :class:`BackendError` if the job failed or vanished.
    """
    nxt = 0
    status = jobs.status(job_id)
    while True:
        if cancelled():
            if not status.final:
                jobs.cancel(job_id)
            return
        got = jobs.results(job_id, nxt) if nxt < status.total else []
        for res in got:
            if res.index != nxt:
                raise BackendError(f"job {job_id}: result {res.index} arrived where {nxt} was expected",
                                   kind="protocol")
            if search is not None:
                store_result(parser, res.item, res.result, search)
            nxt += 1
            yield res.result
        if nxt >= status.total:
            return
        if status.final and not got:
            if status.state == "done":  # everything is there: read the rest
                continue
            raise BackendError(f"job {job_id} {status.state} after {status.done} of {status.total} items"
                               + (f": {status.error}" if status.error else ""), kind="server")
        if not got:
            time.sleep(poll_s)
        status = jobs.status(job_id)
        if on_status is not None:
            on_status(status)


def search_of(status: JobStatus) -> SearchSettings | None:
    """The search settings a job was submitted with (kept in its meta), if readable."""
    raw = status.meta.get("search")
    try:
        return SearchSettings(**raw) if isinstance(raw, dict) else None
    except (TypeError, ValueError):
        return None


def run_as_job(parser: Parser, misses: builtins.list[BatchItem], search: SearchSettings, *, batch_size: int,
               cancelled: Callable[[], bool], run: BatchRun, label: str = "",
               meta: dict[str, Any] | None = None) -> Iterator[BatchItemResult]:
    """Submit ``misses`` as one job and yield their results in input order (see the module doc)."""
    jobs = parser.backend.jobs
    assert jobs is not None
    status = jobs.submit(misses, search, top_n=parser.top_n, batch_size=batch_size, label=label,
                         meta={**(meta or {}), "search": search.as_dict()})
    run.job_id = status.id
    yield from follow(parser, jobs, status.id, search, cancelled)


def attach(parser: Parser, job_id: str, *, cancel: Callable[[], bool] | None = None,
           on_progress: Callable[[int, int, BatchItemResult], None] | None = None) -> BatchRun:
    """Reattach to a job by id: a :class:`~amp.parser.batch.BatchRun` over its results in order."""
    from amp.parser.batch import BatchRun

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
