"""Sweeps as jobs of the parser service: the client-side run (records in :mod:`amp.parser.core.results`).

A backend that runs sweeps itself (:class:`amp.parser.backends.remote.RemoteBackend`) exposes a
:class:`JobClient`.  :func:`amp.parser.batch.run_batch` then answers the items cached on this
machine at once and submits the rest as **one job** (:func:`run_as_job`): the service spreads
its items over its replicas, stores every result in its cache as it finishes, and keeps going
when the client goes away.  The client polls, yields results **in input order** (so output is
deterministic whatever the number of workers), stores them in its own cache, and cancels the
job when the run is cancelled.  :func:`amp.parser.batch.attach` reattaches to a job by id (a
reopened page).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterator
from typing import Any

from amp.parser.backend import JobClient
from amp.parser.core.errors import BackendError
from amp.parser.core.results import BatchItem, BatchItemResult, JobStatus, PairScore, ParseResult
from amp.parser.parser import Parser
from amp.parser.search.cancel import searched
from amp.parser.search.settings import SearchSettings

#: Seconds between two polls of a running job.
POLL_S = 0.5


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
    heard = 0  # items computed or searched on the service that were reported to a progress scope
    while True:
        ahead = status.done - status.cached + status.searched  # (cancel.searched: a bar moves per item)
        if ahead > heard:
            searched(ahead - heard)
            heard = ahead
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
               cancelled: Callable[[], bool], on_submit: Callable[[str], None], label: str = "",
               meta: dict[str, Any] | None = None) -> Iterator[BatchItemResult]:
    """Submit ``misses`` as one job and yield their results in input order (see the module doc)."""
    jobs = parser.backend.jobs
    assert jobs is not None
    status = jobs.submit(misses, search, top_n=parser.top_n, batch_size=batch_size, label=label,
                         meta={**(meta or {}), "search": search.as_dict()})
    on_submit(status.id)
    yield from follow(parser, jobs, status.id, search, cancelled)
