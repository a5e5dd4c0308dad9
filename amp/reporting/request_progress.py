"""An API model's requests in words, for the CLI's progress line and the pages' live line.

:class:`~amp.parser.backends.api_progress.RequestProgress` (what the API backend tells a
listener while its requests run, issue #46) as text: :func:`requests_text` is what is being done
(``"3 of 5 requests done · 1 retry · 2 in flight"``), :func:`progress_line` adds the elapsed time,
the time left at the pace so far and the timeout a request gets now
(:mod:`amp.reporting.durations`).
"""

from __future__ import annotations

from amp.parser.backends.api_progress import RequestProgress
from amp.reporting.durations import duration_text, left_text

__all__ = ["progress_line", "requests_text"]


def requests_text(p: RequestProgress) -> str:
    """``"3 of 5 requests done · 1 retry · 2 in flight"`` (retries and in-flight only when any)."""
    parts = [f"{p.done} of {p.total} request{'s' if p.total != 1 else ''} done"]
    if p.retries:
        parts.append(f"{p.retries} retr{'ies' if p.retries != 1 else 'y'}")
    if p.in_flight:
        parts.append(f"{p.in_flight} in flight")
    return " · ".join(parts)


def progress_line(p: RequestProgress, label: str = "model endpoint") -> str:
    """``"model endpoint: 3 of 5 requests done · 1 retry · 40 s elapsed · about 30 s left · timeout 120 s"``."""
    left = left_text(p.left_s) if p.done < p.total else None
    parts = [requests_text(p), f"{duration_text(p.elapsed_s)} elapsed", *([left] if left else []),
             f"timeout {duration_text(p.timeout_s)}"]
    return f"{label}: " + " · ".join(parts)
