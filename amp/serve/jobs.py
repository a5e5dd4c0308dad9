"""Sweeps as jobs of the parser service: ``JobManager`` (a Ray Serve deployment) and its store.

A job is a list of sweep items (:class:`amp.parser.core.results.BatchItem` as JSON) with search
settings.  The manager cuts it into chunks of ``batch_size`` items **by input position** (so
the batches, and with them the numbers, do not depend on how many replicas there are) and
sends up to two chunks per replica at once to ``ParserWorker.chunk``, where each item is
answered from the server's cache or computed and cached.  A chunk whose replica dies is sent
again (Serve starts a new replica); an item already recorded is never recorded twice.

Everything is kept on disk under ``<cache root>/jobs/``: ``<id>.json`` (the job) and
``<id>.results.jsonl`` (one line per finished item).  A manager that restarts (its replica
died, the service was restarted) reloads every job and resumes the unfinished ones, which
recomputes nothing already cached.  Jobs run on the server whatever their client does: closing
the browser tab does not stop them; ``DELETE /v1/jobs/{id}`` does.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ray import serve

from amp.parser.core.results import FINAL, JobStatus
from amp.settings import cache_root

#: Attempts per chunk before its items are recorded as failed.
ATTEMPTS = 5
#: Results returned by one ``results`` call.
PAGE = 500


def jobs_dir() -> Path:

    return cache_root() / "jobs"


@dataclass
class Job:
    """A job and what has come back of it (``results``: position → BatchItemResult JSON)."""

    id: str
    label: str
    items: list[dict[str, Any]]
    search: dict[str, Any]
    top_n: int
    batch_size: int
    meta: dict[str, Any]
    created: float
    state: str = "queued"
    started: float | None = None
    finished: float | None = None
    error: str | None = None
    results: dict[int, dict[str, Any]] = field(default_factory=dict)
    computed: int = 0
    cancel_requested: bool = False

    def status(self) -> JobStatus:
        done = len(self.results)
        cached = sum(bool(r.get("cached")) for r in self.results.values())
        errors = sum(r.get("error") is not None for r in self.results.values())
        eta = None
        if self.state == "running" and self.started and self.computed:
            per = (time.time() - self.started) / max(1, self.computed)
            eta = per * (len(self.items) - done)
        return JobStatus(id=self.id, label=self.label, state=self.state, total=len(self.items), done=done,
                         cached=cached, errors=errors, created=self.created, started=self.started,
                         finished=self.finished, eta_s=eta, error=self.error, meta=self.meta)

    def spec(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "items": self.items, "search": self.search, "top_n": self.top_n,
                "batch_size": self.batch_size, "meta": self.meta, "created": self.created, "state": self.state,
                "started": self.started, "finished": self.finished, "error": self.error,
                "cancel_requested": self.cancel_requested}


class JobStore:
    """Jobs on disk: one JSON file per job and one JSON-lines file of its results (no pickle)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def save(self, job: Job) -> None:
        tmp = self.folder / f"{job.id}.json.tmp"
        tmp.write_text(json.dumps(job.spec(), ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.folder / f"{job.id}.json")

    def append(self, job: Job, index: int, result: dict[str, Any]) -> None:
        with open(self.folder / f"{job.id}.results.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"index": index, "result": result}, ensure_ascii=False) + "\n")

    def load_all(self) -> dict[str, Job]:
        jobs: dict[str, Job] = {}
        for path in sorted(self.folder.glob("*.json")):
            try:
                d = json.loads(path.read_text(encoding="utf-8"))
                job = Job(id=str(d["id"]), label=str(d.get("label", "")), items=list(d["items"]),
                          search=dict(d["search"]), top_n=int(d["top_n"]), batch_size=int(d["batch_size"]),
                          meta=dict(d.get("meta") or {}), created=float(d["created"]), state=str(d["state"]),
                          started=d.get("started"), finished=d.get("finished"), error=d.get("error"),
                          cancel_requested=bool(d.get("cancel_requested")))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # an unreadable job file is skipped, never executed
            lines = self.folder / f"{job.id}.results.jsonl"
            if lines.exists():
                for line in lines.read_text(encoding="utf-8").splitlines():
                    with contextlib.suppress(ValueError, KeyError, TypeError):
                        row = json.loads(line)
                        index = int(row["index"])
                        if 0 <= index < len(job.items):
                            job.results.setdefault(index, dict(row["result"]))
            jobs[job.id] = job
        return jobs


class JobRunner:
    """The manager's logic without Ray: ``chunk(call)`` is an awaitable that runs a chunk."""

    def __init__(self, chunk: Any, store: JobStore, concurrency: int) -> None:
        self.chunk = chunk
        self.store = store
        self.concurrency = max(1, concurrency)
        self.jobs = store.load_all()
        self.tasks: dict[str, asyncio.Task] = {}
        self._resumed = False

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
        job = Job(id=uuid.uuid4().hex[:16], label=str(request.get("label", "")), items=list(request["items"]),
                  search=dict(request["search"]), top_n=int(request["top_n"]), batch_size=int(request["batch_size"]),
                  meta=dict(request.get("meta") or {}), created=time.time())
        self.jobs[job.id] = job
        self.store.save(job)
        self.start(job)
        return job.status()

    def start(self, job: Job) -> None:
        self.tasks[job.id] = asyncio.get_running_loop().create_task(self._run(job))

    def cancel(self, job_id: str) -> JobStatus | None:
        job = self.jobs.get(job_id)
        if job is None:
            return None
        if job.state not in FINAL:
            job.cancel_requested = True
            if job.id not in self.tasks or self.tasks[job.id].done():
                job.state, job.finished = "cancelled", time.time()
            self.store.save(job)
        return job.status()

    def results(self, job_id: str, start: int) -> list[dict[str, Any]] | None:
        job = self.jobs.get(job_id)
        if job is None:
            return None
        out: list[dict[str, Any]] = []
        i = max(0, start)
        while i in job.results and len(out) < PAGE:
            out.append({"index": i, "item": job.items[i], "result": job.results[i]})
            i += 1
        return out

    async def _run(self, job: Job) -> None:
        job.state = "running"
        job.started = job.started or time.time()
        self.store.save(job)
        pending = [i for i in range(len(job.items)) if i not in job.results]
        chunks = [pending[k:k + job.batch_size] for k in range(0, len(pending), job.batch_size)]
        gate = asyncio.Semaphore(self.concurrency)

        async def one(chunk: list[int]) -> None:
            async with gate:
                if job.cancel_requested:
                    return
                call = {"items": [job.items[i] for i in chunk], "search": job.search, "top_n": job.top_n}
                answer = await self._attempt(call)
                if "error" in answer:
                    message = answer["error"].get("message", "failed")
                    results = [{"id": job.items[i]["id"], "parse": None, "pair": None, "cached": False,
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
            complete = len(job.results) == len(job.items)
            job.state = "done" if complete else "cancelled"
        job.finished = time.time()
        self.store.save(job)

    async def _attempt(self, call: dict[str, Any]) -> dict[str, Any]:
        last = "no attempt"
        for attempt in range(ATTEMPTS):
            try:
                return await self.chunk(call)
            except Exception as exc:  # noqa: BLE001 - a dead replica: Serve starts another; try again
                last = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                await asyncio.sleep(min(8.0, 0.5 * 2**attempt))
        return {"error": {"message": f"gave up after {ATTEMPTS} attempts: {last}"}}

    def _record(self, job: Job, index: int, result: dict[str, Any]) -> None:
        if index in job.results:
            return  # never counted twice
        job.results[index] = result
        if not result.get("cached"):
            job.computed += 1
        self.store.append(job, index, result)


@serve.deployment(name="JobManager", num_replicas=1, max_ongoing_requests=1024, health_check_period_s=2.0,
                  ray_actor_options={"num_cpus": 0})
class JobManager:
    def __init__(self, worker: Any, config: dict[str, Any]) -> None:
        concurrency = 2 * max(1, int(config.get("replicas", 1)))
        self.runner = JobRunner(lambda call: worker.chunk.remote(call), JobStore(jobs_dir()), concurrency)

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

