"""Sweeps as jobs of the parser service: ``JobManager`` (a Ray Serve deployment) and its store.

A job is a list of sweep items (:class:`amp.parser.core.results.BatchItem` as JSON) with search
settings.  The manager cuts it into chunks of ``batch_size`` items **by input position** (so
the batches, and with them the numbers, do not depend on how many replicas there are) and
sends up to two chunks per replica at once to ``ParserWorker.chunk``, where each item is
answered from the server's cache or computed and cached.  A chunk whose replica dies is sent
again (Serve starts a new replica); an item already recorded is never recorded twice.

Everything is kept on disk under ``<cache root>/jobs/``: ``<id>.json`` (the job's summary:
settings, state, counts, ``meta``), ``<id>.items.json`` (its items) and ``<id>.results.jsonl``
(one line per finished item).  The manager holds only the summaries; a job's items and the
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
import contextlib
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ray import serve

from amp.parser.core import limits
from amp.parser.core.results import FINAL, JobStatus
from amp.settings import cache_root

#: Attempts per chunk before its items are recorded as failed.
ATTEMPTS = 5
#: Results returned by one ``results`` call.
PAGE = 500
#: How long a finished job is kept by default (seconds; ``amp serve --job-retention-hours``).
DEFAULT_RETENTION_S = 7 * 24 * 3600.0
#: Seconds between two sweeps of the store for expired jobs.
EXPIRE_EVERY_S = 30.0


def jobs_dir() -> Path:

    return cache_root() / "jobs"


@dataclass
class Job:
    """A job's summary, and — while it runs or its results are read — its items and where each
    recorded result's line starts in the results file (``offsets``: position → byte offset)."""

    id: str
    label: str
    search: dict[str, Any]
    top_n: int
    batch_size: int
    meta: dict[str, Any]
    created: float
    total: int
    state: str = "queued"
    started: float | None = None
    finished: float | None = None
    error: str | None = None
    cancel_requested: bool = False
    done: int = 0
    cached: int = 0
    errors: int = 0
    computed: int = 0
    items: list[dict[str, Any]] | None = None
    offsets: dict[int, int] | None = None
    searched: int = 0  # items searched inside running chunks, not yet recorded
    run_started: float | None = None  # when this manager (re)started the job
    eta: tuple[float, float] | None = None  # the last estimate given, and when

    def status(self, now: float | None = None) -> JobStatus:
        now = time.time() if now is None else now
        elapsed = None if self.started is None else max(0.0, (self.finished or now) - self.started)
        return JobStatus(id=self.id, label=self.label, state=self.state, total=self.total, done=self.done,
                         cached=self.cached, errors=self.errors, created=self.created, started=self.started,
                         finished=self.finished, eta_s=self._estimate(now), error=self.error, meta=self.meta,
                         searched=self.searched if self.state == "running" else 0, elapsed_s=elapsed)

    def _estimate(self, now: float) -> float | None:
        """Seconds left: this run's time per item computed or searched × the items left, smoothed
        against the previous estimate (counted down since) so that it never jumps by more than
        ×2 at once — a batch that returns several items together no longer swings it 25×."""
        progressed = self.computed + self.searched
        if self.state != "running" or not self.run_started or not progressed:
            return None
        raw = (now - self.run_started) / progressed * max(0, self.total - self.done - self.searched)
        if self.eta is not None:
            before = max(1.0, self.eta[0] - (now - self.eta[1]))
            raw = 0.5 * before + 0.5 * min(2 * before, max(before / 2, raw))
        self.eta = (raw, now)
        return raw

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "search": self.search, "top_n": self.top_n,
                "batch_size": self.batch_size, "meta": self.meta, "created": self.created, "total": self.total,
                "state": self.state, "started": self.started, "finished": self.finished, "error": self.error,
                "cancel_requested": self.cancel_requested, "done": self.done, "cached": self.cached,
                "errors": self.errors}


def _job_of(d: dict[str, Any], total: int) -> Job:
    return Job(id=str(d["id"]), label=str(d.get("label", "")), search=dict(d["search"]), top_n=int(d["top_n"]),
               batch_size=int(d["batch_size"]), meta=dict(d.get("meta") or {}), created=float(d["created"]),
               total=total, state=str(d["state"]), started=d.get("started"), finished=d.get("finished"),
               error=d.get("error"), cancel_requested=bool(d.get("cancel_requested")),
               done=int(d.get("done", 0)), cached=int(d.get("cached", 0)), errors=int(d.get("errors", 0)))


class JobStore:
    """Jobs on disk: a JSON summary, a JSON list of items and a JSON-lines file of results per job
    (no pickle)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def _path(self, job_id: str, kind: str) -> Path:
        return self.folder / f"{job_id}.{kind}"

    def save(self, job: Job) -> None:
        tmp = self._path(job.id, "json.tmp")
        tmp.write_text(json.dumps(job.summary(), ensure_ascii=False), encoding="utf-8")
        tmp.replace(self._path(job.id, "json"))

    def save_items(self, job_id: str, items: list[dict[str, Any]]) -> None:
        tmp = self._path(job_id, "items.json.tmp")
        tmp.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self._path(job_id, "items.json"))

    def load_items(self, job_id: str) -> list[dict[str, Any]]:
        return list(json.loads(self._path(job_id, "items.json").read_text(encoding="utf-8")))

    def append(self, job: Job, index: int, result: dict[str, Any]) -> tuple[int, int]:
        """Append one result line; (the byte offset where it starts, the file's size after it)."""
        with open(self._path(job.id, "results.jsonl"), "ab") as fh:
            offset = fh.tell()
            fh.write((json.dumps({"index": index, "result": result}, ensure_ascii=False) + "\n").encode("utf-8"))
            return offset, fh.tell()

    def scan(self, job: Job) -> tuple[dict[int, int], int, int]:
        """``index → byte offset`` of each result line (the first one per index), and how many of
        those results were cached and how many failed; read line by line, a torn or foreign line
        skipped."""
        offsets: dict[int, int] = {}
        cached = errors = 0
        path = self._path(job.id, "results.jsonl")
        if not path.exists():
            return offsets, cached, errors
        with open(path, "rb") as fh:
            offset = 0
            for line in fh:
                with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                    row = json.loads(line)
                    index, result = int(row["index"]), row["result"]
                    if 0 <= index < job.total and index not in offsets:
                        offsets[index] = offset
                        cached += bool(result.get("cached"))
                        errors += result.get("error") is not None
                offset += len(line)
        return offsets, cached, errors

    def read(self, job: Job, offsets: list[int]) -> list[dict[str, Any]]:
        """The results at these byte offsets."""
        out: list[dict[str, Any]] = []
        if not offsets:
            return out
        with open(self._path(job.id, "results.jsonl"), "rb") as fh:
            for offset in offsets:
                fh.seek(offset)
                out.append(dict(json.loads(fh.readline())["result"]))
        return out

    def size(self, job_id: str) -> int:
        total = 0
        for kind in ("json", "items.json", "results.jsonl"):
            with contextlib.suppress(OSError):
                total += self._path(job_id, kind).stat().st_size
        return total

    def delete(self, job_id: str) -> None:
        for kind in ("json", "items.json", "results.jsonl", "json.tmp", "items.json.tmp"):
            with contextlib.suppress(FileNotFoundError):
                self._path(job_id, kind).unlink()

    def load_all(self) -> dict[str, Job]:
        """Every job's summary (a summary written before items had a file of their own is split now)."""
        jobs: dict[str, Job] = {}
        for path in sorted(self.folder.glob("*.json")):
            if path.name.endswith(".items.json"):
                continue
            try:
                d = json.loads(path.read_text(encoding="utf-8"))
                if "items" in d:  # the earlier layout: one file with the items inside
                    items = list(d.pop("items"))
                    job = _job_of(d, len(items))
                    self.save_items(job.id, items)
                    self._recount(job)
                    self.save(job)
                else:
                    job = _job_of(d, int(d["total"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # an unreadable job file is skipped, never executed
            jobs[job.id] = job
        return jobs

    def _recount(self, job: Job) -> None:
        offsets, job.cached, job.errors = self.scan(job)
        job.done = len(offsets)


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

