"""Sweeps as jobs of the parser service: ``JobManager`` (a Ray Serve deployment) and its store.

A job is a list of sweep items (:class:`amp.parser.core.results.BatchItem` as JSON) with search
settings.  The manager cuts it into chunks of ``batch_size`` items **by input position** (so
the batches, and with them the numbers, do not depend on how many replicas there are) and
sends up to two chunks per replica at once to ``ParserWorker.chunk``, where each item is
answered from the server's cache or computed and cached.  A chunk whose replica dies is sent
again (Serve starts a new replica); an item already recorded is never recorded twice.

Everything is kept on disk under ``<cache root>/jobs/`` (:mod:`amp.serve.job_store`).  The manager
holds only the summaries; a job's items and the
positions of its result lines are read when it runs or when its results are asked for, and
dropped again once it has finished and its last page was read.  A manager that restarts (its
replica died, the service was restarted) reads the summaries and resumes the unfinished jobs,
asking only for the items missing from their results (which recomputes nothing already cached).
Jobs run on the server whatever their client does: closing the browser tab does not stop them;
``DELETE /v1/jobs/{id}`` does, and on a finished job it removes the job and its files.

Bounded (:mod:`amp.parser.core.limits`): a job's ``meta`` (:data:`~amp.parser.core.limits.MAX_JOB_META_BYTES`,
checked by the schema), its stored results (:data:`~amp.parser.core.limits.MAX_JOB_RESULT_BYTES`:
the job stops, failed, saying so), and the store: finished jobs expire ``retention_s`` after
they finished, and beyond :data:`~amp.parser.core.limits.MAX_STORED_JOBS` jobs or
:data:`~amp.parser.core.limits.MAX_JOBS_STORE_BYTES` bytes the oldest finished ones go first.
"""

from __future__ import annotations

import asyncio
import builtins
import time
import uuid
from typing import Any

from ray import serve

from amp.parser.core import limits
from amp.parser.core.results import FINAL, JobStatus
from amp.serve.job_store import Job, JobStore, jobs_dir

#: Attempts per chunk before its items are recorded as failed.
ATTEMPTS = 5
#: Results returned by one ``results`` call.
PAGE = 500
#: How long a finished job is kept by default (seconds; ``amp serve --job-retention-hours``).
DEFAULT_RETENTION_S = 7 * 24 * 3600.0
#: Seconds between two sweeps of the store for expired jobs.
EXPIRE_EVERY_S = 30.0


class JobRunner:
    """The manager's logic without Ray: ``chunk(call)`` is an awaitable that runs a chunk."""

    def __init__(self, chunk: Any, store: JobStore, concurrency: int, *,
                 retention_s: float = DEFAULT_RETENTION_S) -> None:
        self.chunk = chunk
        self.store = store
        self.concurrency = max(1, concurrency)
        self.retention_s = float(retention_s)
        self.jobs = store.load_all()
        self.tasks: dict[str, asyncio.Task] = {}
        self._resumed = False
        self._expired_at = 0.0

    def resume_unfinished(self) -> None:
        """Start again every job that was running when the manager stopped (once)."""
        if self._resumed:
            return
        self._resumed = True
        for job in self.jobs.values():
            if job.state not in FINAL:
                job.state = "interrupted"
                self.start(job)

    def submit(self, request: dict[str, Any]) -> JobStatus:
        items = list(request["items"])
        job = Job(id=uuid.uuid4().hex[:16], label=str(request.get("label", "")), search=dict(request["search"]),
                  top_n=int(request["top_n"]), batch_size=int(request["batch_size"]),
                  meta=dict(request.get("meta") or {}), created=time.time(), total=len(items), items=items, offsets={})
        self.store.save_items(job.id, items)
        self.jobs[job.id] = job
        self.store.save(job)
        self.start(job)
        self.expire()
        return job.status()

    def start(self, job: Job) -> None:
        self.tasks[job.id] = asyncio.get_running_loop().create_task(self._run(job))

    def cancel(self, job_id: str) -> JobStatus | None:
        """Cancel a job that has not finished; remove a finished one with its files."""
        job = self.jobs.get(job_id)
        if job is None:
            return None
        if job.state in FINAL:
            self._forget(job)
            return job.status()
        job.cancel_requested = True
        if job.id not in self.tasks or self.tasks[job.id].done():
            job.state, job.finished = "cancelled", time.time()
        self.store.save(job)
        return job.status()

    def _forget(self, job: Job) -> None:
        self.jobs.pop(job.id, None)
        self.tasks.pop(job.id, None)
        self.store.delete(job.id)

    def expire(self, now: float | None = None, *, force: bool = False) -> list[str]:
        """Remove finished jobs past their retention, then the oldest finished ones while the store
        is over its caps; the ids removed.  At most every :data:`EXPIRE_EVERY_S` unless ``force``."""
        now = time.time() if now is None else now
        if not force and now - self._expired_at < EXPIRE_EVERY_S:
            return []
        self._expired_at = now
        finished = sorted((j for j in self.jobs.values() if j.state in FINAL),
                          key=lambda j: j.finished or j.created)
        gone = [j for j in finished if (j.finished or j.created) + self.retention_s <= now]
        kept = [j for j in finished if j not in gone]
        sizes = {j.id: self.store.size(j.id) for j in self.jobs.values()}
        count, total = len(self.jobs) - len(gone), sum(sizes.values()) - sum(sizes[j.id] for j in gone)
        for job in kept:
            if count <= limits.MAX_STORED_JOBS and total <= limits.MAX_JOBS_STORE_BYTES:
                break
            gone.append(job)
            count, total = count - 1, total - sizes[job.id]
        for job in gone:
            self._forget(job)
        return [j.id for j in gone]

    def _loaded(self, job: Job) -> Job:
        """The job with its items and result offsets in memory."""
        if job.items is None:
            job.items = self.store.load_items(job.id)
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
        assert job.items is not None and job.offsets is not None
        indices: list[int] = []
        i = max(0, start)
        while i in job.offsets and len(indices) < PAGE:
            indices.append(i)
            i += 1
        found = self.store.read(job, [job.offsets[k] for k in indices])
        out = [{"index": k, "item": job.items[k], "result": r} for k, r in zip(indices, found, strict=True)]
        if job.state in FINAL and i >= job.total and job.id not in self._running():
            job.items = job.offsets = None  # the last page was read: back to the summary only
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
        assert job.items is not None and job.offsets is not None
        items, recorded = job.items, job.offsets
        pending = [i for i in range(job.total) if i not in recorded]
        chunks = [pending[k:k + job.batch_size] for k in range(0, len(pending), job.batch_size)]
        gate = asyncio.Semaphore(self.concurrency)

        async def one(chunk: list[int]) -> None:
            async with gate:
                if job.cancel_requested or job.error:
                    return
                call = {"items": [items[i] for i in chunk], "search": job.search, "top_n": job.top_n}
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
                    results = [{"id": items[i]["id"], "parse": None, "pair": None, "cached": False,
                                "error": message} for i in chunk]
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
        job.offsets[index] = offset
        job.done += 1
        job.cached += bool(result.get("cached"))
        job.errors += result.get("error") is not None
        if not result.get("cached"):
            job.computed += 1
        if size > limits.MAX_JOB_RESULT_BYTES:
            job.error = (f"the job's results reached {size:,} bytes, over the limit of "
                         f"{limits.MAX_JOB_RESULT_BYTES:,} (MAX_JOB_RESULT_BYTES): split the sweep")


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
        self.runner.resume_unfinished()
        return self.runner.submit(request).to_dict()

    async def list(self) -> list[dict[str, Any]]:
        self.runner.resume_unfinished()
        jobs = sorted(self.runner.jobs.values(), key=lambda j: -j.created)
        return [j.status().to_dict() for j in jobs]

    async def status(self, job_id: str) -> dict[str, Any] | None:
        self.runner.resume_unfinished()
        job = self.runner.jobs.get(job_id)
        return job.status().to_dict() if job else None

    async def results(self, job_id: str, start: int) -> builtins.list[dict[str, Any]] | None:
        return self.runner.results(job_id, start)

    async def cancel(self, job_id: str) -> dict[str, Any] | None:
        status = self.runner.cancel(job_id)
        return status.to_dict() if status else None

    async def check_health(self) -> None:
        self.runner.resume_unfinished()
        self.runner.expire()

