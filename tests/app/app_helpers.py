"""Helpers of the AppTest tests (imported by the test modules; fixtures are in conftest.py)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
TIMEOUT = 120


def clear_streamlit_caches() -> None:
    """Forget st.cache_data/st.cache_resource entries (they are process-wide) and loaded parsers."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    from ui.model import parsers

    parsers.clear_loaded()


def assert_ok(app) -> None:
    """No uncaught exception anywhere in the element tree."""
    assert not app.exception, [e.value for e in app.exception]


def goto(app, page: str):
    """Switch to ``views/<page>.py`` and run; asserts no uncaught exception."""
    app.switch_page(f"views/{page}.py").run()
    assert_ok(app)
    return app


def plotly_spec(app, i: int = 0) -> dict:
    """The i-th plotly chart of the page as a dict (there is no typed accessor)."""
    return json.loads(app.get("plotly_chart")[i].proto.spec)


def texts(app, kind: str) -> list[str]:
    """The ``value`` of every element of a kind (``markdown``, ``error``, ``caption``, …)."""
    return [str(e.value) for e in getattr(app, kind)]


def start_run(app) -> tuple[threading.Thread, dict]:  # type: ignore[no-untyped-def]
    """``app.run()`` on a thread of its own (the test steers the run meanwhile); its outcome in the dict."""
    out: dict = {}

    def body() -> None:
        try:
            app.run()
            out["ran"] = True
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            out["error"] = exc

    thread = threading.Thread(target=body, daemon=True)  # daemon: a run stuck for good cannot stall pytest
    thread.start()
    return thread, out


def verdict_said(app) -> tuple[str, str, str]:
    """The verdict as a reader sees it (``ui.shared.readings.show_verdict``): (the colour of the
    "wrote" sentence, its text, the "scores" sentence), HTML escapes undone; the "wrote" sentence
    comes first."""
    import html
    import re

    md = texts(app, "markdown")
    (wrote,) = [m for m in md if "amp-wrote" in m]
    (scores,) = [m for m in md if "amp-scores" in m]
    assert md.index(wrote) < md.index(scores)  # first what it wrote, then what it scores
    w = re.fullmatch(r"<div class='amp-wrote(?: present-r)?' style='[^']*color:([^;']+)'>(.*)</div>", wrote, re.S)
    s = re.fullmatch(r"<div class='amp-scores(?: present-r)?'>(.*)</div>", scores, re.S)
    assert w and s, (wrote, scores)
    return w.group(1), html.unescape(w.group(2)), html.unescape(s.group(1))


def scores_said(p: float, names: tuple[str, str], phrase: str, pinned: tuple[float, str] | None = None) -> str:
    """The verdict's scores sentence for P(LF0) = ``p`` by the measure of ``phrase``, written out
    here, never by the verdict's code (issue #45): undecided within 0.05 of 0.5, else the reading
    scored higher by its name; ``pinned`` (the paper's P(LF0), the shared token) adds why the
    paper's number is pinned."""
    if abs(p - 0.5) <= 0.05:
        said = f"Forced to write each reading, it is undecided {phrase}: P(LF0) = {p:.2f} is within 0.05 of 0.5."
    else:
        side = 0 if p > 0.5 else 1
        said = f"Forced to write each reading, it scores LF{side} ({names[side]}) higher {phrase}: P(LF0) = {p:.2f}."
    if pinned is not None:
        said += (f" The paper's P(LF0) is {pinned[0]:.2f} only because both readings' least likely token is "
                 f"“{pinned[1].strip()}”, which they share.")
    return said


#: What the verdict says the model wrote when it is neither reading, written out (issue #45).
WROTE_NEITHER = {
    "neither": "The model wrote neither reading: its parse is a different formula from both LFs.",
    "unparseable": "The model wrote neither reading: its parse is not even a logical form (it does not read as one).",
}
#: The colour of the "wrote" sentence: LF0 blue, LF1 orange, anything else grey.
BLUE, ORANGE, GREY = "#0072B2", "#B34700", "#444444"
