"""The real embedded model (Gemma 3 270M on CPU) through the app: the paper's running example.

Marked ``slow``: the first run converts/loads the model (about a minute) and parses for several
seconds; the result cache (the real one, ``cache/`` or ``$AMP_CACHE_DIR``) makes reruns fast.
"""

from __future__ import annotations

import math

import pytest
from app_helpers import APP, assert_ok, clear_streamlit_caches, goto, plotly_spec, texts


@pytest.mark.slow
def test_default_model_parses_the_30_70_pp_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("AMP_MODEL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    clear_streamlit_caches()
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    assert_ok(at)
    assert at.session_state["model_spec"] == "default"
    assert at.radio(key="model_choice").options[0] == "Embedded default: Gemma 3 270M"
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    assert not texts(at.main, "error")
    ins = at.session_state["inspection"]["result"]
    table = at.dataframe[0].value
    assert len(table) == 5 and table["parses"].all()  # constrained decoding: every beam is an LF
    assert set(table["match"]) <= {"LF0", "LF1", "LF0 = LF1", "other"}
    assert 0.0 <= ins.pair.p_lf0 <= 1.0 and not math.isnan(ins.pair.p_lf0)
    heat = plotly_spec(at, 0)
    assert heat["data"][0]["type"] == "heatmap"
    # loaded now, or (a cached rerun) ready without having loaded the weights
    status = texts(at.sidebar, "success") + texts(at.sidebar, "info")
    assert any(s.startswith(("Loaded", "Ready")) and "cpu" in s for s in status), status
    clear_streamlit_caches()
