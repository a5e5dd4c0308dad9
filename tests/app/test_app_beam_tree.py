"""Parse & inspect's beam tree (issue #15 point 3): one end per beam in its reading's colour, views, export."""

from __future__ import annotations

import re

import pytest
from app_helpers import assert_ok, plotly_spec, texts

from amp.evaluation.beam_tree import compress
from amp.reporting.beam_table import MATCH_NAMES
from amp.reporting.beam_tree_plot import LABEL_COLORS


@pytest.fixture
def drawn(parsed):
    """The page after Parse, then 'Draw the beam tree' (the tree is on request only)."""
    at = parsed
    assert not any(s["layout"].get("title", {}).get("text", "").startswith("Beam tree")
                   for s in (plotly_spec(at, j) for j in range(len(at.get("plotly_chart")))))  # on request only
    assert "beam_tree" not in at.session_state
    at.button(key="pi_tree_run").click().run()
    assert_ok(at)
    assert not texts(at, "error")
    return at


def _tree_spec(app) -> dict:
    specs = [plotly_spec(app, j) for j in range(len(app.get("plotly_chart")))]
    (spec,) = [s for s in specs if s["layout"].get("title", {}).get("text", "").startswith("Beam tree")]
    return spec


def _ends(spec: dict) -> dict[int, tuple[str, str, str]]:
    """rank -> (label, marker colour, the name written beside the end) from the figure's end traces."""
    out = {}
    for trace in spec["data"]:
        if trace["meta"]["kind"] != "end":
            continue
        for text in trace["text"]:
            ranks, name = re.fullmatch(r"beam ([\d = ]+) · (.+)", text).groups()
            for rank in ranks.split(" = "):
                out[int(rank)] = (trace["meta"]["label"], trace["marker"]["color"], name)
    return out


def test_one_end_per_beam_in_its_readings_colour(drawn) -> None:
    ins = drawn.session_state["inspection"]["result"]
    assert "Beam tree" in [str(h.value) for h in drawn.subheader]
    ends = _ends(_tree_spec(drawn))
    assert sorted(ends) == list(range(1, len(ins.parse.beams) + 1)) and len(ends) == 5
    for rank, (label, colour, name) in ends.items():
        expected = ins.matches[rank - 1]
        assert (label, colour, name) == (expected, LABEL_COLORS[expected], MATCH_NAMES[expected])
    tree = drawn.session_state["beam_tree"]["tree"]
    assert drawn.session_state["beam_tree"]["ins"] is ins
    for rank, beam in enumerate(ins.parse.beams, start=1):
        assert tuple(t for n in tree.path(rank) for t in n.token_ids) == beam.token_ids


def test_compressed_and_full_views_and_the_probability_kind(drawn) -> None:
    tree = drawn.session_state["beam_tree"]["tree"]
    spec = _tree_spec(drawn)
    assert spec["layout"]["meta"] == {"compressed": True, "prob": "raw", "rows": spec["layout"]["meta"]["rows"]}
    marked = [i for t in spec["data"] if t["meta"]["kind"] in ("root", "node", "split", "end") for i in t["customdata"]]
    assert sorted(set(marked)) == list(range(len(compress(tree).nodes)))  # every segment has a marker
    drawn.segmented_control(key="pi_tree_view").set_value("full").run()
    assert_ok(drawn)
    spec = _tree_spec(drawn)
    assert spec["layout"]["meta"]["compressed"] is False
    marked = [i for t in spec["data"] if t["meta"]["kind"] in ("root", "node", "split", "end") for i in t["customdata"]]
    assert sorted(set(marked)) == list(range(len(tree.nodes)))  # one marker per token node
    assert drawn.session_state["beam_tree"]["tree"] is tree  # redrawn, not recomputed
    drawn.segmented_control(key="pi_prob").set_value("grammar").run()
    assert_ok(drawn)
    spec = _tree_spec(drawn)
    assert spec["layout"]["meta"]["prob"] == "grammar" and "renormalised over the grammar" in spec["layout"]["title"]["text"]
    hover = next(t for t in spec["data"] if t["meta"]["kind"] == "end")["hovertext"][0]
    assert "p (renormalised over the grammar) = " in hover


def test_exports_png_and_csv(drawn) -> None:
    charts = drawn.get("plotly_chart")
    chart = next(c for c in charts if "Beam tree" in c.proto.spec)
    assert '"filename": "beam-tree"' in chart.proto.config and '"png"' in chart.proto.config
    assert "Download the tree (CSV)" in [b.proto.label for b in drawn.get("download_button")]
