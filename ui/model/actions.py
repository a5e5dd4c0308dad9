"""A page action on the model: run it holding the model, inside a status box, and say how it ended.

:func:`compute` and :func:`attempt` hold the shared parser (:func:`ui.model.use.using`: two tabs
never interleave inside one model action; a waiting run says so in plain sight with a Cancel) and
turn every failure into a visible box with a way out (:mod:`ui.model.notices`); :func:`describe`
and :func:`identity` say what the model is, for status lines.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import streamlit as st

from amp.errors import AmpError
from amp.parser import Parser
from amp.parser.backends.api_protocol import is_api_spec
from amp.parser.core.errors import BackendError, ModelLoadError, SearchCancelled
from ui.model import server as server_state
from ui.model.choice import DEFAULT, ModelChoice, current_dtype, current_engine, current_server, current_token
from ui.model.notices import error_box, server_failure, show_failure
from ui.model.parsers import fail
from ui.model.use import using
from ui.shared.common import describe_error, plain

T = TypeVar("T")



@dataclass(frozen=True)
class Outcome(Generic[T]):
    """How one page action on the model ended: its ``value``, or what went wrong (in words), or cancelled."""

    value: T | None = None
    error: str | None = None
    cancelled: bool = False


def compute(parser: Parser, label: str, fn: Callable[[Parser], T], *, who: str | None = None) -> T | None:
    """Run ``fn(parser)`` holding the model, inside a status box; errors become ``st.error``.

    The value, or ``None`` when it failed or was cancelled (:func:`attempt` says which).
    """
    return attempt(parser, label, fn, who=who).value


def attempt(parser: Parser, label: str, fn: Callable[[Parser], T], *, who: str | None = None,
            model: ModelChoice | None = None) -> Outcome[T]:
    """Run ``fn(parser)`` holding the model (:func:`using`) inside a status box; how it ended.

    The status label says when the call may also load the model (the Parser loads on its first
    cache miss).  A wait for the model is shown above the box, in plain sight; a failure opens
    the box, so its reason is never collapsed.  ``model`` is the model ``parser`` is (default: its
    spec on the sidebar's engine in the sidebar's precision): a :class:`ModelLoadError` marks *that* model as failed for
    this session, and offers the sidebar's way back only when it is the sidebar's model.  ``who``
    (e.g. ``"Model A"``) names the box in its final label ("Model A done · …"), for pages that
    show several boxes at once.
    """
    model = model or ModelChoice(parser.spec, current_engine(), current_dtype())

    def final(text: str) -> str:
        return f"{who}: {text[0].lower()}{text[1:]}" if who else text

    what = label
    if not parser.loaded:
        label += (" The model loads on the first uncached call: about a minute the first time for the "
                  "embedded model, seconds later." if model.spec == DEFAULT else " (loading the model first)")
    wait_slot = st.empty()  # a wait for the model shows here, not inside the collapsed box
    # A failure is drawn after the box, in plain sight (an expanded st.error with its way out), not
    # inside it; a page with several boxes (``who``) shows its failures in its own result columns,
    # so there the reason stays inside the opened box.
    show: Callable[[Any], None] | None = None
    outcome: Outcome[T]
    with st.status(label, expanded=False) as status:
        try:
            with using(parser, what=what, where=wait_slot):
                value = fn(parser)
        except BackendError as exc:
            if is_api_spec(parser.spec):  # a model behind an API, not the parser service: no fallback button
                status.update(label=final("The model endpoint did not answer"), state="error",
                              expanded=who is not None)
                show = functools.partial(error_box, text=plain(str(exc)))
            else:
                status.update(label=final("The parser server did not answer"), state="error",
                              expanded=who is not None)
                server = getattr(parser.backend, "url", current_server())
                server_state.record_failure(server, current_token(), exc)
                show = functools.partial(server_failure, headline=f"The parser server {server} did not answer.",
                                         reason=str(exc), key=f"server_fallback_{label[:20]}")
            outcome = Outcome(error=str(exc))
        except SearchCancelled:
            status.update(label=final("Cancelled: the model stopped"), state="error")
            return Outcome(cancelled=True)
        except ModelLoadError as exc:
            status.update(label=final("The model could not be loaded"), state="error", expanded=who is not None)
            message = fail(model, exc)
            show = functools.partial(show_failure, choice=model, message=message)
            outcome = Outcome(error=message)
        except AmpError as exc:
            status.update(label=final("That did not work"), state="error", expanded=who is not None)
            show = functools.partial(error_box, text=describe_error(exc))
            outcome = Outcome(error=str(exc) or type(exc).__name__)
        except Exception as exc:  # noqa: BLE001 - show, do not crash the page
            message = f"Unexpected error from the model: {type(exc).__name__}: {exc}"
            status.update(label=final("That did not work"), state="error", expanded=who is not None)
            show = functools.partial(error_box, text=plain(message))
            outcome = Outcome(error=message)
        else:
            status.update(label=f"{who + ' done' if who else 'Done'} · {describe(parser)}", state="complete")
            return Outcome(value=value)
        if who is not None and show is not None:  # inside the opened box (the page's column says it too)
            show(st)
    if who is None and show is not None:
        show(st)
    return outcome


def describe(parser: Parser) -> str:
    """``"cpu · float32"``-style summary of where the model runs (``"server http://… · cuda · bfloat16"``)."""
    try:
        return parser.describe()
    except AmpError:
        return f"{parser.device} · {parser.dtype}"


def identity(parser: Parser) -> str:
    """The model's identity string (part of every cache key)."""
    return parser.identity or parser.spec
