"""The job store's bounds through the real service (issue #44 point 3): a ``meta`` nested past
:data:`~amp.parser.core.limits.MAX_JSON_DEPTH` is a 422 naming it, and a stored job that cannot be
sent — left by an earlier version, or torn by a damaged disk — never breaks ``GET /v1/jobs`` nor
``GET /v1/jobs/<id>`` for anyone else, across a restart of the job manager.

The plain-Python rules are in ``test_job_bounds.py``; this module starts one service (``conftest.service``).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from service_helpers import nested

from amp.parser.core import limits
from amp.parser.core.results import BatchItem
from amp.parser.parser import Parser
from amp.parser.search.settings import SearchSettings

PROMPT = "Human: the man saw a girl\nComputer:"


def call(url: str, method: str = "GET", body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _job_manager_actor():
    import ray

    (named,) = [a for a in ray.util.list_named_actors(all_namespaces=True) if "JobManager" in a["name"]]
    return ray.get_actor(named["name"], namespace=named["namespace"])


def test_a_deep_meta_is_refused_and_an_unsendable_stored_job_never_breaks_the_listing(service):
    base = service.url
    status, reply = call(base + "/v1/jobs", "POST", {"items": [{"id": "a", "prompt": PROMPT}], "meta": nested(900)})
    assert status == 422 and set(reply) == {"error"}, reply
    assert "MAX_JSON_DEPTH" in reply["error"]["message"] and str(limits.MAX_JSON_DEPTH) in reply["error"]["message"]

    far = Parser.remote(base, cache=None)
    good = far.backend.jobs.submit([BatchItem(id="g0", prompt=PROMPT)], SearchSettings(beams=1, max_new_tokens=4),
                                   top_n=1, batch_size=1, meta={"page": "bounds"}).id
    folder = service.cache_dir / "jobs"
    # As a version without the depth bound stored it, and as a damaged disk left another.
    summary = json.loads((folder / f"{good}.json").read_text())
    summary.update(id="deepjob", meta=nested(900), state="done", finished=summary["created"] + 1)
    (folder / "deepjob.json").write_text(json.dumps(summary))
    (folder / "deepjob.items.jsonl").write_text(json.dumps({"id": "d0", "prompt": PROMPT}) + "\n")
    (folder / "tornjob.json").write_text('{"id": "tornjob", "lab')
    import ray

    ray.kill(_job_manager_actor())  # Serve starts a new manager, which reads the folder again
    deadline = time.time() + 120
    status, listing = call(base + "/v1/jobs")
    while status != 200 and time.time() < deadline:
        time.sleep(0.3)
        status, listing = call(base + "/v1/jobs")
    assert status == 200, listing
    assert good in [j["id"] for j in listing["jobs"]]
    assert {s["id"] for s in listing["skipped"]} == {"deepjob", "tornjob"}
    assert good in [j.id for j in far.backend.jobs.list()]  # the project's client reads it too
    for job_id in ("deepjob", "tornjob"):
        status, reply = call(f"{base}/v1/jobs/{job_id}")
        assert status == 410 and set(reply) == {"error"} and "DELETE" in reply["error"]["message"], reply
    status, reply = call(f"{base}/v1/jobs/{good}")
    assert status == 200 and reply["id"] == good
    status, reply = call(f"{base}/v1/jobs/deepjob", "DELETE")
    assert status == 200 and reply["id"] == "deepjob" and reply["meta"] == {}
    assert not list(folder.glob("deepjob.*"))
    status, listing = call(base + "/v1/jobs")
    assert status == 200 and [s["id"] for s in listing["skipped"]] == ["tornjob"]

