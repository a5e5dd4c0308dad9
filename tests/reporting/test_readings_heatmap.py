"""The Fig. 4 view (issue #26 point 4): the parse and both readings, aligned, the divergence in meaning."""

from __future__ import annotations

from types import SimpleNamespace

import plotly.graph_objects as go
import pytest
from test_token_heatmap_semantic import steps_of

from amp.data import generate
from amp.reporting.readings_heatmap import PLOT_PX, reading_rows, readings_heatmap
from amp.reporting.token_layout import aligned_rows, pack_blocks


def inspection(parse: str, lf0: str, lf1: str, match: str = "neither") -> SimpleNamespace:
    """The fields of an Inspection the figure reads, with word-level token steps."""
    pair = SimpleNamespace(lf0=SimpleNamespace(steps=steps_of(lf0)), lf1=SimpleNamespace(steps=steps_of(lf1)))
    return SimpleNamespace(predicted_steps=steps_of(parse), pair=pair, lf0=lf0, lf1=lf1, fmt="fol",
                           predicted_match=match)


@pytest.fixture
def pp() -> SimpleNamespace:
    pair = generate.find_pair("the boy saw the man with the telescope")
    assert pair is not None
    return inspection(pair.lf1.lf, pair.lf0.lf, pair.lf1.lf, match="lf1")


def cells(fig: go.Figure) -> dict[int, list[str]]:
    """The cell texts of each figure row (y), blocks in order, empty cells as ''."""
    out: dict[int, list[str]] = {}
    for trace in fig.to_dict()["data"]:
        for y, row in zip(trace["y"], trace["text"], strict=True):
            out.setdefault(y, []).extend(row)
    return out


def test_aligned_rows_share_the_prefix_and_equal_tokens() -> None:
    a = "exists a . exists e . saw(a) AND duck(e)".split()
    b = "exists x . exists a . duck(x) AND saw(a)".split()
    cols = aligned_rows([a, b])
    assert cols[0][:6] == cols[1][:6] == list(range(6))  # the prefix, one token per column
    shared = set(cols[0]) & set(cols[1])
    for c in shared - set(range(2)):
        i, j = cols[0].index(c), cols[1].index(c)
        assert a[i] == b[j] or c == 1 or c == 4  # a column holds equal tokens, or the first difference
    assert all(x < y for row in cols for x, y in zip(row, row[1:], strict=False))


def test_pack_blocks_fit_and_even_out() -> None:
    blocks = pack_blocks([50.0] * 40, 600)
    assert [len(b) for b in blocks] == [11, 11, 11, 7]
    assert all(sum(50.0 for _ in b) <= 600 for b in blocks)
    assert pack_blocks([700.0, 10.0], 600) == [range(0, 1), range(1, 2)]


def test_three_rows_per_block_no_empty_row_and_the_divergence_in_meaning(pp: SimpleNamespace) -> None:
    fig = readings_heatmap(pp)
    meta = fig.layout.meta
    rows = cells(fig)
    n_blocks = len(meta["blocks"])
    assert sorted(rows) == list(range(3 * n_blocks))  # three rows per block, no blank row between
    assert [fig.layout.yaxis.ticktext[i] for i in range(3)] == ["parse: LF1", "LF0 (forced)", "LF1 (forced)"]
    ended = {a.y for a in fig.layout.annotations if a.name == "ended"}
    assert all(any(rows[y]) or y in ended for y in rows)
    # the divergence is a column where the readings' tokens differ, inside both meaning items
    d = meta["divergence"]
    info = reading_rows(pp)
    tokens = {r: {c: str(info.steps[r][i].token).strip() for i, c in enumerate(info.columns[r])} for r in (1, 2)}
    assert tokens[1].get(d) != tokens[2].get(d)
    assert d in info.items[0] + info.items[1]
    boxed0 = "".join(tokens[1][c] for c in info.items[0])
    boxed1 = "".join(tokens[2][c] for c in info.items[1])
    assert (boxed0, boxed1) == ("have(e)", "instrument(a,z)")
    assert "exists" not in tokens[1].get(d, "") + tokens[2].get(d, "")  # not the quantifier prefix
    assert fig.layout.width <= PLOT_PX
    assert len([s for s in fig.layout.shapes if s.name == "divergence"]) == 1


def test_readings_that_mean_the_same_get_no_box_and_say_so() -> None:
    lf = "exists x . exists y . boy(x) AND cat(y) AND saw(x, y)"
    odd = "exists y . exists x . boy(y) AND cat(x) AND saw(y, x)"
    fig = readings_heatmap(inspection(lf, lf, odd))
    assert fig.layout.meta["divergence"] is None
    assert not [s for s in fig.layout.shapes if s.name in ("divergence", "meaning")]
    assert "mean the same" in fig.layout.title.text


def test_user_tokens_are_never_markup() -> None:
    from test_token_heatmap_semantic import Step

    lf = "exists x . duck(x) AND have(x, Her)"
    ins = inspection(lf, lf, "exists x . duck(x) AND have(x, Me)")
    ins.predicted_steps = (*ins.predicted_steps, Step(" <b>", 1, 0.5))
    fig = readings_heatmap(ins)
    texts = [t for row in cells(fig).values() for t in row]
    assert "&lt;b&gt;" in texts and "<b>" not in texts


def test_a_long_lf_wraps_into_blocks_that_fit() -> None:
    lf0 = "exists x . " + " AND ".join(["boy(x)", "tall(x)", "happy(x)"] * 8)
    lf1 = "exists x . " + " AND ".join(["boy(x)", "tall(x)", "sad(x)"] * 8)
    fig = readings_heatmap(inspection(lf0, lf0, lf1, match="lf0"))
    blocks = fig.layout.meta["blocks"]
    assert len(blocks) >= 2 and fig.layout.width <= PLOT_PX
    assert sorted(cells(fig)) == list(range(3 * len(blocks)))
    assert [c for b in blocks for c in b] == list(range(sum(len(b) for b in blocks)))  # every column once, in order


def test_a_runaway_parse_is_cut_after_the_readings_and_says_how_much(pp: SimpleNamespace) -> None:
    from amp.reporting.readings_heatmap import TAIL_COLS

    ins = inspection(pp.lf0 + " AND" + " (" * 200, pp.lf0, pp.lf1)
    fig = readings_heatmap(ins)
    meta = fig.layout.meta
    info = reading_rows(ins)
    last = max(max(c) for c in info.columns[1:])
    assert meta["cut"] == sum(1 for c in info.columns[0] if c > last + TAIL_COLS) > 150
    (more,) = [a for a in fig.layout.annotations if a.name == "more"]
    assert more.text == f"+{meta['cut']} tokens"
    rows = cells(fig)
    for b in range(len(meta["blocks"])):  # every block holds a reading (the shorter one may end first)
        assert any(rows[3 * b + 1]) or any(rows[3 * b + 2])
    assert fig.layout.width <= PLOT_PX


# ---------------------------------------------------------------- layout (issue #40 point 7)


def _filled(fig: go.Figure) -> dict[int, list[bool]]:
    """Per figure row, whether each cell holds a token."""
    out: dict[int, list[bool]] = {}
    for trace in fig.to_dict()["data"]:
        for y, row in zip(trace["y"], trace["z"], strict=True):
            out.setdefault(y, []).extend(v is not None for v in row)
    return out


def _cells_of(fig: go.Figure) -> list[tuple[float, float, float, float]]:
    """Every filled cell as (x0, x1, y0, y1) in data coordinates."""
    out = []
    for trace in fig.to_dict()["data"]:
        xs = trace["x"]
        for y, row in zip(trace["y"], trace["z"], strict=True):
            out += [(xs[k], xs[k + 1], y - 0.5, y + 0.5) for k, v in enumerate(row) if v is not None]
    return out


@pytest.mark.parametrize("match", ["lf0", "lf1", "both", "neither", "unparseable"])
def test_row_labels_are_whole_and_the_margin_holds_them(pp: SimpleNamespace, match: str) -> None:
    from amp.evaluation.matching import Match
    from amp.reporting.beam_table import MATCH_NAMES
    from amp.reporting.readings_heatmap import LABEL_CHAR_PX, LABEL_PAD_PX

    pp.predicted_match = match
    fig = readings_heatmap(pp)
    ticks = list(fig.layout.yaxis.ticktext)
    assert ticks[:3] == [f"parse: {MATCH_NAMES[Match(match)]}", "LF0 (forced)", "LF1 (forced)"]
    assert fig.layout.margin.l >= LABEL_CHAR_PX * max(len(t) for t in ticks) + LABEL_PAD_PX
    assert fig.layout.width <= PLOT_PX and fig.layout.width == fig.layout.margin.l + fig.layout.margin.r + \
        fig.layout.xaxis.range[1]


def test_ended_only_when_no_token_follows_and_a_gap_says_it_continues(pp: SimpleNamespace) -> None:
    """A parse aligned with the readings' start and end has no token in the blocks between: those
    rows say "(continues below)", never "(ended)"; "(ended)" only after a row's last token."""
    ins = inspection("exists x . patient(e, z)", pp.lf0, pp.lf1)
    fig = readings_heatmap(ins)
    filled = _filled(fig)
    notes = {a.y: a for a in fig.layout.annotations if a.name in ("ended", "continues")}
    n_blocks = len(fig.layout.meta["blocks"])
    assert n_blocks >= 3
    kinds = set()
    for y, cells_ in filled.items():
        if any(cells_):
            assert y not in notes  # a note only in a row without a token in its block
            continue
        later = any(any(filled[y2]) for y2 in range(y + 3, 3 * n_blocks, 3))
        earlier = any(any(filled[y2]) for y2 in range(y % 3, y, 3))
        expected = "(ended)" if earlier and not later else "(continues below)" if earlier else "(starts below)"
        assert notes[y].text == expected, y
        kinds.add(expected)
    assert "(continues below)" in kinds  # the gap case is exercised
    for note in notes.values():  # each note in its own row, at the left of the plot
        assert note.yref == "y" and note.xanchor == "left" and note.x == 0 and note.yanchor == "middle"


def test_the_divergence_tag_stands_above_the_plot_area_and_covers_no_cell(pp: SimpleNamespace) -> None:
    from amp.reporting.readings_heatmap import TAG_PX, TITLE_PX

    for ins in (pp, inspection(pp.lf1, pp.lf0, pp.lf1, match="lf1"), inspection("exists x . boy(x)", pp.lf0, pp.lf1)):
        fig = readings_heatmap(ins)
        (tag,) = [a for a in fig.layout.annotations if a.name == "divergence"]
        assert tag.yref == "paper" and tag.y >= 1 and tag.yanchor == "bottom" and not tag.showarrow
        assert fig.layout.margin.t >= TITLE_PX + TAG_PX  # room reserved above the plot area
        (box,) = [s for s in fig.layout.shapes if s.name == "divergence"]
        assert tag.x in (box.x0, box.x1)  # over the boxed column, running away from the plot's near edge
        assert (tag.xanchor == "left") == (tag.x == box.x0)
        block = int((box.y0 + 0.5) // 3)
        assert ("block" in tag.text) == (block > 0)
        # every other annotation in data coordinates sits in a row without cells of its block
        cells_ = _cells_of(fig)
        for note in fig.layout.annotations:
            if note.yref == "y" and note.name != "more":
                assert not any(x0 <= note.x < x1 and y0 < note.y < y1 for x0, x1, y0, y1 in cells_), note.text
    lf = "exists x . exists y . boy(x) AND cat(y) AND saw(x, y)"
    same = readings_heatmap(inspection(lf, lf, "exists y . exists x . boy(y) AND cat(x) AND saw(y, x)"))
    assert not [a for a in same.layout.annotations if a.name == "divergence"] and same.layout.margin.t == TITLE_PX
