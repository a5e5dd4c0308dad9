"""Cancelling a running search from outside it, and hearing of its progress (issue #16).

:func:`cancel_scope` installs a no-argument ``check``; the constrained search
(:mod:`amp.parser.search.fastsearch`) calls it before every decode step and stops with
:class:`SearchCancelled` once it returns true.  A batch run (:func:`amp.parser.batch.run_batch`)
and the app's model calls install their cancel signal this way, so a cancel stops the model's
work within a step instead of after its whole batch.  No torch import: callers that never decode
stay light.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

_CANCEL: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar("amp_search_cancel", default=None)


@contextlib.contextmanager
def cancel_scope(check: Callable[[], bool] | None) -> Iterator[None]:
    """Searches started inside (in this thread/context) stop at the first decode step after
    ``check()`` turns true."""
    token = _CANCEL.set(check)
    try:
        yield
    finally:
        _CANCEL.reset(token)


def current_check() -> Callable[[], bool] | None:
    """The check of the innermost :func:`cancel_scope` (None outside any)."""
    return _CANCEL.get()


_SEARCHED: contextvars.ContextVar[Callable[[int], None] | None] = contextvars.ContextVar("amp_searched", default=None)


@contextlib.contextmanager
def progress_scope(on_searched: Callable[[int], None] | None) -> Iterator[None]:
    """Searches started inside call ``on_searched(n)`` when ``n`` more of their prompts finish
    searching (before their batch returns), so a progress bar can advance per item."""
    token = _SEARCHED.set(on_searched)
    try:
        yield
    finally:
        _SEARCHED.reset(token)


def searched(n: int) -> None:
    """Report ``n`` prompts whose search just finished to the innermost :func:`progress_scope`."""
    callback = _SEARCHED.get()
    if callback is not None and n:
        callback(n)
