"""Parse & inspect (issue #15 points 1, 2): the contrastive strip and the examples' influence on P(LF0)."""

from __future__ import annotations

import pytest
from app_helpers import assert_ok, plotly_spec, texts

from amp.evaluation.contrastive import contrast
from amp.evaluation.influence import example_influence


def _specs(app) -> list[dict]:
    return [plotly_spec(app, j) for j in range(len(app.get("plotly_chart")))]


def _titled(app, start: str) -> dict:
    found = [s for s in _specs(app) if s["layout"]["title"]["text"].startswith(start)]
    assert found, [s["layout"]["title"]["text"] for s in _specs(app)]
    return found[0]


def test_the_contrastive_strip_shows_the_log_odds_after_the_divergence(parsed) -> None:
    ins = parsed.session_state["inspection"]["result"]
    c = contrast(ins.pair)
    strip = _titled(parsed, "LF0 against LF1, token by token")
    assert c.divergence is not None
    shared, odds = strip["data"]
    cells = [v for row in odds["z"] for v in row if v is not None]  # row by row, 12 cells a row
    assert cells == pytest.approx([col.log_odds for col in c.after_divergence()])
    assert odds["zmid"] == 0 and all(len(row) == 12 for row in odds["z"])
    assert sum(v is not None for row in shared["z"] for v in row) == min(3, c.divergence)  # the grey context
    alts = _titled(parsed, "What the grammar allowed")
    assert alts["data"][0]["y"] == pytest.approx([a.prob for a in c.alternatives])
    labels = alts["data"][0]["x"]
    assert labels[c.alternative_lf0].startswith("LF0: ") and labels[c.alternative_lf1].startswith("LF1: ")
    assert any(m.label == "Summed over the LF" and m.value == f"{c.total_log_odds:+.2f}" for m in parsed.metric)


def test_influence_is_computed_on_request_and_matches_the_library(parsed) -> None:
    assert not any(s["layout"]["title"]["text"].startswith("Which examples") for s in _specs(parsed))
    parsed.button(key="pi_influence_run").click().run()
    assert_ok(parsed)
    assert not texts(parsed, "error")
    inf = parsed.session_state["pi_influence"]["result"]
    from ui.model.parsers import loaded_parser
    from ui.shared.prompt_state import default_prompt

    assert inf == example_influence(loaded_parser(), default_prompt())  # the page's numbers are the library's (cached)
    bars = _titled(parsed, "Which examples moved P(LF0)? (each removed)")["data"][0]
    ranked = [e for e in inf.ranked("removed") if e.delta_removed is not None]
    assert bars["x"] == pytest.approx([e.delta_removed for e in reversed(ranked)])
    listed = [m for m in texts(parsed, "markdown") if m[:1].isdigit() and " · Δ " in m]
    assert [int(m.split(".")[0]) - 1 for m in listed] == [e.index for e in inf.ranked("removed")]  # the bars' order
    assert [m.endswith("⇄") for m in listed] == [inf.turns(e, "removed") for e in inf.ranked("removed")]
    assert bars["base"] == pytest.approx([inf.base_p_lf0] * len(ranked))
    parsed.segmented_control(key="pi_influence_change").set_value("flipped").run()
    assert parsed.button(key="pi_influence_run").disabled  # kept for this prompt and model
    flipped = _titled(parsed, "Which examples moved P(LF0)? (each flipped")["data"][0]
    assert len(flipped["x"]) == sum(e.delta_flipped is not None for e in inf.examples)
    position = _titled(parsed, "Does an example's position matter?")["data"][0]
    assert position["x"] == [e.index + 1 for e in inf.examples if e.delta_flipped is not None]


def test_every_figure_downloads_as_an_interactive_page(parsed) -> None:
    """Each figure has an HTML download next to the toolbar's PNG; the page is the figure itself."""
    import plotly.graph_objects as go

    from ui.shared.common import figure_html

    labels = [b.proto.label for b in parsed.get("download_button")]
    assert labels.count("HTML") == len(parsed.get("plotly_chart"))
    page = figure_html(go.Figure(go.Bar(x=["a"], y=[0.25], name="<b>bar</b>")))
    assert page.startswith("<!doctype html>") and '"y":[0.25]' in page.replace(" ", "")
    assert "<script src=" not in page  # plotly.js is embedded: the page opens offline
