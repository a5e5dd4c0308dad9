"""Parse & inspect: the heatmap's mark control (token versus semantic divergence), issue #11 point 4.

The tiny model's parse is noise, so the expected marks are computed from what it produced: the
semantic divergence of the top beam against the other reading (the library function), mapped to
the beam's tokens.
"""

from __future__ import annotations

from app_helpers import assert_ok, plotly_spec, texts

from amp.evaluation.semantic_divergence import inspection_semantic, token_indices
from amp.reporting.token_layout import LABEL_CHARS, visible_text
from ui.inspection.inspect_view import semantic_sentence
from ui.shared.common import plain


def _heatmap(app) -> dict:
    specs = [plotly_spec(app, j) for j in range(len(app.get("plotly_chart")))]
    return next(s for s in specs if s["data"] and s["data"][0]["type"] == "heatmap"
                and s["layout"]["title"]["text"].startswith("Token confidence"))  # the debugging section's


def _shapes(spec: dict, name: str) -> list[dict]:
    return [s for s in spec["layout"].get("shapes", []) if s.get("name") == name]


def _boxed_rows(spec: dict) -> list[str]:
    """Per parse row, the cell texts inside its dashed (semantic) boxes, joined."""
    text = spec["data"][0]["text"]
    stride = 3 if len(text) > 2 else 2
    out = ["", ""]
    for box in _shapes(spec, "semantic"):
        y = round((box["y0"] + box["y1"]) / 2)
        out[y % stride] += "".join(text[y][x] for x in range(len(text[y])) if box["x0"] < x < box["x1"])
    return [row.replace("␣", "") for row in out]  # "␣": how a cell shows a token that is only a space


def _expected_rows(ins, sem) -> list[str]:
    """The display texts of the tokens of each row's semantic item."""
    rows = []
    for steps, item, lf in ((ins.predicted_steps, sem.a, sem.lf_a), (ins.alternative_steps, sem.b, sem.lf_b)):
        tokens = [s.token for s in steps]
        found = token_indices(tokens, lf, item.start, item.end) if item is not None else ()
        rows.append("".join(tokens[i].strip() for i in found))
    return rows


def test_the_mark_control_defaults_to_semantic_and_switches_the_marked_item(parsed) -> None:
    control = parsed.segmented_control(key="pi_mark")
    assert control.value == "semantic" and list(control.options) == [
        "where the model commits (token)", "where the meanings differ (semantic)", "both"]
    ins = parsed.session_state["inspection"]["result"]
    sem = inspection_semantic(ins)
    assert sem is not None  # the parse against the other reading, or both golds when the parse is no LF
    spec = _heatmap(parsed)
    assert _boxed_rows(spec) == _expected_rows(ins, sem)
    assert _boxed_rows(spec)[1] and _boxed_rows(spec)[1] == sem.b.text.replace(" ", "")  # the forced reading's item
    assert not _shapes(spec, "divergence")
    assert semantic_sentence(sem, ins) in texts(parsed, "markdown")
    assert "The readings differ in meaning at " in semantic_sentence(sem, ins)

    control.set_value("token").run()
    assert_ok(parsed)
    assert not texts(parsed, "error")
    spec = _heatmap(parsed)
    assert not _shapes(spec, "semantic")
    (box,) = _shapes(spec, "divergence")
    index = ins.divergence.index
    width = len(spec["data"][0]["x"])
    assert box["x0"] == index % width - 0.5

    parsed.segmented_control(key="pi_mark").set_value("both").run()
    assert_ok(parsed)
    spec = _heatmap(parsed)
    assert len(_shapes(spec, "divergence")) == 1 and _boxed_rows(spec) == _expected_rows(ins, sem)


def test_row_labels_are_short_and_cells_fit_their_text(parsed) -> None:
    spec = _heatmap(parsed)
    ticks = spec["layout"]["yaxis"]["ticktext"]
    assert all(len(visible_text(t)) <= LABEL_CHARS for t in ticks)
    assert ticks[0].startswith("predicted") and ticks[1].startswith("forced")
    meta = spec["layout"]["meta"]
    cells = [t for row in spec["data"][0]["text"] for t in row if t]
    assert all(len(t) * meta["char_px"] < meta["cell_px"] for t in cells)


def test_the_sentence_under_the_chart_is_plain_text() -> None:
    from types import SimpleNamespace

    sem = SimpleNamespace(a=SimpleNamespace(text="have(*x*)"), b=None, description="have [link](http://x.y)")
    div = SimpleNamespace(index=3, token_a=" have", token_b=" exists")
    ins = SimpleNamespace(predicted=object(), predicted_match="neither", alternative="lf1", divergence=div)
    sentence = semantic_sentence(sem, ins)
    assert sentence == plain("The readings differ in meaning at have(*x*) versus nothing (have [link](http://x.y)); "
                             "the model's tokens part at token 3 ('have' versus 'exists').")
    assert "*x*" not in sentence  # emphasis escaped
