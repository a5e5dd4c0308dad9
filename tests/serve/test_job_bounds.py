"""Bounds of the job store (issue #44 points 3 and 6) and its resume and retention rules (issue #45):
a ``meta`` too deep refused before storing, a stored job that cannot be sent never breaks the listing,
unfinished jobs counted against the store's caps, items read from disk chunk by chunk, jobs
resumed from every unfinished state, retention counted from finishing.

The manager's logic (:class:`amp.serve.jobs.JobRunner`) runs as plain Python over a stand-in
for the replicas: each chunk is answered at once (or held until the test lets it go).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from service_helpers import nested

pytest.importorskip("ray")

from amp.errors import SettingError  # noqa: E402
from amp.parser.core import limits  # noqa: E402
from amp.parser.core.errors import RequestTooLarge  # noqa: E402
from amp.serve.errors import JobStoreFull  # noqa: E402
from amp.serve.job_store import Job, JobStore  # noqa: E402
from amp.serve.jobs import JobRunner  # noqa: E402

HOUR = 3600.0


def _run(coro):
    """``asyncio.run`` in a thread of its own (a browser test may leave a loop running in this one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def request(n: int, tag: str, meta: dict | None = None, prompt_chars: int = 0) -> dict[str, Any]:
    items = [{"id": f"{tag}{k}", "prompt": f"Human: {tag}{k} " + "x" * prompt_chars + "\nComputer:"}
             for k in range(n)]
    return {"items": items, "search": {"beams": 1}, "top_n": 1, "batch_size": 2, "label": tag,
            "meta": {"page": "unit"} if meta is None else meta}


class Replicas:
    """A stand-in for the worker replicas: answers each chunk with one result per item, and
    records the ids it was asked for; while ``hold`` is set, every chunk waits for it to clear."""

    def __init__(self, hold: bool = False) -> None:
        self.asked: list[list[str]] = []
        self.go: asyncio.Event | None = None
        self.hold = hold

    async def __call__(self, call: dict[str, Any], on_searched: Any = None) -> dict[str, Any]:
        self.asked.append([item["id"] for item in call["items"]])
        if self.hold:
            self.go = self.go or asyncio.Event()
            await self.go.wait()
        return {"results": [{"id": item["id"], "parse": None, "pair": None, "cached": False, "error": None}
                            for item in call["items"]]}

    def release(self) -> None:
        self.hold = False
        if self.go is not None:
            self.go.set()


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def stored_job(store: JobStore, job_id: str, *, state: str = "done", created: float = 1000.0,
               finished: float | None = 1001.0, total: int = 2, meta: dict | None = None) -> Job:
    """A job written into the store directly, as an earlier manager (or version) left it."""
    job = Job(id=job_id, label=job_id, search={"beams": 1}, top_n=1, batch_size=1, meta=meta or {},
              created=created, total=total, state=state, started=None if state == "queued" else created,
              finished=finished)
    store.save_items(job_id, [{"id": f"{job_id}-{k}", "prompt": f"Human: {job_id} {k}\nComputer:"}
                              for k in range(total)])
    store.save(job)
    return job


def test_a_meta_too_deep_or_not_sendable_is_refused_by_the_manager_and_nothing_is_stored(tmp_path):
    folder = tmp_path / "jobs"

    async def go() -> None:
        runner = JobRunner(Replicas(), JobStore(folder), 1)
        with pytest.raises(RequestTooLarge, match="MAX_JSON_DEPTH"):
            runner.submit(request(2, "deep", meta=nested(900)))
        with pytest.raises(SettingError, match="cannot be sent back as JSON"):
            runner.submit(request(2, "odd", meta={"x": object()}))  # a Python caller: no JSON for it
        answer = runner.submit_answer(request(2, "deep", meta=nested(900)))
        assert answer["error"]["status"] == 422 and "MAX_JSON_DEPTH" in answer["error"]["message"]
        assert runner.jobs == {} and files(folder) == []

    _run(go())


# -- a stored job that cannot be sent never breaks the listing ------------------------------------------


def test_a_stored_job_that_cannot_be_sent_is_skipped_with_a_note_and_can_be_removed(tmp_path, caplog):
    folder = tmp_path / "jobs"
    store = JobStore(folder)
    stored_job(store, "good", created=2000.0, finished=2001.0)
    stored_job(store, "newer", created=3000.0, finished=3001.0)
    stored_job(store, "deep", meta=nested(900))  # as a version without the depth bound stored it
    (folder / "torn.json").write_text('{"id": "torn", "label": ', encoding="utf-8")  # a damaged disk
    (folder / "torn.results.jsonl").write_text("{}\n", encoding="utf-8")

    async def go() -> None:
        with caplog.at_level("WARNING", logger="amp.serve.job_store"):
            runner = JobRunner(Replicas(), JobStore(folder), 1)
        assert {"deep", "torn"} <= {r.args[0] for r in caplog.records}  # each logged once, at load
        listing = runner.listing()
        json.dumps(listing, allow_nan=False)  # the whole listing can be sent
        assert [j["id"] for j in listing["jobs"]] == ["newer", "good"]
        skipped = {s["id"]: s["reason"] for s in listing["skipped"]}
        assert set(skipped) == {"deep", "torn"}
        assert "cannot be sent" in skipped["deep"] and "cannot be read" in skipped["torn"]
        for job_id in ("deep", "torn"):
            answer = runner.status_answer(job_id)
            assert answer is not None and answer["error"]["status"] == 410
            assert f"DELETE /v1/jobs/{job_id}" in answer["error"]["message"]
        assert runner.status_answer("good")["state"] == "done"
        assert runner.status_answer("nothing") is None
        for job_id in ("deep", "torn"):  # DELETE removes them and their files
            status = runner.cancel(job_id)
            assert status is not None and status.meta == {}
            json.dumps(status.to_dict(), allow_nan=False)
            assert not [name for name in files(folder) if name.startswith(job_id + ".")]
        assert runner.listing()["skipped"] == [] and len(runner.listing()["jobs"]) == 2

    _run(go())


def test_an_unreadable_job_expires_like_a_finished_one(tmp_path):
    folder = tmp_path / "jobs"
    folder.mkdir(parents=True)
    (folder / "torn.json").write_text("not json", encoding="utf-8")
    written = JobStore(folder).modified("torn")
    runner = JobRunner(Replicas(), JobStore(folder), 1, retention_s=HOUR)
    assert runner.expire(written + 10, force=True) == []
    assert runner.expire(written + HOUR + 1, force=True) == ["torn"]
    assert not (folder / "torn.json").exists()


# -- unfinished jobs count against the caps ---------------------------------------------------------


def test_beyond_the_unfinished_jobs_cap_a_submit_is_refused_naming_it_and_nothing_is_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_UNFINISHED_JOBS", 2)
    folder = tmp_path / "jobs"

    async def go() -> None:
        replicas = Replicas(hold=True)
        runner = JobRunner(replicas, JobStore(folder), 1)
        first, second = runner.submit(request(2, "a")).id, runner.submit(request(2, "b")).id
        before = files(folder)
        with pytest.raises(JobStoreFull, match=r"2 jobs are queued or running, the limit is 2 \(MAX_UNFINISHED_JOBS\)"):
            runner.submit(request(2, "c"))
        answer = runner.submit_answer(request(2, "c"))
        assert answer["error"]["status"] == 429 and "MAX_UNFINISHED_JOBS" in answer["error"]["message"]
        assert sorted(runner.jobs) == sorted([first, second]) and files(folder) == before
        replicas.release()
        await asyncio.gather(*runner.tasks.values())
        assert runner.submit(request(2, "c")).state in ("queued", "running")  # room again once they finished
        await asyncio.gather(*runner.tasks.values())

    _run(go())


def test_unfinished_jobs_count_against_the_store_caps_finished_ones_make_room(tmp_path, monkeypatch):
    folder = tmp_path / "jobs"

    async def go() -> None:
        replicas = Replicas()
        runner = JobRunner(replicas, JobStore(folder), 1)
        done = runner.submit(request(4, "done", prompt_chars=2000)).id
        await runner.tasks[done]
        replicas.hold = True
        running = runner.submit(request(4, "run", prompt_chars=2000)).id
        size = runner.sizes[running]
        # bytes: room for the running job and one more of its size, finished ones aside
        monkeypatch.setattr(limits, "MAX_JOBS_STORE_BYTES", 2 * size + size // 2)
        third = runner.submit(request(4, "more", prompt_chars=2000)).id  # the finished job makes room
        assert done not in runner.jobs and sorted(runner.jobs) == sorted([running, third])
        before = files(folder)
        with pytest.raises(JobStoreFull, match=r"unfinished jobs hold [\d,]+ bytes.*\(MAX_JOBS_STORE_BYTES\)"):
            runner.submit(request(4, "over", prompt_chars=2000))
        assert files(folder) == before and len(runner.jobs) == 2
        with pytest.raises(JobStoreFull, match="split the sweep") as too_big:
            runner.submit(request(40, "huge", prompt_chars=2000))
        assert too_big.value.status == 413 and files(folder) == before
        # count: two unfinished jobs fill a store of two
        monkeypatch.setattr(limits, "MAX_JOBS_STORE_BYTES", 2**30)
        monkeypatch.setattr(limits, "MAX_STORED_JOBS", 2)
        with pytest.raises(JobStoreFull, match=r"2 unfinished jobs fill the job store.*\(MAX_STORED_JOBS\)"):
            runner.submit(request(1, "one"))
        assert files(folder) == before
        replicas.release()
        await asyncio.gather(*runner.tasks.values())

    _run(go())


def test_a_running_job_that_would_overfill_the_store_stops_failed_after_finished_ones_went(tmp_path, monkeypatch):
    folder = tmp_path / "jobs"

    async def go() -> None:
        runner = JobRunner(Replicas(), JobStore(folder), 1)
        old = runner.submit(request(2, "old", prompt_chars=500)).id
        await runner.tasks[old]
        monkeypatch.setattr(limits, "MAX_JOBS_STORE_BYTES", runner.stored_bytes() + 3000)
        job_id = runner.submit(request(40, "big", prompt_chars=10)).id  # its items fit; its results do not
        await runner.tasks[job_id]
        status = runner.jobs[job_id].status()
        assert old not in runner.jobs  # the finished job went first
        assert status.state == "failed" and "MAX_JOBS_STORE_BYTES" in (status.error or "")
        assert 0 < status.done < 40

    _run(go())


def test_the_manager_reads_a_job_s_items_from_disk_chunk_by_chunk(tmp_path):
    """Items are not held in memory: a chunk sends what the items file holds when it is sent."""
    folder = tmp_path / "jobs"

    async def go() -> None:
        replicas = Replicas(hold=True)
        runner = JobRunner(replicas, JobStore(folder), 1)
        job_id = runner.submit(request(4, "disk")).id  # batch_size 2: two chunks, one at a time
        while not replicas.asked:
            await asyncio.sleep(0.001)
        path = folder / f"{job_id}.items.jsonl"
        path.write_text(path.read_text(encoding="utf-8").replace("disk3", "DISK3"), encoding="utf-8")
        replicas.release()
        await runner.tasks[job_id]
        assert replicas.asked == [["disk0", "disk1"], ["disk2", "DISK3"]]
        assert [r["item"]["id"] for r in runner.results(job_id, 0)] == ["disk0", "disk1", "disk2", "DISK3"]

    _run(go())


def test_items_stored_as_one_json_list_by_an_earlier_version_are_rewritten_as_lines_and_read(tmp_path):
    folder = tmp_path / "jobs"
    store = JobStore(folder)
    stored_job(store, "mid", total=3)
    items = store.load_items("mid")
    (folder / "mid.items.jsonl").unlink()
    (folder / "mid.items.json").write_text(json.dumps(items), encoding="utf-8")  # the earlier layout
    for k in range(3):
        store.append(Job(id="mid", label="", search={}, top_n=1, batch_size=1, meta={}, created=0.0, total=3),
                     k, {"id": f"mid-{k}", "parse": None, "pair": None, "cached": True, "error": None})
    runner = JobRunner(Replicas(), JobStore(folder), 1)
    assert [r["item"]["id"] for r in runner.results("mid", 0)] == ["mid-0", "mid-1", "mid-2"]
    assert not (folder / "mid.items.json").exists() and (folder / "mid.items.jsonl").exists()


# -- issue #45: resumed from every unfinished state; retention from finishing ------------------------------


def test_a_queued_and_an_interrupted_job_both_end_done_after_a_restart(tmp_path):
    folder = tmp_path / "jobs"
    store = JobStore(folder)
    stored_job(store, "queued", state="queued", finished=None, total=3)
    interrupted = stored_job(store, "inter", state="interrupted", finished=None, total=3)
    store.append(interrupted, 1, {"id": "inter-1", "parse": None, "pair": None, "cached": True, "error": None})

    async def go() -> JobRunner:
        replicas = Replicas()
        runner = JobRunner(replicas, JobStore(folder), 1)  # the manager started again over the folder
        runner.resume_unfinished()
        await asyncio.gather(*runner.tasks.values())
        asked = sorted(i for chunk in replicas.asked for i in chunk)
        assert asked == ["inter-0", "inter-2", "queued-0", "queued-1", "queued-2"]  # only the missing ones
        return runner

    runner = _run(go())
    for job_id in ("queued", "inter"):
        status = runner.jobs[job_id].status()
        assert (status.state, status.done, status.total) == ("done", 3, 3), job_id
    assert [r["index"] for r in runner.results("inter", 0)] == [0, 1, 2]


def test_retention_counts_from_finishing_not_from_creation(tmp_path):
    finished = 1_700_000_000.0
    store = JobStore(tmp_path / "jobs")
    stored_job(store, "late", created=finished - 2 * HOUR, finished=finished)
    runner = JobRunner(Replicas(), store, 1, retention_s=HOUR)
    assert runner.expire(finished + 10, force=True) == []
    assert "late" in runner.jobs
    assert runner.expire(finished + HOUR + 1, force=True) == ["late"]
    assert "late" not in runner.jobs and files(tmp_path / "jobs") == []
