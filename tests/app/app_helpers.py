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
