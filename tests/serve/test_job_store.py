"""The job manager's store without a cluster (issue #27 item 8): retention, DELETE of a finished
job, caps on stored results and on the store, summaries loaded lazily.

:class:`amp.serve.jobs.JobRunner` is the manager's logic without Ray; here its chunks run on a
real :class:`amp.serve.work.Work` (the tiny saved GPT-2, in this process) — no service start-up.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("ray")

from amp.parser.core import limits  # noqa: E402
from amp.serve.job_store import JobStore  # noqa: E402
from amp.serve.jobs import JobRunner  # noqa: E402
from amp.serve.work import ServeConfig, Work  # noqa: E402

LF0 = "exists x . man(x)"
LF1 = "exists y . man(y)"


def _run(coro):
    """``asyncio.run`` in a thread of its own: a browser test earlier in the session leaves
    playwright's event loop running in this thread, where ``asyncio.run`` refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture()
def work(saved_tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Work:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    return Work(ServeConfig(spec=str(saved_tiny_model), device="cpu", dtype="float32"))


def request(n: int, tag: str, batch_size: int = 2, meta: dict | None = None) -> dict:
    items = [{"id": f"{tag}{k}", "prompt": f"Human: the man saw girl {tag}{k}\nComputer:", "lf0": LF0, "lf1": LF1,
              "fmt": "fol", "parse": True, "score": True} for k in range(n)]
    return {"items": items, "search": {"beams": 2, "alpha": 0.7, "constrained": True, "max_new_tokens": 8},
            "top_n": 2, "batch_size": batch_size, "label": tag, "meta": meta or {"page": "unit"}}


def runner_over(work: Work, folder: Path, **kw) -> JobRunner:
    async def chunk(call: dict, on_searched=None) -> dict:
        loop = asyncio.get_running_loop()

        def heard(n: int) -> None:  # from the model's thread, as the replica's stream does
            if on_searched is not None:
                loop.call_soon_threadsafe(on_searched, n)

        return await asyncio.to_thread(work.chunk, call, heard)

    return JobRunner(chunk, JobStore(folder), concurrency=2, **kw)


async def finish(runner: JobRunner, job_id: str) -> None:
    await runner.tasks[job_id]


def files_of(folder: Path, job_id: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(job_id))


def test_a_finished_job_expires_after_its_retention_and_delete_removes_it(work, tmp_path):
    folder = tmp_path / "jobs"

    async def go() -> None:
        runner = runner_over(work, folder, retention_s=3600)
        kept = runner.submit(request(2, "keep")).id
        gone = runner.submit(request(2, "gone")).id
        await finish(runner, kept)
        await finish(runner, gone)
        assert runner.jobs[kept].state == runner.jobs[gone].state == "done"
        assert len(files_of(folder, gone)) == 3  # summary, items, results
        finished = runner.jobs[gone].finished
        assert runner.expire(finished + 10, force=True) == []  # within the retention: kept
        # DELETE of a finished job removes it and its files at once
        status = runner.cancel(kept)
        assert status is not None and status.state == "done"
        assert kept not in runner.jobs and files_of(folder, kept) == []
        assert runner.cancel(kept) is None  # 404 afterwards
        assert runner.expire(finished + 3601, force=True) == [gone]
        assert gone not in runner.jobs and files_of(folder, gone) == []

    _run(go())


def test_a_restarted_manager_holds_summaries_and_reads_results_when_asked(work, tmp_path):
    folder = tmp_path / "jobs"

    async def go() -> str:
        runner = runner_over(work, folder)
        job_id = runner.submit(request(3, "lazy")).id
        await finish(runner, job_id)
        return job_id

    job_id = _run(go())
    again = runner_over(work, folder)  # a manager started again over the same folder
    job = again.jobs[job_id]
    assert job.item_at is None and job.offsets is None  # only the summary is in memory
    status = job.status()
    assert (status.state, status.done, status.total, status.meta) == ("done", 3, 3, {"page": "unit"})
    page = again.results(job_id, 0)
    assert [r["index"] for r in page] == [0, 1, 2] and [r["item"]["id"] for r in page] == ["lazy0", "lazy1", "lazy2"]
    assert all(r["result"]["parse"] is not None for r in page)
    assert job.item_at is None and job.offsets is None  # the last page was read: dropped again
    assert again.results(job_id, 2)[0]["index"] == 2


def test_a_job_over_its_results_cap_stops_failed_and_saying_why(work, tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_JOB_RESULT_BYTES", 10)

    async def go() -> None:
        runner = runner_over(work, tmp_path / "jobs")
        job_id = runner.submit(request(4, "cap", batch_size=1)).id
        await finish(runner, job_id)
        status = runner.jobs[job_id].status()
        assert status.state == "failed" and "MAX_JOB_RESULT_BYTES" in (status.error or "")
        assert status.done < 4

    _run(go())


def test_beyond_the_store_cap_the_oldest_finished_jobs_go_first(work, tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_STORED_JOBS", 2)

    async def go() -> None:
        runner = runner_over(work, tmp_path / "jobs")
        ids = []
        for k in range(3):
            ids.append(runner.submit(request(1, f"n{k}")).id)
            await finish(runner, ids[-1])
        # the third submit made room at once: the oldest finished job went, with its files
        assert sorted(runner.jobs) == sorted(ids[1:])
        assert files_of(tmp_path / "jobs", ids[0]) == []
        assert runner.expire(force=True) == []  # within the cap again

    _run(go())


def test_a_summary_in_the_earlier_layout_is_split_and_read(work, tmp_path):
    folder = tmp_path / "jobs"
    folder.mkdir()
    spec = {"id": "old1", "label": "", "items": request(2, "o")["items"], "search": {"beams": 2}, "top_n": 2,
            "batch_size": 2, "meta": {}, "created": 1.0, "state": "done", "started": 1.0, "finished": 2.0}
    (folder / "old1.json").write_text(json.dumps(spec))
    (folder / "old1.results.jsonl").write_text(json.dumps({"index": 0, "result": {"id": "o0", "cached": True}}) + "\n")
    runner = runner_over(work, folder)
    status = runner.jobs["old1"].status()
    assert (status.total, status.done, status.cached) == (2, 1, 1)
    assert "items" not in json.loads((folder / "old1.json").read_text())
    assert JobStore(folder).load_items("old1")[1]["id"] == "o1"


def test_searches_finished_inside_a_running_chunk_are_reported_before_its_results(work, tmp_path):
    async def go() -> list[tuple[int, int]]:
        runner = runner_over(work, tmp_path / "jobs")
        job_id = runner.submit(request(6, "ahead", batch_size=8)).id  # one chunk: one batched search
        seen: list[tuple[int, int]] = []
        while not runner.tasks[job_id].done():
            job = runner.jobs[job_id]
            if not seen or seen[-1] != (job.done, job.searched):
                seen.append((job.done, job.searched))
            await asyncio.sleep(0.001)
        final = runner.jobs[job_id].status()
        assert final.state == "done" and final.searched == 0 and final.elapsed_s is not None
        return seen

    seen = _run(go())
    assert any(done == 0 and searched > 0 for done, searched in seen), seen  # searched, not yet recorded
