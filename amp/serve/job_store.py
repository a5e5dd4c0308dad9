"""The job store of the parser service: each sweep job's summary, items and results on disk, no pickle.

Under ``<cache root>/jobs/``: ``<id>.json`` (the job's summary: settings, state, counts, ``meta``),
``<id>.items.jsonl`` (its items, one line each) and ``<id>.results.jsonl`` (one line per finished
item).  A :class:`Job` holds the summary, and — while it runs or its results are read — where each
item's line and each recorded result's line start: the items themselves are read from disk a
chunk or a page at a time, so a manager running many large jobs does not hold their items.
(Earlier layouts — items inside the summary, or as one JSON list in ``<id>.items.json`` — are
rewritten as they are met.)  :mod:`amp.serve.jobs` runs the jobs; this module only keeps them.

A summary that cannot be read, or whose status cannot be sent as JSON (a ``meta`` nested past
:data:`~amp.parser.core.limits.MAX_JSON_DEPTH`, written by an earlier version or a damaged disk),
is never executed nor sent: :meth:`JobStore.load_all` reports it apart, with the reason.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amp.parser.core.json_bounds import check_json_depth
from amp.parser.core.results import JobStatus
from amp.settings import cache_root

log = logging.getLogger(__name__)


def jobs_dir() -> Path:
    return cache_root() / "jobs"


@dataclass
class Job:
    """A job's summary, and — while it runs or its results are read — where each item's line starts
    in the items file (``item_at``: position → byte offset) and where each recorded result's line
    starts in the results file (``offsets``: position → byte offset).  ``unreadable`` says why the
    job's status cannot be sent (None: it can)."""

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
    item_at: array | None = None
    offsets: dict[int, int] | None = None
    unreadable: str | None = None
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


def unsendable(job: Job) -> str | None:
    """Why the job's status cannot be sent as JSON — its ``meta`` nested past
    :data:`~amp.parser.core.limits.MAX_JSON_DEPTH`, a value that has no JSON form (an object a Python
    caller put there) — or None."""
    try:
        check_json_depth(job.meta, "its meta")
        json.dumps(job.status().to_dict(), allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        return " ".join(str(exc).split())[:300]
    return None


def _job_of(d: dict[str, Any], total: int) -> Job:
    return Job(id=str(d["id"]), label=str(d.get("label", "")), search=dict(d["search"]), top_n=int(d["top_n"]),
               batch_size=int(d["batch_size"]), meta=dict(d.get("meta") or {}), created=float(d["created"]),
               total=total, state=str(d["state"]), started=d.get("started"), finished=d.get("finished"),
               error=d.get("error"), cancel_requested=bool(d.get("cancel_requested")),
               done=int(d.get("done", 0)), cached=int(d.get("cached", 0)), errors=int(d.get("errors", 0)))


class JobStore:
    """Jobs on disk: a JSON summary, a JSON-lines file of items and one of results per job
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

    @staticmethod
    def encode_items(items: list[dict[str, Any]]) -> bytes:
        """The items file's bytes: one JSON line per item (their size is known before anything is stored)."""
        return b"".join((json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8") for item in items)

    def save_items(self, job_id: str, items: list[dict[str, Any]] | bytes) -> None:
        data = items if isinstance(items, bytes) else self.encode_items(items)
        tmp = self._path(job_id, "items.jsonl.tmp")
        tmp.write_bytes(data)
        tmp.replace(self._path(job_id, "items.jsonl"))

    def item_offsets(self, job_id: str) -> array:
        """Where each item's line starts (an item list in the earlier one-list file is rewritten first)."""
        path = self._path(job_id, "items.jsonl")
        earlier = self._path(job_id, "items.json")
        if not path.exists() and earlier.exists():
            self.save_items(job_id, list(json.loads(earlier.read_text(encoding="utf-8"))))
            earlier.unlink()
        at = array("q")
        with open(path, "rb") as fh:
            offset = 0
            for line in fh:
                at.append(offset)
                offset += len(line)
        return at

    def read_items(self, job_id: str, offsets: list[int]) -> list[dict[str, Any]]:
        """The items whose lines start at these byte offsets."""
        out: list[dict[str, Any]] = []
        if not offsets:
            return out
        with open(self._path(job_id, "items.jsonl"), "rb") as fh:
            for offset in offsets:
                fh.seek(offset)
                out.append(dict(json.loads(fh.readline())))
        return out

    def load_items(self, job_id: str) -> list[dict[str, Any]]:
        """Every item of a job, in order."""
        return self.read_items(job_id, list(self.item_offsets(job_id)))

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
        """Bytes of the job's files on disk."""
        total = 0
        for kind in ("json", "items.jsonl", "items.json", "results.jsonl"):
            with contextlib.suppress(OSError):
                total += self._path(job_id, kind).stat().st_size
        return total

    def delete(self, job_id: str) -> None:
        for kind in ("json", "items.jsonl", "items.json", "results.jsonl", "json.tmp", "items.jsonl.tmp",
                     "items.json.tmp"):
            with contextlib.suppress(FileNotFoundError):
                self._path(job_id, kind).unlink()

    def modified(self, job_id: str) -> float:
        """When the job's summary was last written (0 if it is gone)."""
        try:
            return self._path(job_id, "json").stat().st_mtime
        except OSError:
            return 0.0

    def load_all(self) -> tuple[dict[str, Job], dict[str, str]]:
        """Every job's summary (a summary written before items had a file of their own is split now),
        and apart, ``id → reason`` for each summary that cannot be read (each logged once here).
        A job whose status cannot be sent is loaded with its reason in ``unreadable``."""
        jobs: dict[str, Job] = {}
        broken: dict[str, str] = {}
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
            except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
                job_id = path.name[: -len(".json")]
                broken[job_id] = f"its stored summary cannot be read ({type(exc).__name__})"
                log.warning("job %s skipped: %s", job_id, broken[job_id])
                continue  # an unreadable job file is skipped, never executed
            job.unreadable = unsendable(job)
            if job.unreadable:
                log.warning("job %s is not listed: its status cannot be sent (%s)", job.id, job.unreadable)
            jobs[job.id] = job
        return jobs, broken

    def _recount(self, job: Job) -> None:
        offsets, job.cached, job.errors = self.scan(job)
        job.done = len(offsets)
