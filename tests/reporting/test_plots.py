"""Figure specs of amp.reporting.plots, read from ``fig.to_dict()`` (no rendering).

Token steps are hand-made stand-ins with the fields of ``amp.parser.parser.TokenStep`` (the
figure functions only read attributes), so these tests do not load a model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import pytest

from amp.data.types import BUILTIN_TYPES
from amp.reporting import plots
from amp.reporting.beam_table import difference_from
from amp.reporting.plots import (
    LF0_COLOR,
    LF1_COLOR,
    accuracy_bars,
    accuracy_vs_ratio,
    beam_table,
    p_lf0_distribution,
    p_lf0_vs_ratio,
    token_heatmap,
    zm_bars,
)

#: The colours declared with the built-in types (amp.data.types).
TYPE_COLORS = {t.id: t.color for t in BUILTIN_TYPES}


@dataclass(frozen=True)
class Alt:
    token: str
    token_id: int
    prob: float


@dataclass(frozen=True)
class Step:
    token: str
    token_id: int
    prob: float
    prob_grammar: float | None
    alternatives: tuple[Alt, ...]
    alternatives_grammar: tuple[Alt, ...]


@dataclass(frozen=True)
class Scored:
    """Stands in for ForcedScore: only ``.steps`` is read."""

    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Div:
    index: int
    char_offset: int = 0
    token_a: str = ""
    token_b: str = ""
    prob_a: float = 0.0
    prob_b: float = 0.0


def make_steps(tokens: list[str], probs: list[float], *, tag: str = "") -> tuple[Step, ...]:
    return tuple(
        Step(
            token=t,
            token_id=i,
            prob=p,
            prob_grammar=min(1.0, p + 0.05),
            alternatives=(Alt(f"rawalt{tag}{i}", 1000 + i, 0.11), Alt(f"second{tag}{i}", 2000 + i, 0.02)),
            alternatives_grammar=(Alt(f"gramalt{tag}{i}", 3000 + i, 0.33),),
        )
        for i, (t, p) in enumerate(zip(tokens, probs, strict=True))
    )


PRED = make_steps([" exists", " x", " .", " forall", " y", " ."], [0.9, 0.8, 0.7, 0.31, 0.95, 0.99])
ALT = make_steps([" forall", " x", " .", " exists", " y"], [0.4, 0.8, 0.7, 0.6, 0.9], tag="b")


def heat(fig: go.Figure) -> dict:
    (trace,) = [t for t in fig.to_dict()["data"] if t["type"] == "heatmap"]
    return trace


# --------------------------------------------------------------------------- token heatmap


def test_heatmap_z_equals_probabilities_and_pads_shorter_row():
    fig = token_heatmap(Scored(PRED), Scored(ALT), divergence=Div(0))
    h = heat(fig)
    assert h["z"][0] == [s.prob for s in PRED]
    assert h["z"][1] == [s.prob for s in ALT] + [None]  # padded with an empty cell
    assert h["text"][0] == ["exists", "x", ".", "forall", "y", "."]
    assert h["text"][1][-1] == ""
    assert (h["zmin"], h["zmax"]) == (0.0, 1.0)
    assert h["colorbar"]["title"]["text"]
    assert fig.layout.template.layout.paper_bgcolor is not None  # plotly_white applied
    assert fig.layout.yaxis.ticktext == ("predicted parse", "alternative parse")


def test_heatmap_accepts_plain_step_sequences_and_single_row():
    fig = token_heatmap(PRED, None)
    h = heat(fig)
    assert h["z"] == [[s.prob for s in PRED]]
    assert not fig.layout.shapes


def test_heatmap_hover_lists_alternatives_raw_and_grammar():
    raw = heat(token_heatmap(PRED, ALT, divergence=None))
    cell = raw["customdata"][0][3]
    assert "forall" in cell and "0.310" in cell and "token 3" in cell
    assert "rawalt3" in cell and "second3" in cell and "gramalt3" not in cell
    assert "rawaltb3" in raw["customdata"][1][3]
    assert raw["customdata"][1][5] == ""  # padding has no hover

    gram = token_heatmap(PRED, ALT, prob="grammar")
    g = heat(gram)
    assert g["z"][0] == [s.prob_grammar for s in PRED]
    assert "gramalt3" in g["customdata"][0][3] and "rawalt3" not in g["customdata"][0][3]
    assert "grammar" in gram.layout.title.text


def test_heatmap_limits_number_of_alternatives():
    h = heat(token_heatmap(PRED, n_alternatives=1))
    assert "rawalt0" in h["customdata"][0][0] and "second0" not in h["customdata"][0][0]


def test_heatmap_divergence_marker_spans_both_rows_at_index():
    fig = token_heatmap(Scored(PRED), Scored(ALT), divergence=Div(3))
    (shape,) = fig.to_dict()["layout"]["shapes"]
    assert (shape["x0"], shape["x1"]) == (2.5, 3.5)
    assert (shape["y0"], shape["y1"]) == (-0.5, 1.5)  # rows 0 and 1
    notes = [a for a in fig.to_dict()["layout"]["annotations"] if "diverges here" in a["text"]]
    assert len(notes) == 1 and notes[0]["x"] == 3


def test_heatmap_divergence_as_int_and_out_of_range_ignored():
    assert token_heatmap(PRED, ALT, divergence=2).layout.shapes[0].x0 == 1.5
    assert not token_heatmap(PRED, ALT, divergence=99).layout.shapes


def test_heatmap_long_lf_wraps_into_blocks():
    n = 45
    long_a = make_steps([f"t{i}" for i in range(n)], [i / n for i in range(n)])
    long_b = make_steps([f"u{i}" for i in range(30)], [1 - i / 30 for i in range(30)])
    fig = token_heatmap(long_a, long_b, divergence=Div(20), wrap=16)
    h = heat(fig)
    # 3 blocks of (pred, alt) + a blank row between blocks = 3*3 - 1 rows, 16 columns each.
    assert len(h["z"]) == 8 and all(len(row) == 16 for row in h["z"])
    for i, step in enumerate(long_a):
        assert h["z"][(i // 16) * 3][i % 16] == step.prob
        assert h["text"][(i // 16) * 3][i % 16] == f"t{i}"
    for i, step in enumerate(long_b):
        assert h["z"][(i // 16) * 3 + 1][i % 16] == step.prob
    assert all(v is None for v in h["z"][2])  # spacer row
    assert all(v is None for v in h["z"][7])  # alt has 30 tokens: nothing in block 2
    (shape,) = fig.layout.shapes
    assert (shape.x0, shape.x1) == (3.5, 4.5)  # 20 % 16 == 4
    assert (shape.y0, shape.y1) == (2.5, 4.5)  # block 1 spans rows 3 and 4
    assert "tokens 16–31" in fig.layout.yaxis.ticktext[2]
    assert fig.layout.height >= 8 * 50  # rows stay tall enough to read


def test_heatmap_empty_and_bad_arguments():
    fig = token_heatmap([], None)
    assert not fig.data and "score or inspect" in fig.layout.title.text
    with pytest.raises(ValueError):
        token_heatmap(PRED, prob="softmax")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        token_heatmap(PRED, wrap=0)


def test_heatmap_missing_grammar_probability_is_gap():
    steps = (Step(" x", 1, 0.5, None, (), ()),)
    h = heat(token_heatmap(steps, prob="grammar"))
    assert h["z"] == [[None]] and "n/a" in h["customdata"][0][0] and "none recorded" in h["customdata"][0][0]


def test_heatmap_with_real_parser_results():
    """The parser's own result classes and divergence function drive the figure."""
    results = pytest.importorskip("amp.parser.core.results")
    div_mod = pytest.importorskip("amp.parser.search.divergence")

    def real(steps: tuple[Step, ...]) -> tuple:
        return tuple(
            results.TokenStep(
                s.token, s.token_id, s.prob, s.prob_grammar,
                tuple(results.TokenAlternative(a.token, a.token_id, a.prob) for a in s.alternatives),
                tuple(results.TokenAlternative(a.token, a.token_id, a.prob) for a in s.alternatives_grammar),
            )
            for s in steps
        )

    a = real(PRED)
    b = real(make_steps([" exists", " x", " .", " exists", " y"], [0.9, 0.8, 0.7, 0.6, 0.5]))
    b = tuple(results.TokenStep(s.token, 900 + i if i >= 3 else s.token_id, s.prob, s.prob_grammar,
                                s.alternatives, s.alternatives_grammar) for i, s in enumerate(b))
    score_a = results.ForcedScore("lf a", tuple(s.token_id for s in a), tuple(s.token for s in a), a,
                                  -1.0, -0.2, -0.9, min(s.prob for s in a), 0.36)
    score_b = results.ForcedScore("lf b", tuple(s.token_id for s in b), tuple(s.token for s in b), b,
                                  -1.0, -0.2, -0.9, 0.5, 0.55)
    div = div_mod.divergence(a, b)
    assert div.index == 3
    fig = token_heatmap(score_a, score_b, divergence=div)
    h = heat(fig)
    assert h["z"][0] == [s.prob for s in a] and h["z"][1][:5] == [s.prob for s in b]
    assert fig.layout.shapes[0].x0 == 2.5
    assert "rawalt3" in h["customdata"][0][3]
    # Identical parses: the divergence has no index and no marker is drawn.
    assert not token_heatmap(score_a, score_a, divergence=div_mod.divergence(a, a)).layout.shapes


def test_inspection_heatmap_labels_rows_by_reading():
    from types import SimpleNamespace

    inspection = SimpleNamespace(predicted_match="lf1", alternative="lf0", predicted_steps=PRED,
                                 alternative_steps=ALT, divergence=Div(0))
    fig = plots.inspection_heatmap(inspection)
    top, bottom = fig.layout.yaxis.ticktext
    assert "predicted parse" in top and "LF1" in top and LF1_COLOR in top
    assert "other reading" in bottom and "LF0" in bottom and LF0_COLOR in bottom
    assert heat(fig)["z"][0] == [s.prob for s in PRED] and fig.layout.shapes[0].x0 == -0.5
    hover = heat(fig)["customdata"][0][0]
    assert "predicted parse (LF1)" in hover and "span" not in hover  # tags stripped in hover


# --------------------------------------------------------------------------- few-shot figures


@pytest.fixture
def per_ratio() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "type": ["scope", "scope", "pp", "pp", "pp"],
            "ratio": [1.0, 0.0, 0.0, 0.5, 1.0],
            "n": [4, 4, 5, 5, 5],
            "acc_lf0": [0.75, 0.0, 0.2, 0.4, 0.8],
            "acc_lf1": [0.25, 1.0, 0.6, 0.4, 0.0],
            "neither": [0.0, 0.0, 0.2, 0.2, 0.2],
            "mean_p_lf0": [0.6, 0.3, 0.1, 0.5, 0.9],
            "std_p_lf0": [0.2, 0.1, 0.05, 0.1, 0.1],
            "sem_p_lf0": [0.1, 0.05, 0.02, 0.04, math.nan],
        }
    )


def test_p_lf0_vs_ratio_one_trace_per_type_plus_diagonal(per_ratio):
    fig = p_lf0_vs_ratio(per_ratio)
    data = fig.to_dict()["data"]
    by_type = {t["meta"]["type"]: t for t in data}
    assert set(by_type) == {"pp", "scope", "ideal"} and len(data) == 3
    assert [t["meta"]["type"] for t in data][:2] == ["pp", "scope"]  # paper order
    pp = by_type["pp"]
    assert pp["x"] == [0.0, 0.5, 1.0] and pp["y"] == [0.1, 0.5, 0.9]
    assert pp["error_y"]["array"] == [0.02, 0.04, 0.0]  # NaN sem → no bar
    assert by_type["scope"]["x"] == [0.0, 1.0] and by_type["scope"]["y"] == [0.3, 0.6]  # sorted by r
    assert pp["line"]["color"] == TYPE_COLORS["pp"]
    ideal = by_type["ideal"]
    assert ideal["x"] == [0.0, 1.0] and ideal["y"] == [0.0, 1.0] and ideal["line"]["dash"] == "dash"
    assert "ratio" in fig.layout.xaxis.title.text and "P(LF0)" in fig.layout.yaxis.title.text
    assert fig.layout.template.layout.to_plotly_json()  # a template is set
    assert list(p_lf0_vs_ratio(per_ratio, error="std").data[0].error_y.array) == [0.05, 0.1, 0.1]


def test_accuracy_vs_ratio_facets_and_line_styles(per_ratio):
    fig = accuracy_vs_ratio(per_ratio)
    data = fig.to_dict()["data"]
    real = [t for t in data if not t["meta"].get("ideal")]
    assert len(real) == 4  # 2 types × (LF0, LF1)
    for t in real:
        color, dash = (LF0_COLOR, "solid") if t["meta"]["lf"] == "lf0" else (LF1_COLOR, "dash")
        assert t["line"]["color"] == color and t["line"]["dash"] == dash
    scope_lf1 = next(t for t in real if t["meta"] == {"type": "scope", "lf": "lf1"})
    assert scope_lf1["x"] == [0.0, 1.0] and scope_lf1["y"] == [1.0, 0.25]
    axes = {t["xaxis"] for t in real if t["meta"]["type"] == "scope"}
    assert len(axes) == 1 and axes != {t["xaxis"] for t in real if t["meta"]["type"] == "pp"}
    titles = [a["text"] for a in fig.to_dict()["layout"]["annotations"]]
    assert titles[:2] == ["PP attachment", "quantifier scope"]
    # Legend shows LF0/LF1 once, not once per panel.
    assert sum(1 for t in data if t.get("showlegend")) == 4


def test_coinciding_accuracy_curves_stay_visible() -> None:
    """Issue #28: when LF0 and LF1 accuracy coincide (both 0 %), one line hid the other.  LF1's
    marker is a larger open diamond around LF0's dot, and a note names the types where they meet."""
    both_zero = pd.DataFrame({"type": ["pp"] * 3 + ["scope"] * 2, "ratio": [0.0, 0.5, 1.0, 0.0, 1.0],
                              "n": [2] * 5, "acc_lf0": [0.0, 0.0, 0.0, 0.0, 1.0],
                              "acc_lf1": [0.0, 0.0, 0.0, 1.0, 0.0]})
    fig = accuracy_vs_ratio(both_zero)
    real = {(t.meta["type"], t.meta["lf"]): t for t in fig.data if not t.meta.get("ideal")}
    lf0, lf1 = real[("pp", "lf0")], real[("pp", "lf1")]
    assert list(lf0.y) == list(lf1.y) == [0.0, 0.0, 0.0]  # the same points ...
    assert lf0.marker.symbol == "circle" and lf1.marker.symbol == "diamond-open"  # ... told apart
    assert lf1.marker.size > lf0.marker.size and lf1.marker.color == LF1_COLOR
    notes = [a.text.replace("<br>", " ") for a in fig.layout.annotations if a.name == "coincide-note"]
    assert notes == ["Where the LF0 and LF1 curves meet (PP attachment), the line drawn last covers the other: "
                     "LF0 is the filled dot, LF1 the open diamond around it."]
    apart = both_zero[both_zero["type"] == "scope"]
    assert not [a for a in accuracy_vs_ratio(apart).layout.annotations if a.name == "coincide-note"]


# --------------------------------------------------------------------------- zero-shot figures


@pytest.fixture
def zeroshot() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "type": ["conj", "pp", "scope"],
            "n": [10, 10, 8],
            "ZM_5": [10.0, 60.0, 25.0],
            "acc_lf0": [0.5, 0.3, 0.125],
            "acc_lf1": [0.2, 0.6, 0.75],
            "neither": [0.3, 0.1, 0.125],
        }
    )


def test_zm_bars(zeroshot):
    fig = zm_bars(zeroshot, 5)
    (bar,) = fig.to_dict()["data"]
    assert bar["x"] == ["PP attachment", "quantifier scope", "conjunction scope"] and bar["y"] == [60.0, 25.0, 10.0]
    assert bar["marker"]["color"] == [TYPE_COLORS["pp"], TYPE_COLORS["scope"], TYPE_COLORS["conj"]]
    assert "%" in fig.layout.yaxis.title.text and "ZM_5" in fig.layout.title.text
    assert "No zero-shot" in zm_bars(zeroshot.drop(columns="ZM_5").iloc[:0], 5).layout.title.text
    with pytest.raises(ValueError, match="ZM_3"):
        zm_bars(zeroshot, 3)  # the frame was summarised with k = 5


def test_accuracy_bars_lf_colours(zeroshot):
    fig = accuracy_bars(zeroshot)
    lf0, lf1 = fig.to_dict()["data"]
    assert lf0["marker"]["color"] == LF0_COLOR and lf1["marker"]["color"] == LF1_COLOR
    assert lf0["y"] == [0.3, 0.125, 0.5] and lf1["y"] == [0.6, 0.75, 0.2]
    assert fig.layout.barmode == "group"


def test_p_lf0_distribution_one_box_per_type_with_hover():
    records = pd.DataFrame(
        {
            "type": ["pp", "bound", "pp", "bound", "pp"],
            "surface": ["s1", "s2", "s3", "s4", "s5"],
            "ratio": [math.nan] * 5,
            "p_lf0": [0.2, 0.9, math.nan, 0.7, 0.4],
            "p_lf0_total": [0.1, 0.8, 0.5, 0.6, 0.3],
        }
    )
    fig = p_lf0_distribution(records)
    data = fig.to_dict()["data"]
    assert [t["meta"]["type"] for t in data] == ["pp", "bound"]
    assert data[0]["y"] == [0.2, 0.4] and data[1]["y"] == [0.9, 0.7]  # NaN dropped
    assert [c[0] for c in data[0]["customdata"]] == ["s1", "s5"]
    assert data[1]["marker"]["color"] == TYPE_COLORS["bound"]
    total = p_lf0_distribution(records, column="p_lf0_total").to_dict()["data"]
    assert total[0]["y"] == [0.1, 0.5, 0.3]


@pytest.mark.parametrize(
    "make",
    [
        lambda df: p_lf0_vs_ratio(df),
        lambda df: accuracy_vs_ratio(df),
        lambda df: zm_bars(df, 5),
        lambda df: accuracy_bars(df),
        lambda df: p_lf0_distribution(df),
    ],
)
@pytest.mark.parametrize("empty", [None, pd.DataFrame()])
def test_every_figure_handles_empty_input(make, empty):
    fig = make(empty)
    assert isinstance(fig, go.Figure) and not fig.data
    assert fig.layout.title.text and "No " in fig.layout.title.text


def test_all_nan_p_lf0_gives_empty_figure():
    df = pd.DataFrame({"type": ["pp"], "p_lf0": [math.nan], "surface": ["x"]})
    assert not p_lf0_distribution(df).data


def test_type_colours_are_stable_and_distinct_from_lf_colours():
    assert plots.type_color("pp") == TYPE_COLORS["pp"]
    assert plots.type_color("custom") == plots.type_color("custom")
    assert not {LF0_COLOR, LF1_COLOR} & set(TYPE_COLORS.values())
    assert len(set(TYPE_COLORS.values())) == len(TYPE_COLORS) == 5


# --------------------------------------------------------------------------- beam table


@dataclass(frozen=True)
class FakeBeam:
    rank: int
    text: str
    score: float
    logprob: float
    finished: bool = True
    parses: bool = True


LF0 = "exists x . forall y . boy(x) AND girl(y) AND saw(x, y)"
LF1 = "forall y . exists x . boy(x) AND girl(y) AND saw(x, y)"


def test_beam_table_matches_canonically():
    beams = (
        FakeBeam(0, "exists x . forall y . girl(y) AND boy(x) AND saw(x, y)", -0.1, -1.0),  # reordered LF0
        FakeBeam(1, LF1, -0.2, -2.0),
        FakeBeam(2, "exists x . boy(x)", -0.3, -3.0),
        FakeBeam(3, "exists x . boy(", -0.4, -4.0, finished=False, parses=False),
    )

    table = beam_table(beams, LF0, LF1, "logical")  # type: ignore[arg-type]  # beams of the same shape
    assert list(table.columns) == ["rank", "LF", "differs from beam 1", "score", "log-prob", "finished", "parses",
                                   "match"]
    assert table["rank"].tolist() == [1, 2, 3, 4]
    assert table["match"].tolist() == ["LF0", "LF1", "neither reading", "unparseable"]
    assert table["log-prob"].tolist() == [-1.0, -2.0, -3.0, -4.0]
    assert table["finished"].tolist() == [True, True, True, False]
    assert beam_table((), LF0, LF1, "logical").empty


def test_beams_that_differ_at_the_end_are_told_apart() -> None:
    """Issue #28: beams that differ only after ~75 characters looked alike in the table; each LF is
    now whole, with the part that differs from the top beam marked."""
    head = "exists x . exists y . exists z . man(x) AND girl(y) AND telescope(z) AND saw(x, y) AND "
    texts = [head + "instrument(a, z)", head + "instrument(a, y)", head + "instrument(a)", head + "instrument(a, z)"]
    beams = tuple(FakeBeam(i, t, -0.1 * i, -1.0 * i) for i, t in enumerate(texts))
    table = beam_table(beams, None, None, "logical")  # type: ignore[arg-type]
    assert table["LF"].tolist() == texts  # whole
    assert table["differs from beam 1"].tolist() == [
        "(top beam)", "…instrument(a, «y»)", "…instrument(a‸)", "(same text as the top beam)"]
    assert difference_from("exists x . boy(x)", "forall x . boy(x)") == "«forall» x . boy(x)"


def test_p_lf0_distribution_escapes_sentences_in_the_hover():
    """A teacher's own sentence is user text: plotly's hover labels read HTML, so it is escaped."""
    records = pd.DataFrame({"type": ["pp"], "surface": ["<b>I</b> saw & her duck"], "ratio": [math.nan],
                            "p_lf0": [0.4], "p_lf0_total": [0.4]})
    data = p_lf0_distribution(records).to_dict()["data"]
    assert data[0]["customdata"][0][0] == "&lt;b&gt;I&lt;/b&gt; saw &amp; her duck"
