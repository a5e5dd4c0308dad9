"""The jobs panel of a sweep page (issue #46 point 6): its table is read again once a job was followed or
cancelled — never "running 0/1 … took 46.0 s so far" beside a finished sweep — and "Cancel job" is offered
only for a job that has not finished.  A scripted job client stands in for the parser service."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from amp.evaluation import experiments as ex
from amp.evaluation import runs
from amp.evaluation.run_context import RunContext
from amp.parser.core.results import BatchItem, BatchItemResult, JobResult, JobStatus
from ui.model import parsers
from ui.sweeps import sweep

KEY = "zeroshot_sweep"
CONFIG = ex.ZeroShotConfig(types=("pp",), n=1, seed=0)


class ScriptedJobs:
    """Jobs of a parser service: ``running`` until its results are read (then done, 302.4 s), ``over`` done."""

    def __init__(self) -> None:
        meta = {"page": KEY, "config": ex.config_to_dict(CONFIG)}
        self.jobs = {
            "running": JobStatus(id="running", label=KEY, state="running", total=1, created=1.0, started=1.0,
                                 meta=meta, elapsed_s=46.0),
            "over": JobStatus(id="over", label=KEY, state="done", total=1, done=1, created=0.0, started=0.0,
                              finished=20.0, meta=meta, elapsed_s=20.0),
        }
        self.cancelled: list[str] = []

    def list(self) -> list[JobStatus]:
        return list(self.jobs.values())

    def status(self, job_id: str) -> JobStatus:
        return self.jobs[job_id]

    def cancel(self, job_id: str) -> JobStatus:
        self.cancelled.append(job_id)
        self.jobs[job_id] = dataclasses.replace(self.jobs[job_id], state="cancelled", finished=50.0)
        return self.jobs[job_id]

    def results(self, job_id: str, start: int) -> list[JobResult]:
        if start > 0:
            return []
        (item,) = ex.plan(CONFIG)
        self.jobs[job_id] = dataclasses.replace(self.jobs[job_id], state="done", done=1, finished=303.4,
                                                elapsed_s=302.4)
        return [JobResult(index=0, item=BatchItem(id=item.id, prompt=item.prompt_text),
                          result=BatchItemResult(id=item.id, parse=None, pair=None, error="scripted"))]


@dataclasses.dataclass
class _Backend:
    jobs: ScriptedJobs
    kind: str = "remote"


@dataclasses.dataclass
class _Parser:
    backend: _Backend
    spec: str = "scripted"
    identity: str = "scripted@1"
    dtype: str = "float32"
    device: str = "cpu"
    loaded: bool = True
    cache: Any = None


def _panel_script() -> None:
    from ui.sweeps import sweep

    sweep.jobs_panel("zeroshot_sweep", lambda records, final: None)


#: Where the scripted server "ran" (run_context of a real server is asserted in tests/serve/test_service.py).
CONTEXT = RunContext(model="scripted", identity="scripted@1", device="cpu", dtype="float32", engine="transformers",
                     code="amp-parser-0+scripted", server="http://gpu-box:8600")


@pytest.fixture()
def jobs(monkeypatch: pytest.MonkeyPatch) -> ScriptedJobs:
    scripted = ScriptedJobs()
    parser = _Parser(_Backend(scripted))
    monkeypatch.setattr(parsers, "peek_parser", lambda: parser)
    monkeypatch.setattr(sweep, "run_context", lambda p: CONTEXT)
    return scripted


def _rows(at: AppTest) -> dict[str, dict[str, Any]]:
    frame = at.dataframe[0].value
    return {row["job"]: row for row in frame.to_dict("records")}


def test_the_jobs_table_is_read_again_after_a_job_was_followed(jobs: ScriptedJobs) -> None:
    at = AppTest.from_function(_panel_script, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert (_rows(at)["running"]["state"], _rows(at)["running"]["took"]) == ("running", "46.0 s so far")
    at.selectbox(key=f"{KEY}_job").set_value("running")
    at.button(key=f"{KEY}_attach").click().run()
    assert not at.exception, [e.value for e in at.exception]
    row = _rows(at)["running"]
    assert (row["state"], row["done"], row["took"], row["progress"]) == ("done", "1/1", "302.4 s", 1.0)
    assert len(at.dataframe) == 1  # redrawn in place, not a second table
    # the sweep it was followed as: the job's own time, shown and saved with the run and where it ran
    state = at.session_state[KEY]
    assert state.status == "done" and state.seconds == 302.4 and state.saved_as
    settings = runs.load_manifest(runs.runs_dir() / f"{state.saved_as}.json")["settings"]
    assert settings["wall_time_s"] == 302.4 and settings["server"] == CONTEXT.server


def test_cancel_is_offered_only_for_a_job_that_has_not_finished(jobs: ScriptedJobs) -> None:
    at = AppTest.from_function(_panel_script, default_timeout=60).run()
    at.selectbox(key=f"{KEY}_job").set_value("over").run()
    assert not at.exception, [e.value for e in at.exception]
    assert f"{KEY}_cancel_job" not in [b.key for b in at.button]
    assert "This job is done: nothing to cancel." in [c.value for c in at.caption]
    at.selectbox(key=f"{KEY}_job").set_value("running").run()
    at.button(key=f"{KEY}_cancel_job").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert jobs.cancelled == ["running"]
    assert _rows(at)["running"]["state"] == "cancelled"  # the table says so at once
