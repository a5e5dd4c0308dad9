"""Running a sweep from a page: progress bar, cancel button, results drawn as they arrive.

The state of a page's sweep lives in ``st.session_state[key]`` as a :class:`SweepState`, so
results survive reruns and page switches; a second run of the same configuration answers from
the on-disk result cache (:mod:`amp.cache`), so it re-renders almost at once.

Cancelling: the Cancel button makes Streamlit rerun the script, which stops the running loop at
its next redraw (after the item in flight); the records so far stay in the state and are shown.

A sweep that finishes is saved as a run manifest (:func:`amp.evaluation.runs.save_sweep`: where and
as ``python -m amp reproduce`` saves its runs), so the Research and Compare pages list it; a
cancelled or failed one is not.  A sweep estimated at an hour or more starts only after a
confirmation box is ticked.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import streamlit as st

from amp.errors import AmpError
from amp.evaluation.run_context import run_context
from amp.evaluation.runs import save_sweep
from amp.evaluation.sweep_plan import SweepConfig, config_from_dict, config_to_dict, plan
from amp.evaluation.sweep_run import record_from_result, run_items
from amp.parser.batch import attach
from amp.parser.search.cancel import progress_scope
from ui.model import actions, parsers
from ui.model import use as model_use
from ui.shared.common import describe_error, plain
from ui.sweeps import job_runs

if TYPE_CHECKING:
    from amp.evaluation.sweep_plan import SweepItem
    from amp.evaluation.sweep_run import SweepRecord
    from amp.parser import Parser
    from amp.parser.search.settings import SearchSettings

#: Guessed seconds per uncached item = BASE + PER_EXAMPLE × (examples in the prompt), per device kind,
#: until this process has measured the model's speed.  CPU: fitted to the exact fast search on the
#: project's 2-core CPU with Gemma 3 270M, 5 beams, 8 items per batch (``reproduce --n-zero 10
#: --n-few 5``: 5.5 s per zero-shot item, 2.6 examples on average; 7.7 s per 10-example few-shot
#: item).  A GPU is far faster.
GUESS = {"cpu": (4.7, 0.3), "cuda": (1.0, 0.05), "mps": (3.0, 0.15)}
#: Measured seconds per unit (one unit = BASE + PER_EXAMPLE × k on a CPU), per model identity.
_SPEED: dict[tuple[str, str], float] = {}


@dataclass
class SweepState:
    """One page's sweep: its config, the records so far, and how it ended."""

    config: SweepConfig
    total: int
    records: list[SweepRecord] = field(default_factory=list)
    status: str = "running"  # running | done | cancelled | failed
    error: str | None = None
    seconds: float = 0.0
    saved_as: str | None = None  # the run manifest's name, once saved
    save_error: str | None = None


def _units(k: float) -> float:
    base, per = GUESS["cpu"]
    return base + per * k


def cached_count(parser: Parser | None, items: Sequence[SweepItem], search: SearchSettings) -> int:
    """How many planned items are already in the result cache (parse with ``search`` and both scores)."""
    if parser is None:
        return 0
    n = 0
    scores = parser.scores  # a model behind an API without log-probs has no pairs to look for
    for it in items:
        try:
            if parser.cached_parse(it.prompt_text, search, fmt=it.fmt) is not None and \
                    (not scores or parser.cached_pair(it.prompt_text, it.lf0, it.lf1, fmt=it.fmt) is not None):
                n += 1
        except Exception:  # noqa: BLE001
            return n
    return n


#: A sweep estimated at this many seconds or more needs a ticked confirmation before it starts.
CONFIRM_SECONDS = 3600.0


def duration_text(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.5 h``; from 48 hours on in days (``9.8 days``)."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


@dataclass(frozen=True)
class Estimate:
    """How long a planned sweep takes: ``todo`` uncached prompts at ``per`` seconds each on ``device``."""

    n: int
    cached: int
    per: float
    device: str

    @property
    def todo(self) -> int:
        return max(0, self.n - self.cached)

    @property
    def seconds(self) -> float:
        return self.todo * self.per

    def text(self) -> str:
        """"3 of 6 prompts cached; the other 3 × ~120 s ≈ about 6 min on CPU (…)"."""
        if not self.todo:
            return f"All {self.n} prompt(s) are cached: the sweep re-renders at once."
        head = f"{self.cached} of {self.n} prompts cached; the other {self.todo}" if self.cached \
            else f"{self.n} prompt(s)"
        return (f"{head} × ~{self.per:.0f} s ≈ about {duration_text(self.seconds)} on {self.device.upper()} "
                "(results appear as they arrive)")


def _speed_key(parser: Any) -> tuple[str, str]:
    """Speeds are measured per model identity and precision (int8 is faster than float32)."""
    return actions.identity(parser), str(parser.dtype)


def estimate_for(items: Sequence[Any], search: SearchSettings) -> Estimate:
    """The :class:`Estimate` of ``items`` searched with ``search`` for the current model (measured
    speed if known, else a guess)."""
    parser = parsers.peek_parser()
    cached = cached_count(parser, items, search)
    mean_k = sum(len(it.prompt.examples) for it in items) / len(items) if items else 0.0
    device = parser.device.split(":")[0] if parser is not None else "cpu"
    measured = _SPEED.get(_speed_key(parser)) if parser is not None else None
    if measured is not None:
        per = measured * _units(mean_k)
    else:
        base, slope = GUESS.get(device, GUESS["cpu"])
        per = base + slope * mean_k
    return Estimate(n=len(items), cached=cached, per=per, device=device)


def controls(prefix: str, items: Sequence[Any], config: SweepConfig) -> tuple[bool, bool]:
    """The Run and Cancel buttons and the time estimate of ``items`` (planned from ``config``);
    returns (run clicked, cancel clicked).

    A sweep estimated at :data:`CONFIRM_SECONDS` or more needs its confirmation box ticked first
    (the box is new whenever the estimate's size changes, so a tick never carries over).
    """
    c1, c2, c3 = st.columns([1, 1, 4], vertical_alignment="center")
    below = st.container()
    est = estimate_for(items, config.search)
    c3.caption(est.text())
    confirmed = True
    if est.seconds >= CONFIRM_SECONDS:
        confirmed = below.checkbox(f"Start it anyway: this sweep takes about {duration_text(est.seconds)}",
                                   key=f"{prefix}_confirm_{est.n}_{est.todo}")
    run = c1.button("Run sweep", type="primary", icon=":material/play_arrow:", key=f"{prefix}_run",
                    disabled=not items or not confirmed,
                    help=None if confirmed else "A long sweep: tick the confirmation below first.")
    cancel = c2.button("Cancel", icon=":material/stop:", key=f"{prefix}_cancel")
    return run and confirmed, cancel


def run(
    key: str,
    config: SweepConfig,
    items: Sequence[Any],
    *,
    draw: Callable[[list[Any], bool], None],
) -> SweepState | None:
    """Run ``items`` (planned from ``config``) with the current model and ``config.search``,
    calling ``draw(records, final)`` as records arrive.

    Holds the model's lock for one item at a time, so another session can interleave. Returns the
    final state (also stored in ``st.session_state[key]``), or ``None`` if no model could be loaded.
    """
    parser = parsers.get_parser()
    if parser is None:
        return None
    meta = {"page": key, "config": config_to_dict(config)}
    stream = run_items(parser, items, config.search, mode=config.mode, label=key, meta=meta)
    return _follow(key, config, items, parser, stream, draw)


def _follow(key: str, config: SweepConfig, items: Sequence[SweepItem], parser: Parser, stream: Iterator[SweepRecord],
            draw: Callable[[list[SweepRecord], bool], None],
            took: Callable[[], float | None] | None = None) -> SweepState:
    """Draw a stream of records with a progress bar into a fresh :class:`SweepState`; its time is
    ``took()`` where that knows it (a reattached job's own duration), else the time followed."""
    state = SweepState(config=config, total=len(items))
    st.session_state[key] = state
    first = "" if parser.loaded else " (the first one also loads the model)"
    if parser.backend.jobs is not None:
        first = " — running as a job on the parser server; it goes on if you close this tab"
    bar = st.progress(0.0, text=f"0 / {state.total} prompts{first}")
    started = time.perf_counter()
    uncached_time, uncached_units, uncached = 0.0, 0.0, 0
    examples = {it.id: len(it.prompt.examples) for it in items}
    last_draw = 0.0
    ahead = [0]  # prompts whose search finished inside the running batch, not yet returned

    def on_searched(n: int) -> None:  # called by the decoder between steps (issue #16)
        ahead[0] += n
        done = len(state.records)
        bar.progress(min(1.0, (done + ahead[0]) / max(1, state.total)),
                     text=f"{done} / {state.total} prompts · {ahead[0]} more searched, being scored")

    try:
        while True:
            t0 = time.perf_counter()
            with model_use.using(parser, what=f"a sweep on the {job_runs.SWEEP_PAGES.get(key, key)}"), \
                    progress_scope(on_searched):
                record = next(stream, None)
            if record is None:
                break
            if not record.cached:
                ahead[0] = max(0, ahead[0] - 1)
                uncached_time += time.perf_counter() - t0
                uncached_units += _units(examples.get(record.id, 10))
                uncached += 1
            state.records.append(record)
            n = len(state.records)
            bar.progress(n / state.total, text=f"{n} / {state.total} prompts"
                         + (f" · last: {record.surface}" if record.surface else ""))
            if time.perf_counter() - last_draw > 1.0 or n == state.total:
                draw(state.records, False)
                last_draw = time.perf_counter()
    except AmpError as exc:
        state.status, state.error = "failed", describe_error(exc)
    except Exception as exc:  # noqa: BLE001 - the page stays usable
        state.status, state.error = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        state.seconds = time.perf_counter() - started
        with contextlib.suppress(AmpError):
            known = took() if took is not None else None
            if known is not None:
                state.seconds = known
        if uncached:
            _SPEED[_speed_key(parser)] = uncached_time / uncached_units
    if state.status == "running":
        state.status = "done"
        _save_run(key, state, parser)
    bar.empty()
    return state


def _save_run(key: str, state: SweepState, parser: Parser) -> None:
    """Save a finished sweep as a run manifest (the Research and Compare pages list it)."""

    if not state.records:
        return
    try:
        path = save_sweep(state.config, state.records, model=str(parser.spec), identity=actions.identity(parser),
                          page=job_runs.SWEEP_PAGES.get(key, key), dtype=parser.dtype, context=run_context(parser),
                          wall_time_s=state.seconds)
    except Exception as exc:  # noqa: BLE001 - a full disk or an unreachable server: a warning, the page goes on
        state.save_error = str(exc) if isinstance(exc, AmpError | OSError) else f"{type(exc).__name__}: {exc}"
    else:
        state.saved_as = path.stem


def show_status(state: SweepState | None) -> None:
    """One line about the stored sweep: done / cancelled / failed, counts and time."""
    if state is None:
        return
    n = len(state.records)
    if state.status == "running":  # the script was stopped mid-sweep: by Cancel or a page switch
        state.status = "cancelled"
    if state.status == "done":
        cached = sum(r.cached for r in state.records)
        st.success(f"Sweep finished: {n} prompt{'' if n == 1 else 's'} in {state.seconds:.1f} s "
                   f"({cached} from the cache).",
                   icon=":material/check_circle:")
        if state.saved_as:
            st.caption(f"Saved as the run **{plain(state.saved_as)}**: the Research and Compare pages list it.")
        elif state.save_error:
            st.warning(f"The sweep could not be saved as a run: {plain(state.save_error)}", icon=":material/warning:")
    elif state.status == "cancelled":
        st.warning(f"Sweep cancelled after {n} of {state.total} prompts; the results below are partial. "
                   "Run again to finish: finished prompts come from the cache.", icon=":material/pause_circle:")
    else:
        st.error(f"Sweep failed after {n} of {state.total} prompts: {state.error}", icon=":material/error:")
    errors = [r for r in state.records if r.error]
    if errors:
        st.warning(f"{len(errors)} prompt(s) could not be run and are left out, e.g.: {errors[0].error}")


def jobs_panel(key: str, draw: Callable[[list, bool], None]) -> bool:
    """Sweeps of this page that run (or ran) as jobs on the parser server; reattach to one by id.

    Shown only when the model is a parser service.  A job keeps running when its tab closes; a
    reopened page lists it here, and "Show" follows it (finished results at once, the rest as
    they come) with the settings it was started with; the table is read again once the job was
    followed or cancelled, so it never shows a finished job as running.  "Cancel job" is offered
    only for a job that has not finished.  Returns whether a job was reattached.
    """
    parser = parsers.peek_parser()
    if parser is None or parser.backend.jobs is None:
        return False
    jobs = parser.backend.jobs
    try:
        mine = [j for j in jobs.list() if j.meta.get("page") == key]
    except AmpError as exc:
        st.warning(f"Cannot list the parser server's jobs: {exc}", icon=":material/cloud_off:")
        return False
    if not mine:
        return False
    with st.expander(f"Sweeps on the parser server ({len(mine)})", icon=":material/cloud_sync:",
                     expanded=any(not j.final for j in mine)):
        table = st.empty()
        _jobs_table(table, mine)
        c1, c2, c3 = st.columns([2, 1, 1], vertical_alignment="bottom")
        chosen = c1.selectbox("Job", [j.id for j in mine], key=f"{key}_job")
        show = c2.button("Show", icon=":material/visibility:", key=f"{key}_attach")
        picked = next((j for j in mine if j.id == chosen), None)
        stop = False
        if picked is not None and not picked.final:
            stop = c3.button("Cancel job", icon=":material/stop:", key=f"{key}_cancel_job")
        elif picked is not None:
            c3.caption(f"This job is {picked.state}: nothing to cancel.")
    if stop and chosen:
        try:
            jobs.cancel(chosen)
            st.toast(f"Job {chosen} cancelled.", icon=":material/stop:")
        except AmpError as exc:
            st.error(str(exc))
        _refresh_table(table, jobs, key)
    if show and chosen:
        try:
            status = jobs.status(chosen)
            config = config_from_dict(status.meta["config"])
            items = plan(config)
            by_id = {it.id: it for it in items}
            stream = _records(attach(parser, chosen), by_id, config)
        except (AmpError, KeyError) as exc:
            st.error(f"Cannot reattach to job {chosen}: {exc}", icon=":material/error:")
            return False
        # its time (shown, and saved with the run) is the job's own, by the service's clock
        _follow(key, config, [by_id[i] for i in by_id], parser, stream, draw,
                took=lambda: jobs.status(chosen).elapsed_s)
        _refresh_table(table, jobs, key)  # the job has moved on (or finished) while it was followed
        return True
    return False


def _jobs_table(slot: Any, listed: Sequence[Any]) -> None:
    """The jobs panel's table of ``listed`` jobs, drawn into ``slot`` (replacing what it held)."""
    slot.dataframe([job_runs.panel_row(j) for j in listed], hide_index=True,
                   column_config={"progress": st.column_config.ProgressColumn("progress", min_value=0.0,
                                                                              max_value=1.0)})


def _refresh_table(slot: Any, jobs: Any, key: str) -> None:
    """Read this page's jobs again and redraw the table (kept as it was if the service cannot be reached)."""
    with contextlib.suppress(AmpError):
        _jobs_table(slot, [j for j in jobs.list() if j.meta.get("page") == key])


def _records(run: Any, by_id: dict[str, Any], config: SweepConfig) -> Any:
    for result in run:
        if result.id in by_id:
            yield record_from_result(by_id[result.id], result, mode=config.mode)


def drive(key: str, config: SweepConfig, items: list, *, prefix: str, draw: Callable[[list, bool], None]) -> None:
    """A sweep page below its settings (ratio sweep and zero-shot share it): the Run and Cancel
    buttons with the estimate (:func:`controls`, widget keys ``<prefix>_…``), the status of the
    sweep stored under ``key``, and its results, drawn by ``draw(records, final)`` into one area
    that each draw replaces (live while the sweep runs, ``final`` once it is over).

    ``config`` is the page's one settings record (its plan and ``config.search``): the page passes
    it here once, and it travels on whole (:func:`run` → :func:`~amp.evaluation.sweep_run.run_items`).
    """
    start, cancel = controls(prefix, items, config)
    status_slot, live = st.container(), st.empty()

    def shown(records: list, final: bool) -> None:
        with live.container():
            draw(records, final)

    if not start:
        with status_slot:
            jobs_panel(key, shown)
    state = st.session_state.get(key)
    if cancel and state is not None and state.status == "running":
        state.status = "cancelled"
    if start and items:
        with status_slot:
            state = run(key, config, items, draw=shown)
    with status_slot:
        show_status(state)
    if state is not None and state.records:
        if state.config != config:
            status_slot.info("Showing the last sweep; its settings differ from those above. Press Run to sweep these.",
                             icon=":material/history:")
        shown(state.records, True)
    elif state is None:
        st.info("Press **Run sweep** to start. Results appear here as they arrive.", icon=":material/info:")
