"""The token heatmap's semantic mark, content alignment, cell sizes and short labels (issue #11 point 4)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import plotly.graph_objects as go
import pytest

from amp.data import generate
from amp.evaluation.semantic_divergence import semantic_divergence
from amp.reporting.token_layout import (
    CELL_PAD_PX,
    CHAR_PX,
    LABEL_CHARS,
    MAX_CELL_CHARS,
    aligned_columns,
    fit_text,
    short_label,
    visible_text,
)
from amp.reporting.token_plots import MARK_LEGEND, token_heatmap


@dataclass(frozen=True)
class Step:
    token: str
    token_id: int
    prob: float
    prob_grammar: float | None = None
    alternatives: tuple = ()
    alternatives_grammar: tuple = ()


def steps_of(lf: str) -> tuple[Step, ...]:
    """Word-level tokens of an LF as the decoder frames it (leading space), e.g. `` have``, ``(e``."""
    tokens = re.findall(r"\s*\w+|\s*\S", " " + lf)
    assert "".join(tokens) == " " + lf
    return tuple(Step(t, hash(t) % 10_000, 0.5 + (i % 5) / 10) for i, t in enumerate(tokens))


def heat(fig: go.Figure) -> dict:
    (trace,) = [t for t in fig.to_dict()["data"] if t["type"] == "heatmap"]
    return trace


def shapes(fig: go.Figure, name: str) -> list[dict]:
    return [s for s in fig.to_dict()["layout"].get("shapes", []) if s.get("name") == name]


def boxed_text(fig: go.Figure, box: dict) -> str:
    """The cell texts inside a box on its row, joined."""
    row = round((box["y0"] + box["y1"]) / 2)
    cells = heat(fig)["text"][row]
    return "".join(cells[x] for x in range(len(cells)) if box["x0"] < x < box["x1"])


def stride(fig: go.Figure) -> int:
    """Rows per block (two parse rows plus a blank one when the rows wrap)."""
    return 3 if len(heat(fig)["text"]) > 2 else 2


def unwrapped(fig: go.Figure, row: int) -> list[str]:
    """All cell texts of one parse row, blocks joined (empty cells kept)."""
    text = heat(fig)["text"]
    return [t for y in range(row, len(text), stride(fig)) for t in text[y]]


def boxed_by_row(fig: go.Figure) -> list[str]:
    """Per parse row, the texts inside its semantic boxes (a box per block), joined."""
    out = ["", ""]
    for box in shapes(fig, "semantic"):
        out[round((box["y0"] + box["y1"]) / 2) % stride(fig)] += boxed_text(fig, box)
    return out


@pytest.fixture
def pp() -> tuple[str, str]:
    pair = generate.find_pair("the boy saw the man with the telescope")
    assert pair is not None
    return pair.lf1.lf, pair.lf0.lf  # the model's row (LF1) on top, the forced LF0 below


def _pp_figure(pp: tuple[str, str], mark: str, wrap: int = 16) -> go.Figure:
    top, bottom = pp
    a, b = steps_of(top), steps_of(bottom)
    index = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x.token != y.token)
    return token_heatmap(a, b, divergence=index, align=True, semantic=semantic_divergence(top, bottom),
                         mark=mark, labels=("LF1 · model", "LF0 · forced"), wrap=wrap)  # type: ignore[arg-type]


def test_aligned_columns_leave_gaps_so_equal_tokens_share_a_column() -> None:
    a = ["A", "B", "X", "C", "D"]
    b = ["A", "B", "C", "D", "E"]
    assert aligned_columns(a, b) == ([0, 1, 2, 3, 4], [0, 1, 2, 4, 5])  # X and C both in the divergence column
    assert aligned_columns(["A", "X", "B", "C"], ["A", "Y", "Z", "B", "C"]) == ([0, 1, 3, 4], [0, 1, 2, 3, 4])
    assert aligned_columns(["(", "("], ["exists", "x", "."]) == ([0, 1], [0, 1, 2])  # token 0 stays at column 0
    assert aligned_columns(["A", "P", "Q", "C"], ["A", "R", "C"]) == ([0, 1, 2, 3], [0, 1, 3])  # replace
    assert aligned_columns(["A", "B"], ["A", "B"]) == ([0, 1], [0, 1])


def test_aligned_rows_put_equal_tokens_after_the_divergence_in_one_column(pp) -> None:
    fig = _pp_figure(pp, "token", wrap=200)
    text = [unwrapped(fig, 0), unwrapped(fig, 1)]
    top, bottom = steps_of(pp[0]), steps_of(pp[1])
    assert [t for t in text[0] if t] == [t.token.strip() for t in top]
    assert [t for t in text[1] if t] == [t.token.strip() for t in bottom]
    # the shared tail "patient ( a , Galileo )"-like end of the LF1 row sits above the same tokens
    shared = sum(1 for x, y in zip(text[0], text[1], strict=True) if x and x == y)
    positional = sum(1 for x, y in zip(top, bottom, strict=False) if x.token == y.token)
    assert shared > positional
    assert any(x and not y for x, y in zip(text[0], text[1], strict=True))  # gaps where one row lacks a token


def test_semantic_mark_boxes_instrument_and_have(pp) -> None:
    fig = _pp_figure(pp, "semantic")
    sem = shapes(fig, "semantic")
    assert len(sem) == len(shapes(fig, "semantic edge")) >= 2
    assert boxed_by_row(fig) == ["instrument(a,z)", "have(e)"]
    assert not shapes(fig, "divergence")  # the token box is not drawn in semantic mode
    assert sem[0]["line"]["dash"] == "dash"
    notes = [a["text"] for a in fig.to_dict()["layout"]["annotations"]]
    assert any("meanings differ" in n for n in notes) and not any("diverges here" in n for n in notes)


def test_token_and_both_marks(pp) -> None:
    token = _pp_figure(pp, "token")
    assert len(shapes(token, "divergence")) == 1 and not shapes(token, "semantic")
    both = _pp_figure(pp, "both")
    assert len(shapes(both, "divergence")) == 1 and boxed_by_row(both) == ["instrument(a,z)", "have(e)"]
    notes = [a["text"] for a in both.to_dict()["layout"]["annotations"]]
    assert MARK_LEGEND in notes and any("diverges here" in n for n in notes)
    assert shapes(both, "divergence")[0]["line"].get("dash") is None  # solid versus dashed
    with pytest.raises(ValueError):
        _pp_figure(pp, "words")


def test_semantic_mark_falls_back_to_the_token_box_when_the_tokens_do_not_spell_the_lf(pp) -> None:
    other = steps_of("exists x . man(x)")
    fig = token_heatmap(other, other[:2], divergence=2, semantic=semantic_divergence(*pp), mark="semantic")
    assert len(shapes(fig, "divergence")) == 1 and not shapes(fig, "semantic")


def test_a_semantic_item_across_blocks_gets_one_box_per_block(pp) -> None:
    top, bottom = pp
    start = top.index("instrument")
    n_before = len(steps_of(top[:start].rstrip()))  # tokens before the item
    fig = token_heatmap(steps_of(top), steps_of(bottom), semantic=semantic_divergence(top, bottom),
                        mark="semantic", align=True, wrap=n_before + 2)
    boxes = [boxed_text(fig, s) for s in shapes(fig, "semantic")]
    assert "instrument(a,z)" not in boxes and "".join(boxes[:2]) == "instrument(a,z)"


def test_cells_are_wide_enough_for_their_text_and_long_tokens_are_cut() -> None:
    long_token = " supercalifragilistic"
    a = (Step(" exists", 1, 0.5), Step(long_token, 2, 0.4), Step(" x", 3, 0.9))
    fig = token_heatmap(a, a[:1], align=True)
    h = heat(fig)
    px = fig.layout.meta["cell_px"]
    texts = [t for row in h["text"] for t in row if t]
    assert fit_text("supercalifragilistic") in texts and all(len(t) <= MAX_CELL_CHARS for t in texts)
    assert all(len(t) * CHAR_PX + CELL_PAD_PX <= px for t in texts)
    margin = fig.layout.margin
    assert fig.layout.width - margin.l - margin.r == pytest.approx(px * len(h["x"]), abs=1)
    assert "supercalifragilistic" in h["customdata"][0][1]  # the hover keeps the whole token


def test_aligned_row_labels_are_short(pp) -> None:
    top, bottom = pp
    fig = token_heatmap(steps_of(top), steps_of(bottom), align=True, wrap=8,
                        labels=("predicted: the model's parse (LF1)", "alternative: LF0 (forced)"))
    ticks = fig.layout.yaxis.ticktext
    assert len(ticks) > 2 and all(len(visible_text(t)) <= LABEL_CHARS for t in ticks)
    assert "tokens" not in "".join(ticks)  # no token ranges: columns are not token positions
    assert short_label("<b>LF1</b> · model") == "<b>LF1</b> · model"
    assert short_label("alternative: LF0 (forced)") == "alternative: …"
