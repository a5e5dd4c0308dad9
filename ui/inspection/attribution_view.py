"""Parse & inspect: which words push the model toward a reading — contrastive attribution at the
point where LF0 and LF1 part (issue #31; docs/paper-notes.md §18), on request.

Widget glue only: numbers from :mod:`amp.evaluation.attribution`, figures from
:mod:`amp.reporting.attribution_plots`.  The prompt is shown as HTML built with every character
escaped; words and sentences in figures go through plotly escaping.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from amp.evaluation.attribution import (
    DEFAULT_GAP_TARGET,
    DEFAULT_MAX_STEPS,
    DEFAULT_STEPS,
    METHODS,
    TARGETS,
    Attribution,
    Baseline,
    attribute,
    beside_influence,
)
from amp.parser import engines
from amp.parser.core import limits
from amp.prompts import Prompt
from amp.reporting import attribution_plots
from ui.inspection.influence_view import INFLUENCE_KEY, _influence_key, counted_run
from ui.model import choice as model_choice
from ui.shared.common import chart, csv_download, plain

ATTRIBUTION_KEY = "pi_attribution"
_METHOD_NAMES = {"integrated_gradients": "integrated gradients", "input_x_gradient": "input × gradient"}
_TARGET_NAMES = {"divergence": "where the readings part", "sequence": "whole sequences"}
_BASELINE_NAMES = {Baseline.ZERO: "zero embeddings", Baseline.PAD: "pad token", Baseline.MEAN: "mean embedding"}


def _compute(slot: Any, prompt: Prompt, target: str, method: str, steps: int, baseline: Baseline,
             gap_target: float | None, max_steps: int) -> Attribution | None:
    passes = 1 if method == "input_x_gradient" else steps + 1
    more = "" if method == "input_x_gradient" or gap_target is None else ", more if the completeness gap asks"
    return counted_run(slot, total=passes, unit="gradient passes",
                       cancel=("pi_attribution_cancel", "Stops the attribution after the gradient passes it is computing."),
                       label=f"Attributing the log-odds to the prompt's tokens ({passes} gradient pass(es){more})…",
                       fn=lambda p, progress: attribute(p, prompt, target=target, method=method, steps=steps,
                                                        baseline=baseline, gap_target=gap_target,
                                                        max_steps=max_steps, progress=progress))


def _no_gradients() -> bool:
    """Whether the sidebar's engine gives no gradients (its capabilities): then the section says so
    and offers, one click away, the first engine that does."""
    engine = model_choice.current_engine()
    if engines.capabilities(engine).gradients:
        return False
    able = (*engines.engines_with(lambda c: c.gradients), engines.DEFAULT_ENGINE)[0]
    st.info(f"Attribution takes gradients through the model's weights, which the {engine} engine does not give. "
            f"The {able} engine runs the same model exactly (float32, slower).", icon=":material/info:")
    st.button(f"Use {able}", key="pi_attr_exact", on_click=model_choice.set_engine, args=(able,),
              icon=":material/swap_horiz:")
    return True


def attribution_section(prompt: Prompt) -> None:
    """An expander with the settings and a button; the map, word bars and example scatter once computed."""
    with st.expander("Which words pushed it? (gradient attribution)"):
        if prompt.gold_lf0 is None or prompt.gold_lf1 is None:
            st.caption("The test sentence needs both gold readings to contrast them.")
            return
        st.caption("Attributes the model's log-odds log p(LF0's token) − log p(LF1's token) where the readings "
                   "part to every prompt token (gradients of the loaded model; needs a local model). Blue pushes "
                   "toward LF0, orange toward LF1.")
        if _no_gradients():
            return
        c1, c2, c3 = st.columns(3)
        target = c1.selectbox("Target", TARGETS, format_func=_TARGET_NAMES.get, key="pi_attr_target")
        method = c2.selectbox("Method", METHODS, index=METHODS.index("integrated_gradients"),
                              format_func=_METHOD_NAMES.get, key="pi_attr_method")
        baseline = c3.selectbox("Baseline", list(Baseline), format_func=_BASELINE_NAMES.get, key="pi_attr_baseline",
                                help="The reference input x′ the prompt's text tokens are compared with.")
        ig = method == "integrated_gradients"
        c4, c5, c6 = st.columns(3)
        steps = int(c4.number_input("Steps (integrated gradients)", 1, limits.MAX_ATTRIBUTION_STEPS, DEFAULT_STEPS,
                                    key="pi_attr_steps", disabled=not ig))
        gap = c5.number_input("Completeness-gap target (%)", 0.1, 99.0, DEFAULT_GAP_TARGET * 100, step=1.0,
                              key="pi_attr_gap", disabled=not ig,
                              help="The steps triple until |Σ attributions − (f(x) − f(x′))| is at most this share "
                                   "of |f(x) − f(x′)|, or the most steps is reached.")
        max_steps = int(c6.number_input("Most steps", 1, limits.MAX_ATTRIBUTION_STEPS,
                                        max(DEFAULT_MAX_STEPS, steps), key="pi_attr_max_steps", disabled=not ig))
        gap_target = round(float(gap) / 100, 6)
        max_steps = max(max_steps, steps)
        key = (*_influence_key(prompt), target, method, steps, str(baseline), gap_target, max_steps)
        stored = st.session_state.get(ATTRIBUTION_KEY)
        have = stored is not None and stored["key"] == key
        run = st.button("Attribute", key="pi_attribution_run", icon=":material/gradient:", disabled=have)
        slot = st.empty()
        if run:
            result = _compute(slot, prompt, target, method, steps, Baseline(baseline), gap_target, max_steps)
            if result is not None:
                st.session_state[ATTRIBUTION_KEY] = {"key": key, "result": result}
                have, stored = True, st.session_state[ATTRIBUTION_KEY]
        if not have or stored is None:
            return
        show(stored["result"], prompt)


def show(attr: Attribution, prompt: Prompt) -> None:
    """The computed attribution: numbers, the prompt map, the word bars, the example scatter, exports."""
    st.markdown(f"The readings part at LF token {attr.divergence}: LF0 writes **{plain(attr.token_lf0.strip())}**, "
                f"LF1 **{plain(attr.token_lf1.strip())}**." if attr.target == "divergence" else
                "Target: log P(LF0) − log P(LF1) of the whole forced decodes.")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Log-odds f(prompt)", f"{attr.value:+.3f}", help="> 0: the model prefers LF0 here")
    m2.metric("f(baseline)", f"{attr.baseline_value:+.3f}",
              help=f"the prompt's text tokens at the baseline ({_BASELINE_NAMES[Baseline(attr.baseline)]})")
    m3.metric("Completeness gap", f"{attr.completeness_gap:.4f}",
              help="|Σ attributions − (f(prompt) − f(baseline))|: 0 for exact integrated gradients")
    m4.metric("Gap share", f"{attr.relative_gap:.1%}", help=f"of |f(prompt) − f(baseline)|, at {attr.steps} step(s)")
    if attr.target_met is False:
        st.warning(plain(attr.note[:1].upper() + attr.note[1:]), icon=":material/warning:")
    else:
        st.caption(plain(attr.note[:1].upper() + attr.note[1:]))
    st.html(attribution_plots.prompt_html(attr))
    st.download_button("Prompt map (HTML)", attribution_plots.prompt_html_page(attr), file_name="attribution_map.html",
                       mime="text/html", key="pi_attr_map_html", icon=":material/download:", on_click="ignore")
    chart(attribution_plots.word_bars(attr), key="pi_attr_words", filename="attribution_words")
    inf_state = st.session_state.get(INFLUENCE_KEY)
    if inf_state is not None and inf_state["key"] == _influence_key(prompt):
        rows, rho = beside_influence(attr, inf_state["result"])
        chart(attribution_plots.example_scatter(rows, rho), key="pi_attr_scatter", filename="attribution_vs_influence")
    else:
        st.caption("Find the influential examples (above) to set each example's attribution beside its influence.")
    csv_download(attribution_plots.attribution_frame(attr), "attribution_tokens.csv", label="Token attributions CSV",
                 key="pi_attr_csv")
