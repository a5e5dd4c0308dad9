"""Sweeps that ran as jobs on the parser service: saved as runs on the next visit of any page, and
described for the jobs panel (issue #28 point 4).

A sweep page submits its uncached items as one job with its configuration in ``meta`` (see
:mod:`ui.sweeps.sweep`); the job goes on when the tab closes.  :func:`save_finished` (called by the app's
frame on every page, at most every :data:`CHECK_EVERY_S`) saves each finished job of a sweep page
as a run manifest, exactly as the page would have (:func:`amp.evaluation.runs.save_sweep`), so it
appears on the Research and Compare pages without anyone returning to the sweep page.  Job ids
already saved are remembered in ``<cache root>/saved-jobs.json``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import streamlit as st

from amp.errors import AmpError
from amp.evaluation.run_context import run_context
from amp.evaluation.runs import save_sweep
from amp.evaluation.sweep_plan import config_from_dict, config_to_dict, plan
from amp.evaluation.sweep_run import record_from_result, run_items
from amp.parser.batch import attach
from amp.parser.jobs import search_of
from amp.settings import cache_root
from ui.model import actions, parsers

#: Seconds between two looks at the service's finished jobs (per browser session).
CHECK_EVERY_S = 10.0
#: The sweep pages: the key of a page's sweep (its ``st.session_state`` key and its jobs'
#: ``meta["page"]``) → the page's name (in a saved run's settings and the model's busy notice).
SWEEP_PAGES = {"zeroshot_sweep": "Zero-shot page", "fewshot_sweep": "Ratio sweep page"}
_LAST = "job_runs_checked_at"


def _saved_path() -> Any:
    return cache_root() / "saved-jobs.json"


def _saved() -> set[str]:
    try:
        return set(json.loads(_saved_path().read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return set()


def _remember(job_id: str) -> None:
    ids = sorted(_saved() | {job_id})[-1000:]
    path = _saved_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(ids), encoding="utf-8")
    tmp.replace(path)


def save_finished(*, force: bool = False) -> list[str]:
    """Save every finished, not yet saved sweep job of the connected service as a run; the run
    names saved.  Quiet: a service that cannot be reached is the sidebar's business."""
    now = time.monotonic()
    if not force and now - st.session_state.get(_LAST, -CHECK_EVERY_S) < CHECK_EVERY_S:
        return []
    st.session_state[_LAST] = now
    if not parsers.current_server():  # only the parser service runs jobs; a local model is not made for this
        return []  # (making it would pick its engine: torch on a just-started app, before the page shows)
    parser = parsers.peek_parser()
    if parser is None or parser.backend.jobs is None:
        return []
    try:
        jobs = [j for j in parser.backend.jobs.list() if j.state == "done" and j.meta.get("page") in SWEEP_PAGES
                and isinstance(j.meta.get("config"), dict)]
    except AmpError:
        return []
    saved, names = _saved(), []
    for job in jobs:
        if job.id in saved:
            continue
        try:
            name = _save_job(parser, job)
        except AmpError:
            continue  # e.g. the job was deleted meanwhile: the page's Show still works
        _remember(job.id)
        if name:
            names.append(name)
    return names


def _save_job(parser: Any, job: Any) -> str | None:
    """The job's records (its results, and the planned items answered by this machine's cache
    when it was submitted) saved as a run; None when some item is in neither."""

    config = config_from_dict(job.meta["config"])
    search = search_of(job)
    if search is None:
        return None
    items = plan(config)
    by_id = {it.id: it for it in items}
    got = {r.id: record_from_result(by_id[r.id], r, mode=config.mode) for r in attach(parser, job.id) if r.id in by_id}
    for it in items:
        if it.id in got:
            continue
        if parser.cached_parse(it.prompt_text, search, fmt=it.fmt) is None:
            return None
        (record,) = list(run_items(parser, [it], search, mode=config.mode))  # from the cache
        got[it.id] = record
    records = [got[it.id] for it in items]
    # where it ran (the server's engine, device, dtype and code, from its /v1/info) and how long the job took
    path = save_sweep(config, records, model=str(parser.spec), identity=actions.identity(parser),
                      page=SWEEP_PAGES[job.meta["page"]], dtype=parser.dtype, context=run_context(parser),
                      wall_time_s=job.elapsed_s)
    return path.stem


def settings_of(meta: dict[str, Any]) -> str:
    """A job's sweep settings in words (types, ratios, n, k, beams, seed …) from its ``meta``
    ("" for a config this code cannot read)."""
    try:
        config = config_from_dict(meta["config"])
    except (AmpError, KeyError):
        return ""
    data = {**config_to_dict(config), "beams": config.search.beams}
    parts = []
    for key in ("types", "ratios", "n_per_ratio", "n", "k", "beams", "seed", "mode", "fmt"):
        if key in data:
            value = data[key]
            shown = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
            parts.append(f"{key} {shown}")
    return " · ".join(parts)


def panel_row(job: Any) -> dict[str, Any]:
    """One row of the jobs panel: settings, state, progress, the service's times."""
    moving = job.done + job.searched
    return {"job": job.id, "settings": settings_of(job.meta), "state": job.state,
            "done": f"{job.done}/{job.total}" + (f" (+{job.searched} searched)" if job.searched else ""),
            "progress": moving / max(1, job.total), "errors": job.errors,
            "started": time.strftime("%H:%M:%S", time.localtime(job.created)),
            "took": "" if job.elapsed_s is None else f"{job.elapsed_s:.1f} s" + ("" if job.final else " so far"),
            "left": "" if job.eta_s is None or job.final else f"~{job.eta_s / 60:.1f} min"}
