"""The real embedded model (Gemma 3 270M on CPU) through the app: the paper's running example.

Marked ``slow``: the first use in a run converts the model into the run's shared models folder
(about 100 s, ``tests/conftest.py``), then it parses for several seconds.  The result cache is
this test's own empty one, and the test checks that the parse really ran the model: the beams
went through the decoder (and its lark grammar oracle), the empty cache now holds the result,
and the sidebar says the weights are loaded.  A cached answer cannot pass it.
"""

from __future__ import annotations

import math

import pytest
from app_helpers import APP, assert_ok, clear_streamlit_caches, goto, plotly_spec, texts


@pytest.mark.slow
def test_default_model_parses_the_30_70_pp_prompt(monkeypatch: pytest.MonkeyPatch, isolated_cache, grammar_oracle) -> None:
    from streamlit.testing.v1 import AppTest

    from amp.cache import ResultCache
    from amp.settings import cache_root

    assert cache_root() == isolated_cache.resolve() and len(ResultCache()) == 0  # nothing to answer from

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
    assert set(table["match"]) <= {"LF0", "LF1", "LF0 = LF1", "neither reading"}
    assert 0.0 <= ins.pair.p_lf0 <= 1.0 and not math.isnan(ins.pair.p_lf0)
    heat = plotly_spec(at, 0)
    assert heat["data"][0]["type"] == "heatmap"
    # it really decoded: beams came out of the decoder now (each checked against the grammar by
    # the lark oracle), the empty cache now holds the results, and the weights are loaded
    assert grammar_oracle.checked >= 1 and not grammar_oracle.problems
    assert len(ResultCache()) >= 1
    at.run()  # the sidebar drawn after the parse
    status = texts(at.sidebar, "success")
    assert any(s.startswith("Loaded") and "cpu" in s for s in status), (status, texts(at.sidebar, "info"), texts(at.sidebar, "error"), texts(at.sidebar, "caption"))
    clear_streamlit_caches()
