"""Parse & inspect (issue #31): contrastive attribution on request — the prompt map, the word bars,
the example scatter beside the influence, the exports."""

from __future__ import annotations

import pytest
from app_helpers import assert_ok, plotly_spec, texts

from amp.evaluation.attribution import Baseline, attribute, beside_influence

#: Each model run of these tests may take minutes when the machine is shared (the tiny model's
#: parse, 21 pair scores, the gradient passes): a bound of its own, above the helpers' default.
RUN_S = 900


@pytest.fixture
def parsed(at):
    """Parse & inspect after one **Parse** of its default prompt (bounded by :data:`RUN_S`)."""
    at.switch_page("views/parse_inspect.py").run(timeout=RUN_S)
    assert_ok(at)
    at.button(key="pi_parse").click().run(timeout=RUN_S)
    assert_ok(at)
    assert not texts(at, "error")
    return at


def _titled(app, start: str) -> dict:
    specs = [plotly_spec(app, j) for j in range(len(app.get("plotly_chart")))]
    found = [s for s in specs if s["layout"]["title"]["text"].startswith(start)]
    assert found, [s["layout"]["title"]["text"] for s in specs]
    return found[0]


def test_attribution_on_request_matches_the_library(parsed) -> None:
    from ui.model.parsers import loaded_parser
    from ui.shared.prompt_state import default_prompt

    assert "pi_attribution" not in parsed.session_state  # nothing computed before the button
    parsed.button(key="pi_influence_run").click().run(timeout=RUN_S)  # the influence first: the scatter needs it
    assert_ok(parsed)
    parsed.number_input(key="pi_attr_steps").set_value(4).run(timeout=RUN_S)
    parsed.button(key="pi_attribution_run").click().run(timeout=RUN_S)
    assert_ok(parsed)
    assert not texts(parsed, "error")
    attr = parsed.session_state["pi_attribution"]["result"]
    assert attr == attribute(loaded_parser(), default_prompt(), steps=4)  # the page's numbers are the library's
    words = _titled(parsed, "Which words of the test sentence")["data"][0]
    assert words["y"] == pytest.approx([w.attribution for w in attr.words])
    inf = parsed.session_state["pi_influence"]["result"]
    rows, rho = beside_influence(attr, inf)
    scatter = _titled(parsed, "Examples: attribution against influence")
    assert ("–" if rho is None else f"{rho:+.2f}") in scatter["layout"]["title"]["text"]
    ys = sorted(y for trace in scatter["data"] for y in trace["y"])
    assert ys == pytest.approx(sorted(r.attribution for r in rows if r.influence is not None))
    assert any(m.label == "Completeness gap" and m.value == f"{attr.completeness_gap:.4f}" for m in parsed.metric)
    html = [h.proto.body for h in parsed.get("html")]
    assert any('class="amp-attribution"' in h and "data-attribution" in h for h in html)
    labels = {b.proto.label for b in parsed.get("download_button")}
    assert {"Prompt map (HTML)", "Token attributions CSV"} <= labels
    parsed.run(timeout=RUN_S)
    assert parsed.button(key="pi_attribution_run").disabled  # kept for this prompt, model and settings
    assert any(m.label == "Gap share" and m.value == f"{attr.relative_gap:.1%}" for m in parsed.metric)
    shown = [c.value for c in parsed.caption] + [w.value for w in parsed.warning]
    assert any("completeness gap" in t.lower() and f"at {attr.steps} steps" in t for t in shown), shown
    # another baseline, a gap target no run meets and a low bound: a new run, its warning says so
    parsed.selectbox(key="pi_attr_baseline").set_value(Baseline.MEAN).run(timeout=RUN_S)
    parsed.number_input(key="pi_attr_gap").set_value(0.1).run(timeout=RUN_S)
    parsed.number_input(key="pi_attr_max_steps").set_value(8).run(timeout=RUN_S)
    assert not parsed.button(key="pi_attribution_run").disabled
    parsed.button(key="pi_attribution_run").click().run(timeout=RUN_S)
    assert_ok(parsed)
    mean = parsed.session_state["pi_attribution"]["result"]
    assert mean == attribute(loaded_parser(), default_prompt(), steps=4, baseline="mean", gap_target=0.001,
                             max_steps=8)
    assert mean.baseline == "mean" and mean.baseline_value != attr.baseline_value
    if mean.target_met is False:  # the tiny model: 0.1 % is rarely met by 8 steps; the page says so
        assert any("NOT met" in w.value for w in parsed.warning)


def test_prompt_map_escapes_user_text() -> None:
    from amp.evaluation.attribution import Attribution, TokenAttribution
    from amp.reporting.attribution_plots import prompt_html, word_bars

    text = "Human: <b>x</b>\nComputer:"
    tokens = (TokenAttribution(0, "Human:", 0, 6, 0.5), TokenAttribution(1, " <b>x</b>", 6, 15, -1.0, word=0),
              TokenAttribution(2, "\nComputer:", 15, len(text), 0.0))
    attr = Attribution(prompt=text, test_utterance="<b>x</b>", lf0="a", lf1="b", fmt="fol", target="divergence",
                       method="input_x_gradient", steps=1, baseline="zero", divergence=0, token_lf0="a",
                       token_lf1="b", value=0.0, baseline_value=0.0, completeness_gap=0.0, tokens=tokens,
                       words=(), examples=())
    page = prompt_html(attr)
    assert "<b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "rgba(179, 71, 0, 0.750)" in page  # the most negative token in LF1's orange, at the strongest (0.75)
    assert "rgba(0, 114, 178, 0.375)" in page  # half as much toward LF0 in LF0's blue
    from amp.evaluation.attribution import WordAttribution

    fig = word_bars(Attribution(**{**attr.__dict__, "words": (WordAttribution(0, "<b>x</b>", -1.0),)}))
    assert "<b>" not in fig.data[0].x[0] and "&lt;b&gt;" in fig.data[0].x[0]


def test_parse_shows_the_beams_semantic_entropy(parsed) -> None:
    from amp.evaluation.semantic_entropy import beam_shares, semantic_entropy

    ins = parsed.session_state["inspection"]["result"]
    beams = ins.parse.beams
    se = semantic_entropy([b.text for b in beams], list(beam_shares([b.logprob for b in beams])) or None,
                          ins.lf0, ins.lf1, mode=ins.canonical_mode, fmt=ins.fmt)
    line = next(m for m in texts(parsed, "markdown") if m.startswith("**Meanings among the beams:**"))
    assert f"semantic entropy {se.entropy:.3f} nats" in line and f"neither {se.p_neither:.1%}" in line
