"""Two sessions sharing one parser never run a page action at the same time (ui.model_picker.using)."""

from __future__ import annotations

import threading
import time

from ui import model_picker as ui_model


class _SharedParser:
    """Stands in for the one cached Parser that every session gets from st.cache_resource."""


def test_two_sessions_are_serialised() -> None:
    parser = _SharedParser()
    spans: list[tuple[float, float]] = []
    start = threading.Barrier(2)

    def session() -> None:
        start.wait()
        with ui_model.using(parser):
            t0 = time.perf_counter()
            time.sleep(0.2)
            spans.append((t0, time.perf_counter()))

    threads = [threading.Thread(target=session) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    (_, a1), (b0, _) = sorted(spans)
    assert a1 <= b0, "the second session entered while the first was still inside"


def test_the_lock_is_reentrant_and_per_parser() -> None:
    p1, p2 = _SharedParser(), _SharedParser()
    with ui_model.using(p1), ui_model.using(p1):  # nested use by the same session does not deadlock
        done = threading.Event()

        def other() -> None:
            with ui_model.using(p2):  # another model is not blocked by this one
                done.set()

        t = threading.Thread(target=other)
        t.start()
        t.join(2)
        assert done.is_set()


def test_using_waits_for_a_busy_model_and_installs_the_cancel_check() -> None:
    """A page action waits for another session's action (saying so), and inside it the decoder
    polls Streamlit's pending-rerun flag (issue #16: cancel stops the model within a step)."""
    import threading
    import time

    from amp.parser.search.cancel import current_check
    from ui import model_picker as ui_model

    parser = object()
    held, release = threading.Event(), threading.Event()

    def other() -> None:
        with ui_model.using(parser):
            held.set()
            release.wait(5)

    worker = threading.Thread(target=other)
    worker.start()
    held.wait(5)
    threading.Timer(0.3, release.set).start()
    t0 = time.perf_counter()
    with ui_model.using(parser):
        waited = time.perf_counter() - t0
        assert current_check() is ui_model._rerun_requested
    worker.join(5)
    assert waited >= 0.2
    assert current_check() is None
    assert ui_model._rerun_requested() is False  # no script run context: nothing pending


def _compare_failure_script() -> None:
    import streamlit as st

    from amp.parser.core.errors import ModelLoadError
    from ui import model_picker as ui_model

    class ModelB:  # a second model, as the Compare page holds it next to the sidebar's
        spec = "model-b-that-fails"
        loaded = True

    def boom(parser: object) -> None:
        raise ModelLoadError("its weights are broken")

    ui_model.compute(ModelB(), "Model B: parsing", boom, who="Model B")  # type: ignore[arg-type]
    st.text(f"B={ui_model.load_error('model-b-that-fails')!r}")
    st.text(f"current={ui_model.load_error()!r}")


def test_a_failed_second_model_does_not_mark_the_sidebar_model_failed(app_env) -> None:
    """Issue #11 point 6: a Model B that fails to load on Compare is marked failed, not the default."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_function(_compare_failure_script, default_timeout=60)
    app.run()
    shown = [t.value for t in app.text]
    assert "B='its weights are broken'" in shown
    assert "current=None" in shown
