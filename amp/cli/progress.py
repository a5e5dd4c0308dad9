"""Progress of a model command's API requests on stderr (issue #46: ``amp parse`` against a slow
endpoint printed nothing for 400 s).

:func:`api_progress` is a context manager for the command's work: it installs a listener
(:func:`amp.parser.backends.api_progress.request_progress_scope`) that writes one line —
requests done of planned, retries, in flight, elapsed, time left, the timeout a request gets
now (:func:`amp.reporting.request_progress.progress_line`).  Nothing is written for work that
ends within :data:`QUIET_S` (a quick command's output stays one answer, an error one line).  On
a terminal the line is redrawn in place and ended when the work ends; otherwise (a pipe, a log)
a new line is written when the counts change, at most every :data:`LOG_EVERY_S`.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import TextIO

from amp.cli.common import printable
from amp.parser.backends.api_progress import RequestProgress, request_progress_scope
from amp.reporting.request_progress import progress_line

#: Seconds of quiet before the first progress line.
QUIET_S = 2.0
#: Seconds between two lines when stderr is not a terminal (and the counts changed).
LOG_EVERY_S = 10.0


class ProgressPrinter:
    """Writes :class:`RequestProgress` reports to ``out`` as the module docstring says."""

    def __init__(self, out: TextIO, *, label: str = "model endpoint", quiet_s: float | None = None,
                 every_s: float | None = None) -> None:
        self.out = out
        self.label = label
        self.quiet_s = QUIET_S if quiet_s is None else quiet_s
        self.every_s = LOG_EVERY_S if every_s is None else every_s
        self._width = 0
        self.live = bool(getattr(out, "isatty", lambda: False)())
        self._start = time.monotonic()
        self._drawn = False
        self._last_at = -float("inf")
        self._last_counts: tuple[int, int, int] | None = None

    def __call__(self, p: RequestProgress) -> None:
        now = time.monotonic()
        if now - self._start < self.quiet_s:
            return
        line = printable(progress_line(p, self.label))
        if self.live:
            self.out.write("\r" + line.ljust(self._width))  # spaces over the end of a longer line before
            self._width = max(self._width, len(line))
            self._drawn = True
        else:
            counts = (p.done, p.total, p.retries)
            if counts == self._last_counts and now - self._last_at < self.every_s:
                return
            if counts == self._last_counts and p.done == p.total:
                return
            self.out.write(line + "\n")
            self._last_counts, self._last_at = counts, now
        self.out.flush()

    def end(self) -> None:
        """End a line drawn in place (the next output starts on its own line)."""
        if self._drawn:
            self.out.write("\n")
            self.out.flush()
            self._drawn = False


@contextlib.contextmanager
def api_progress(label: str = "model endpoint", out: TextIO | None = None) -> Iterator[ProgressPrinter]:
    """The API requests of the work inside report their progress to stderr (or ``out``)."""
    printer = ProgressPrinter(out if out is not None else sys.stderr, label=label)
    try:
        with request_progress_scope(printer):
            yield printer
    finally:
        printer.end()
