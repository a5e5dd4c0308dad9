"""Using the shared model from a page: :func:`using`, the Streamlit side of :mod:`ui.model.hold`.

* :func:`using` holds a shared parser for one page action (:func:`ui.model.actions.compute` and
  the sweeps call it); :func:`hold_of` is the parser's one :class:`~ui.model.hold.ModelHold`.
* :func:`claimant` names the calling script run: its thread, its browser tab (session) and the
  run itself.  Streamlit gives every run a new stop/rerun callback (``ScriptRunContext.yield_check``,
  set when a run starts); that object is the run's marker, so a holder whose thread has gone on to
  another run no longer holds the model.
* :class:`WaitNote` is what a waiting run shows, expanded, where the page action would appear:
  what the model is busy with, in which tab, for how long, how many are ahead, and a **Cancel**
  button.  Each time it looks (about every :data:`ui.model.hold.POLL_S` s) it first calls the
  run's stop/rerun callback: a Cancel, or any other click, ends the wait there with nothing held
  (issue #32: a stopped run must not keep the model).
* :func:`wait_scope`: a page action that shows its own progress line and Cancel (a parse, a poll
  created with the model) hears of every look of a wait inside it, so its line moves while it
  waits, and the note then has no Cancel of its own: one Cancel on the page (issue #40 point 6).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import streamlit as st

from amp.parser.search.cancel import cancel_scope
from amp.reporting.durations import duration_text
from ui.model.hold import Claimant, ModelHold, WaitInfo
from ui.shared.common import plain

P = TypeVar("P")

try:  # Streamlit's run context (an internal module: a Streamlit that moves it loses the run checks only)
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
except ImportError:  # pragma: no cover
    get_script_run_ctx = None

#: Cancel buttons of wait notes get keys from this counter (a run may wait several times).
_NOTES = itertools.count()


def _context() -> Any:
    return None if get_script_run_ctx is None else get_script_run_ctx(suppress_warning=True)


def _marker(ctx: Any) -> object:
    """The current run's marker: its stop/rerun callback, new for every run (or the context itself)."""
    return getattr(ctx, "yield_check", ctx)


def claimant(what: str) -> Claimant:
    """The calling thread's claim on the model for ``what`` (a short description, e.g. a status label)."""
    ctx = _context()
    thread = threading.current_thread()
    if ctx is None:
        return Claimant(thread, what)
    return Claimant(thread, what, session=str(getattr(ctx, "session_id", "")) or None, run=_marker(ctx),
                    run_now=lambda: _marker(ctx))


def wait_text(info: WaitInfo, model: str, my_session: str | None) -> str:
    """The note's Markdown: what the model is busy with and where (``model`` is plain text already)."""
    holder = info.holder
    if holder is None:
        busy = "another computation is about to use it"
    else:
        if holder.session is None:
            where = ""
        elif holder.session == my_session:
            where = " in an earlier run of this tab, which is stopping"
        else:
            where = " in another tab"
        busy = f"it is busy with *{plain(holder.what)}*{where}, for {duration_text(info.held_s)} so far"
    queue = f" {info.ahead} other{' is' if info.ahead == 1 else 's are'} waiting ahead of this." if info.ahead else ""
    return (f"**Waiting for the model** {model}: {busy}.{queue} This starts as soon as the model is free "
            f"(waiting {duration_text(info.waited_s)}). **Cancel** stops waiting.")


#: What a page action with its own progress line hears of a wait inside it (:func:`wait_scope`).
WaitListener = Callable[[WaitInfo | None], None]

_WAIT_LISTENER: contextvars.ContextVar[WaitListener | None] = contextvars.ContextVar("amp_wait_listener",
                                                                                    default=None)


@contextlib.contextmanager
def wait_scope(listener: WaitListener | None) -> Iterator[None]:
    """Waits for the model inside (in this thread/context) call ``listener(info)`` at each look
    and ``listener(None)`` once the model is held; their notes draw no Cancel of their own (the
    caller's Cancel ends the wait: any click does)."""
    token = _WAIT_LISTENER.set(listener)
    try:
        yield
    finally:
        _WAIT_LISTENER.reset(token)


class WaitNote:
    """The visible note of one wait, drawn into ``where`` (an ``st.empty()`` placeholder; default: a new
    one here, made only if the run has to wait).

    Call it with each :class:`~ui.model.hold.WaitInfo` (it is the claim's ``on_wait``) and
    :meth:`clear` it once the model is held.  Its text is redrawn only when it changes (its clock
    counts seconds).  Outside a script run it draws nothing.  Inside a :func:`wait_scope` it tells
    the scope's listener at every look and has no Cancel button (the caller shows the one Cancel).
    """

    def __init__(self, model: str, where: Any = None) -> None:
        self.model = plain(model)
        self.where = where
        self.slot: Any = None
        self.text: Any = None
        self.shown = ""
        self.listener = _WAIT_LISTENER.get()

    def __call__(self, info: WaitInfo) -> None:
        ctx = _context()
        if ctx is None:
            return
        check = getattr(ctx, "yield_check", None)
        if check is not None:
            check()  # a Cancel (or any click) raises Streamlit's stop/rerun here: the wait ends, nothing held
        if self.listener is not None:
            self.listener(info)
        if self.slot is None:
            self.slot = self.where if self.where is not None else st.empty()
            box = self.slot.container(border=True)
            self.text = box.empty()
            if self.listener is None:  # else the page action's own Cancel is the one
                box.button("Cancel", key=f"model_wait_cancel_{next(_NOTES)}", icon=":material/stop:",
                           help="Stop waiting: this page action does not run.")
        text = wait_text(info, self.model, str(getattr(ctx, "session_id", "")) or None)
        if text != self.shown:
            self.text.warning(text, icon=":material/hourglass_top:")
            self.shown = text

    def clear(self) -> None:
        """Remove the note (the model is held now)."""
        if self.slot is not None:
            self.slot.empty()
            self.slot = None
            if self.listener is not None:
                self.listener(None)


_HOLDS: dict[int, ModelHold] = {}
_HOLDS_GUARD = threading.Lock()


def hold_of(parser: object) -> ModelHold:
    """The one :class:`ModelHold` of a shared parser object (created once, under a guard)."""
    with _HOLDS_GUARD:
        return _HOLDS.setdefault(id(parser), ModelHold())


@contextlib.contextmanager
def using(parser: P, *, what: str = "a computation", where: Any = None) -> Iterator[P]:
    """Hold the shared parser for one unit of work: ``with using(p, what="Parsing"): inspect(p, ...)``.

    The library already holds ``LoadedModel.lock`` around every model call; this hold makes a
    whole page action (parse + scores + steps, or one sweep item) atomic with respect to other
    sessions, so two tabs never interleave inside one action.  It is re-entrant within a run,
    given back on every path (Streamlit's rerun/stop exceptions included), and never kept by a
    run that has ended (:mod:`ui.model.hold`).  While another run has it, this one waits with a
    visible note saying for what (``what``, shown to the waiting tab) and a Cancel, drawn in
    ``where`` (an ``st.empty()``; default: here).  Inside, the decoder polls Streamlit's pending
    rerun (:func:`rerun_requested`), so a click stops the model within a step.
    """
    note = WaitNote(f"({getattr(parser, 'spec', 'model')})", where)
    with hold_of(parser).claim(claimant(what), on_wait=note):
        note.clear()
        with cancel_scope(rerun_requested):
            yield parser


def rerun_requested() -> bool:
    """Whether Streamlit has a rerun or stop waiting for this script (a Cancel or any other click).

    The decoder polls it every step (:func:`amp.parser.search.cancel.cancel_scope`): the model stops at
    once and the script reruns, instead of the page saying "cancelled" while the model computes on.
    A fragment's own refresh (a live chart's ``run_every``, e.g. the poll's results while the
    teacher creates a poll with the model) is not a request to stop: Streamlit does not stop the
    script for it either (it runs after), so it does not stop the model.
    """
    ctx = _context()
    requests = getattr(ctx, "script_requests", None)
    state = getattr(requests, "_state", None)
    if state is None or getattr(state, "name", "CONTINUE") == "CONTINUE":
        return False
    data = getattr(requests, "_rerun_data", None)
    fragment_only = bool(getattr(data, "fragment_id_queue", None)) and not getattr(data, "is_fragment_scoped_rerun",
                                                                                   False)
    return not (getattr(state, "name", "") == "RERUN" and fragment_only)


__all__ = ["WaitListener", "WaitNote", "claimant", "hold_of", "rerun_requested", "using", "wait_scope",
           "wait_text"]
