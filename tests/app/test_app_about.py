"""About & cache: metric definitions, the default model's facts, cache statistics and clearing."""

from __future__ import annotations

from app_helpers import assert_ok, goto, texts


def test_about_page(at) -> None:
    goto(at, "about")
    latex = [e.value for e in at.latex]
    assert any("ZM" in x for x in latex) and any("[0,2]" in x for x in latex) and any("FIM" in x for x in latex)
    assert any("Range 0–2" in m for m in texts(at, "markdown"))
    info = at.dataframe[0].value
    assert "Gemma 3 270M (base)" in set(info["value"])
    assert at.metric[0].label == "Entries"


def test_clear_cache_from_about(at) -> None:
    goto(at, "about")
    at.button(key="about_clear_all").click().run()
    assert_ok(at)
    assert at.metric[0].value == "0"
