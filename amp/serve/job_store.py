"""The job store of the parser service: each sweep job's summary, items and results on disk, no pickle.

Under ``<cache root>/jobs/``: ``<id>.json`` (the job's summary: settings, state, counts, ``meta``),
``<id>.items.json`` (its items) and ``<id>.results.jsonl`` (one line per finished item).  A
:class:`Job` holds the summary, and — while it runs or its results are read — its items and where
each recorded result's line starts.  :mod:`amp.serve.jobs` runs the jobs; this module only keeps them.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amp.parser.core.results import JobStatus
from amp.settings import cache_root


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
