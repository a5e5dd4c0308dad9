"""Parse & inspect: the heatmap's mark control (token versus semantic divergence), issue #11 point 4.

The tiny model's parse is noise (not even an LF), so the page compares the two readings: the
expected marks and the sentence under the chart are written here for sentences whose readings
differ in a known place (issue #45 point 3: never computed by the page's own functions).
"""

from __future__ import annotations

import pytest
from app_helpers import assert_ok, goto, plotly_spec, texts

from amp.reporting.token_layout import LABEL_CHARS, visible_text
from ui.inspection.inspect_view import semantic_sentence
from ui.shared.common import plain

#: Sentences whose readings differ in meaning at a known item of each, written out by hand:
#: sentence → per reading (LF0, LF1): (its item, the item in words, the item as its heatmap cells read).
KNOWN = {
    "pp": ("the man saw the boy with the telescope",
           (("have(e)", "have", "have(e)"), ("instrument(a, z)", "instrument", "instrument(a,z)"))),
    "bound": ("Marie saw Ada and she waved",
              (("agent(e, Marie)", "agent(waved, Marie)", "agent(e,Marie)"),
               ("agent(e, Ada)", "agent(waved, Ada)", "agent(e,Ada)"))),
    "scope": ("every bird saw a boy", (("exists x", "exists boy", "existsx"), ("forall x", "forall bird", "forallx"))),
}


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


def _said(app) -> list[str]:
    """The markdown texts as read (the escapes of ui.shared.common.plain removed)."""
    return [m.replace("\\", "") for m in texts(app, "markdown")]


def _expected(case: str, alternative: str) -> tuple[list[str], str]:
    """The heatmap's boxed cells per row and the sentence under it, for the tiny model's parse
    (no LF): the other gold reading against ``alternative``, whose row alone is marked."""
    alt = int(alternative[-1])
    other, this = KNOWN[case][1][1 - alt], KNOWN[case][1][alt]
    sentence = (f"The readings differ in meaning at {other[0]} versus {this[0]} ({other[1]} versus {this[1]}); "
                f"the model's parse is not a well-formed LF, so only the LF{alt} reading's row is marked.")
    return ["", this[2]], sentence


def test_the_mark_control_defaults_to_semantic_and_switches_the_marked_item(parsed) -> None:
    control = parsed.segmented_control(key="pi_mark")
    assert control.value == "semantic" and list(control.options) == [
        "where the model commits (token)", "where the meanings differ (semantic)", "both"]
    ins = parsed.session_state["inspection"]["result"]
    assert ins.predicted_match == "unparseable"  # the tiny model's parse is no LF
    assert f"## Test sentence: *{KNOWN['pp'][0]}*" in _said(parsed)  # the default prompt's sentence
    marked, sentence = _expected("pp", ins.alternative)
    spec = _heatmap(parsed)
    assert _boxed_rows(spec) == marked and marked[1]
    assert not _shapes(spec, "divergence")
    assert sentence in _said(parsed)

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
    assert len(_shapes(spec, "divergence")) == 1 and _boxed_rows(spec) == marked


@pytest.mark.parametrize("case", ["bound", "scope"])
def test_the_semantic_mark_sits_where_the_readings_differ(at, case: str) -> None:
    """A conjunct (who waved) and a quantifier (which one scopes wider) as the known difference:
    the dashed box holds LF1's item and the sentence names both items in the page's words."""
    from amp.teaching import lesson

    sentence = KNOWN[case][0]
    at.session_state["prompt"] = lesson.sentence_prompt(sentence)
    goto(at, "parse_inspect")
    at.button(key="pi_parse").click().run()
    assert_ok(at)
    ins = at.session_state["inspection"]["result"]
    assert ins.predicted_match == "unparseable"  # the tiny model's parse is no LF
    marked, sentence = _expected(case, ins.alternative)
    assert _boxed_rows(_heatmap(at)) == marked
    assert sentence in _said(at)


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
