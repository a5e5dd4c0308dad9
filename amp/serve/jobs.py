"""Sweeps as jobs of the parser service: ``JobManager`` (a Ray Serve deployment) and its store.

A job is a list of sweep items (:class:`amp.parser.core.results.BatchItem` as JSON) with search
settings.  The manager cuts it into chunks of ``batch_size`` items **by input position** (so
the batches, and with them the numbers, do not depend on how many replicas there are) and
sends up to two chunks per replica at once to ``ParserWorker.chunk``, where each item is
answered from the server's cache or computed and cached.  A chunk whose replica dies is sent
again (Serve starts a new replica); an item already recorded is never recorded twice.

Everything is kept on disk under ``<cache root>/jobs/`` (:mod:`amp.serve.job_store`).  The manager
holds only the summaries; where a job's items and its result lines start are read when it runs
or when its results are asked for, and dropped again once it has finished and its last page was
read; the items themselves are read from disk one chunk or one page at a time.  A manager that restarts (its
replica died, the service was restarted) reads the summaries and resumes the unfinished jobs,
asking only for the items missing from their results (which recomputes nothing already cached).
Jobs run on the server whatever their client does: closing the browser tab does not stop them;
``DELETE /v1/jobs/{id}`` does, and on a finished job it removes the job and its files.

Bounded (:mod:`amp.parser.core.limits`), every bound checked before anything is stored: a job's
``meta`` (:data:`~amp.parser.core.limits.MAX_JOB_META_BYTES` and
:data:`~amp.parser.core.limits.MAX_JSON_DEPTH`, by the schema and again here), its stored results
(:data:`~amp.parser.core.limits.MAX_JOB_RESULT_BYTES`: the job stops, failed, saying so), and the
store.  Finished jobs expire ``retention_s`` after they *finished*; beyond
:data:`~amp.parser.core.limits.MAX_STORED_JOBS` jobs or
:data:`~amp.parser.core.limits.MAX_JOBS_STORE_BYTES` bytes — unfinished jobs count too — the oldest
finished ones go first.  A submit that unfinished jobs leave no room for, or beyond
:data:`~amp.parser.core.limits.MAX_UNFINISHED_JOBS` queued or running jobs, is refused (a 429
naming the cap; 413 for a job larger than the whole store), and nothing of it is stored; a running
job whose results would push the store past its byte cap (no finished job left to remove) stops,
failed, saying so.

A stored job whose status cannot be sent (a summary that cannot be read, a ``meta`` from an
earlier version nested past the bound) is left out of the listing — named under ``skipped`` with
the reason, and logged once — so that it never breaks ``GET /v1/jobs`` for anyone else; asking for
it answers a 410 saying so, and ``DELETE`` removes it.

Trust: the service has one token, and any holder of it may list, read and ``DELETE`` any job (the
token is the trust boundary; jobs carry no owner).  Give the token only to people who may cancel
each other's sweeps.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import logging
import time
import uuid
from typing import Any

from ray import serve

from amp.errors import SettingError
from amp.parser.core import limits
from amp.parser.core.errors import RequestTooLarge
from amp.parser.core.json_bounds import check_json_depth
from amp.parser.core.results import FINAL, JobStatus
from amp.serve.errors import JobStoreFull
from amp.serve.job_store import Job, JobStore, jobs_dir, unsendable

log = logging.getLogger(__name__)

#: Attempts per chunk before its items are recorded as failed.
ATTEMPTS = 5
#: Results returned by one ``results`` call.
PAGE = 500
#: How long a finished job is kept by default (seconds; ``amp serve --job-retention-hours``).
DEFAULT_RETENTION_S = 7 * 24 * 3600.0
#: Seconds between two sweeps of the store for expired jobs.
EXPIRE_EVERY_S = 30.0


def refusal(status: int, kind: str, message: str) -> dict[str, Any]:
    """The manager's refusal, as the service's error envelope (the ingress answers it with ``status``)."""
    return {"error": {"type": kind, "message": message, "status": status}}


class JobRunner:
    """The manager's logic without Ray: ``chunk(call)`` is an awaitable that runs a chunk."""

    def __init__(self, chunk: Any, store: JobStore, concurrency: int, *,
                 retention_s: float = DEFAULT_RETENTION_S) -> None:
        self.chunk = chunk
        self.store = store
        self.concurrency = max(1, concurrency)
        self.retention_s = float(retention_s)
        self.jobs, self.broken = store.load_all()
        #: Bytes on disk of each stored job (the unreadable ones too), kept up to date as results come.
        self.sizes = {job_id: store.size(job_id) for job_id in [*self.jobs, *self.broken]}
        self.tasks: dict[str, asyncio.Task] = {}
        self._resumed = False
        self._expired_at = 0.0

    def resume_unfinished(self) -> None:
        """Start again every job that had not finished when the manager stopped — queued, running
        or interrupted — (once)."""
        if self._resumed:
            return
        self._resumed = True
        for job in self.jobs.values():
            if job.state not in FINAL:
                job.state = "interrupted"
                self.start(job)

    def submit(self, request: dict[str, Any]) -> JobStatus:
        """Store a job and start it; :class:`~amp.parser.core.errors.RequestTooLarge` or
        :class:`~amp.errors.SettingError` for a ``meta`` that could not be sent back,
        :class:`~amp.serve.errors.JobStoreFull` when the store has no room (nothing stored then)."""
        items = list(request["items"])
        job = Job(id=uuid.uuid4().hex[:16], label=str(request.get("label", "")), search=dict(request["search"]),
                  top_n=int(request["top_n"]), batch_size=int(request["batch_size"]),
                  meta=dict(request.get("meta") or {}), created=time.time(), total=len(items))
        check_json_depth(job.meta, "the job's meta")
        problem = unsendable(job)
        if problem:
            raise SettingError(f"the job's meta cannot be sent back as JSON: {problem}")
        data = self.store.encode_items(items)
        del items
        self._check_room(len(data))
        self.store.save_items(job.id, data)
        self.jobs[job.id] = job
        self.store.save(job)
        self.sizes[job.id] = self.store.size(job.id)
        self.start(job)
        self.expire(force=True)  # the oldest finished jobs make room for this one
        return job.status()

    def _check_room(self, needed: int) -> None:
        """Room for one more job of ``needed`` bytes once every finished job could go: only the
        unfinished ones are counted (:class:`~amp.serve.errors.JobStoreFull` naming the cap)."""
        unfinished = [j for j in self.jobs.values() if j.state not in FINAL]
        way_out = "wait for a job to finish or cancel one (DELETE /v1/jobs/<id>)"
        if len(unfinished) >= limits.MAX_UNFINISHED_JOBS:
            raise JobStoreFull(f"{len(unfinished)} jobs are queued or running, the limit is "
                               f"{limits.MAX_UNFINISHED_JOBS} (MAX_UNFINISHED_JOBS): {way_out}")
        if needed > limits.MAX_JOBS_STORE_BYTES:
            raise JobStoreFull(f"the job's items are {needed:,} bytes, over the job store's limit of "
                               f"{limits.MAX_JOBS_STORE_BYTES:,} (MAX_JOBS_STORE_BYTES): split the sweep", status=413)
        if len(unfinished) + 1 > limits.MAX_STORED_JOBS:
            raise JobStoreFull(f"{len(unfinished)} unfinished jobs fill the job store, the limit is "
                               f"{limits.MAX_STORED_JOBS} jobs (MAX_STORED_JOBS): {way_out}")
        held = sum(self.sizes.get(j.id, 0) for j in unfinished)
        if held + needed > limits.MAX_JOBS_STORE_BYTES:
            raise JobStoreFull(f"unfinished jobs hold {held:,} bytes of the job store; with this job's "
                               f"{needed:,} that is over its limit of {limits.MAX_JOBS_STORE_BYTES:,} "
                               f"(MAX_JOBS_STORE_BYTES): {way_out}")

    def stored_bytes(self) -> int:
        """Bytes of every stored job together."""
        return sum(self.sizes.values())

    def start(self, job: Job) -> None:
        self.tasks[job.id] = asyncio.get_running_loop().create_task(self._run(job))

    def cancel(self, job_id: str) -> JobStatus | None:
        """Cancel a job that has not finished; remove a finished one, or one that cannot be read,
        with its files."""
        if job_id in self.broken:
            reason = self.broken[job_id]
            self._forget(job_id)
            return JobStatus(id=job_id, label="", state="failed", total=0, error=f"removed: {reason}")
        job = self.jobs.get(job_id)
        if job is None:
            return None
        if job.state in FINAL:
            self._forget(job.id)
            return self._sendable(job)
        job.cancel_requested = True
        if job.id not in self.tasks or self.tasks[job.id].done():
            job.state, job.finished = "cancelled", time.time()
        self.store.save(job)
        return self._sendable(job)

    @staticmethod
    def _sendable(job: Job) -> JobStatus:
        """The job's status; without its ``meta`` if that cannot be sent."""
        status = job.status()
        return dataclasses.replace(status, meta={}) if job.unreadable else status

    def _forget(self, job_id: str) -> None:
        self.jobs.pop(job_id, None)
        self.broken.pop(job_id, None)
        self.tasks.pop(job_id, None)
        self.sizes.pop(job_id, None)
        self.store.delete(job_id)

    def expire(self, now: float | None = None, *, force: bool = False) -> list[str]:
        """Remove finished jobs whose retention has passed since they *finished* (an unreadable one:
        since its summary was last written), then the oldest finished ones while the store — every
        job counted, finished or not — is over its caps; the ids removed.  At most every
        :data:`EXPIRE_EVERY_S` unless ``force``."""
        now = time.time() if now is None else now
        if not force and now - self._expired_at < EXPIRE_EVERY_S:
            return []
        self._expired_at = now
        ended = {j.id: j.finished or j.created for j in self.jobs.values() if j.state in FINAL}
        ended.update({job_id: self.store.modified(job_id) for job_id in self.broken})
        oldest_first = sorted(ended, key=lambda job_id: ended[job_id])
        gone = [job_id for job_id in oldest_first if ended[job_id] + self.retention_s <= now]
        count = len(self.jobs) + len(self.broken) - len(gone)
        total = self.stored_bytes() - sum(self.sizes.get(job_id, 0) for job_id in gone)
        for job_id in oldest_first:
            if count <= limits.MAX_STORED_JOBS and total <= limits.MAX_JOBS_STORE_BYTES:
                break
            if job_id not in gone:
                gone.append(job_id)
                count, total = count - 1, total - self.sizes.get(job_id, 0)
        for job_id in gone:
            self._forget(job_id)
        return gone

    def listing(self) -> dict[str, Any]:
        """``{"jobs": [status, …] newest first, "skipped": [{"id", "reason"}, …]}``: a job whose
        status cannot be sent is skipped with its reason, never failing the listing for the others."""
        statuses: list[tuple[float, dict[str, Any]]] = []
        for job in list(self.jobs.values()):
            if not job.unreadable:
                try:
                    statuses.append((job.created, job.status().to_dict()))
                    continue
                except (ValueError, TypeError, RecursionError) as exc:
                    job.unreadable = " ".join(str(exc).split())[:300]
                    log.warning("job %s is not listed: its status cannot be sent (%s)", job.id, job.unreadable)
        skipped = [{"id": job_id, "reason": reason} for job_id, reason in self.broken.items()]
        skipped += [{"id": j.id, "reason": f"its status cannot be sent: {j.unreadable}"}
                    for j in self.jobs.values() if j.unreadable]
        return {"jobs": [d for _, d in sorted(statuses, key=lambda x: -x[0])], "skipped": skipped}

    def status_answer(self, job_id: str) -> dict[str, Any] | None:
        """The job's status as JSON; None for an unknown id; a 410 refusal naming the reason for a
        stored job whose status cannot be sent."""
        reason = self.broken.get(job_id)
        job = self.jobs.get(job_id)
        if job is None and reason is None:
            return None
        if job is not None and not job.unreadable:
            try:
                return job.status().to_dict()
            except (ValueError, TypeError, RecursionError) as exc:
                job.unreadable = " ".join(str(exc).split())[:300]
        if job is not None:
            reason = f"its status cannot be sent: {job.unreadable}"
        return refusal(410, "unreadable", f"job {job_id!r} is stored but cannot be sent: {reason}; "
                                          f"DELETE /v1/jobs/{job_id} removes it")

    def submit_answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """:meth:`submit`'s status as JSON, or its refusal (422 for the meta, 429/413 for the store)."""
        try:
            return self.submit(request).to_dict()
        except JobStoreFull as exc:
            return refusal(exc.status, "store_full", str(exc))
        except (RequestTooLarge, SettingError) as exc:
            return refusal(422, "invalid", str(exc))

    def _loaded(self, job: Job) -> Job:
        """The job with where its items and its recorded results start in memory (not the items)."""
        if job.item_at is None:
            item_at = self.store.item_offsets(job.id)
            if len(item_at) != job.total:
                raise ValueError(f"{len(item_at)} items stored for a job of {job.total}")
            job.item_at = item_at
        if job.offsets is None:
            job.offsets, job.cached, job.errors = self.store.scan(job)
            job.done = len(job.offsets)
        return job

    def results(self, job_id: str, start: int) -> list[dict[str, Any]] | None:
        job = self.jobs.get(job_id)
        if job is None:
            return None
        try:
            self._loaded(job)
        except (OSError, ValueError):
            return []
        assert job.item_at is not None and job.offsets is not None
        indices: list[int] = []
        i = max(0, start)
        while i in job.offsets and len(indices) < PAGE:
            indices.append(i)
            i += 1
        found = self.store.read(job, [job.offsets[k] for k in indices])
        items = self.store.read_items(job.id, [job.item_at[k] for k in indices])
        out = [{"index": k, "item": item, "result": r} for k, item, r in zip(indices, items, found, strict=True)]
        if job.state in FINAL and i >= job.total and job.id not in self._running():
            job.item_at = job.offsets = None  # the last page was read: back to the summary only
        return out

    def _running(self) -> set[str]:
        return {job_id for job_id, task in self.tasks.items() if not task.done()}

    async def _run(self, job: Job) -> None:
        job.state = "running"
        job.started = job.started or time.time()
        job.run_started, job.computed, job.searched, job.eta = time.time(), 0, 0, None
        self.store.save(job)
        try:
            self._loaded(job)
        except (OSError, ValueError) as exc:
            job.state, job.error, job.finished = "failed", f"cannot read the job's items: {exc}", time.time()
            self.store.save(job)
            return
        assert job.item_at is not None and job.offsets is not None
        item_at, recorded = job.item_at, job.offsets
        pending = [i for i in range(job.total) if i not in recorded]
        chunks = [pending[k:k + job.batch_size] for k in range(0, len(pending), job.batch_size)]
        gate = asyncio.Semaphore(self.concurrency)

        async def one(chunk: list[int]) -> None:
            async with gate:
                if job.cancel_requested or job.error:
                    return
                items = self.store.read_items(job.id, [item_at[i] for i in chunk])  # from disk, chunk by chunk
                call = {"items": items, "search": job.search, "top_n": job.top_n}
                heard = [0]

                def on_searched(n: int) -> None:
                    n = min(n, len(chunk) - heard[0])
                    heard[0] += n
                    job.searched += n

                try:
                    answer = await self._attempt(call, on_searched, heard)
                finally:
                    job.searched -= heard[0]
                if "error" in answer:
                    message = answer["error"].get("message", "failed")
                    results = [{"id": item["id"], "parse": None, "pair": None, "cached": False,
                                "error": message} for item in items]
                else:
                    results = answer["results"]
                for i, result in zip(chunk, results, strict=True):
                    self._record(job, i, result)

        try:
            await asyncio.gather(*(one(c) for c in chunks))
        except Exception as exc:  # noqa: BLE001 - a job that cannot go on says why
            job.state, job.error = "failed", f"{type(exc).__name__}: {exc}"
        else:
            if job.error:
                job.state = "failed"
            else:
                job.state = "done" if job.done == job.total else "cancelled"
        job.finished = time.time()
        self.store.save(job)
        if job.id in self.sizes:
            self.sizes[job.id] = self.store.size(job.id)

    async def _attempt(self, call: dict[str, Any], on_searched: Any = None, heard: list[int] | None = None,
                       ) -> dict[str, Any]:
        last = "no attempt"
        for attempt in range(ATTEMPTS):
            try:
                return await self.chunk(call, on_searched)
            except Exception as exc:  # noqa: BLE001 - a dead replica: Serve starts another; try again
                if heard is not None and on_searched is not None:  # its searches are lost with it
                    on_searched(-heard[0])
                last = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                await asyncio.sleep(min(8.0, 0.5 * 2**attempt))
        return {"error": {"message": f"gave up after {ATTEMPTS} attempts: {last}"}}

    def _record(self, job: Job, index: int, result: dict[str, Any]) -> None:
        assert job.offsets is not None
        if index in job.offsets or job.error:
            return  # never counted twice; nothing more once the job is over its results cap
        offset, size = self.store.append(job, index, result)
        if job.id in self.sizes:
            self.sizes[job.id] += size - offset
        job.offsets[index] = offset
        job.done += 1
        job.cached += bool(result.get("cached"))
        job.errors += result.get("error") is not None
        if not result.get("cached"):
            job.computed += 1
        if size > limits.MAX_JOB_RESULT_BYTES:
            job.error = (f"the job's results reached {size:,} bytes, over the limit of "
                         f"{limits.MAX_JOB_RESULT_BYTES:,} (MAX_JOB_RESULT_BYTES): split the sweep")
        elif self.stored_bytes() > limits.MAX_JOBS_STORE_BYTES:
            self.expire(force=True)  # the oldest finished jobs go first
            if self.stored_bytes() > limits.MAX_JOBS_STORE_BYTES:
                job.error = (f"the job store reached {self.stored_bytes():,} bytes with unfinished jobs, over the "
                             f"limit of {limits.MAX_JOBS_STORE_BYTES:,} (MAX_JOBS_STORE_BYTES): split the sweep "
                             "or cancel a job")


@serve.deployment(name="JobManager", num_replicas=1, max_ongoing_requests=1024, health_check_period_s=2.0,
                  ray_actor_options={"num_cpus": 0})
class JobManager:
    def __init__(self, worker: Any, config: dict[str, Any]) -> None:
        concurrency = 2 * max(1, int(config.get("replicas", 1)))
        streaming = worker.options(stream=True)

        async def chunk(call: dict[str, Any], on_searched: Any = None) -> dict[str, Any]:
            """A chunk on a replica, hearing of each item whose search finished as it happens."""
            answer: dict[str, Any] = {"error": {"message": "the replica sent no answer"}}
            async for message in streaming.chunk_stream.remote(call):
                if "searched" in message:
                    if on_searched is not None:
                        on_searched(int(message["searched"]))
                else:
                    answer = message
            return answer

        self.runner = JobRunner(chunk, JobStore(jobs_dir()), concurrency,
                                retention_s=float(config.get("job_retention_s", DEFAULT_RETENTION_S)))

    async def submit(self, request: dict[str, Any]) -> dict[str, Any]:
        """The new job's status, or a refusal ``{"error": …}`` (:meth:`JobRunner.submit_answer`)."""
        self.runner.resume_unfinished()
        return self.runner.submit_answer(request)

    async def list(self) -> dict[str, Any]:
        """``{"jobs": […], "skipped": […]}`` (:meth:`JobRunner.listing`)."""
        self.runner.resume_unfinished()
        return self.runner.listing()

    async def status(self, job_id: str) -> dict[str, Any] | None:
        """The status, a refusal for a job that cannot be sent, None for an unknown id."""
        self.runner.resume_unfinished()
        return self.runner.status_answer(job_id)

    async def results(self, job_id: str, start: int) -> builtins.list[dict[str, Any]] | None:
        return self.runner.results(job_id, start)

    async def cancel(self, job_id: str) -> dict[str, Any] | None:
        """Cancel or remove a job: any holder of the service's token may (it is the trust boundary)."""
        status = self.runner.cancel(job_id)
        return status.to_dict() if status else None

    async def check_health(self) -> None:
        self.runner.resume_unfinished()
        self.runner.expire()

