"""Parse & inspect: why the model picked that reading — the contrastive strip of LF0 against LF1
and each prompt example's influence on P(LF0) (issue #15 points 1 and 2).

Widget glue only: the numbers come from :mod:`amp.evaluation.contrastive` and
:mod:`amp.evaluation.influence`, the figures from :mod:`amp.reporting.influence_plots`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from amp.errors import AmpError
from amp.evaluation.contrastive import contrast
from amp.evaluation.influence import Influence, example_influence, influence_variants
from amp.evaluation.inspection import Inspection
from amp.parser import Parser
from amp.prompts import Prompt
from amp.reporting import influence_plots
from ui.model import actions, parsers
from ui.model import choice as model_choice
from ui.shared.common import chart, csv_download, describe_error, fmt_prob, plain

INFLUENCE_KEY = "pi_influence"
T = TypeVar("T")


def contrast_section(ins: Inspection, prob: str) -> None:
    """The log-odds strip and the grammar-allowed alternatives where LF0 and LF1 part."""
    st.subheader("LF0 against LF1")
    try:
        c = contrast(ins.pair, "grammar" if prob == "grammar" else "raw")
    except AmpError as exc:
        st.info(f"No contrastive view: {describe_error(exc)}", icon=":material/info:")
        return
    chart(influence_plots.contrast_strip(c), key="pi_contrast", filename="contrast_lf0_lf1")
    if c.divergence is not None:
        left, right = st.columns([1.3, 1])
        with left:
            chart(influence_plots.contrast_alternatives(c), key="pi_contrast_alts", filename="divergence_alternatives")
        with right:
            at = c.log_odds_at_divergence
            st.metric("Log-odds where they part", "–" if at is None else f"{at:+.2f}",
                      help="log p(LF0's token) − log p(LF1's token) under the same prefix: > 0 prefers LF0.")
            st.metric("Summed over the LF", f"{c.total_log_odds:+.2f}",
                      help="= log P(LF0) − log P(LF1) of the two forced decodes (the total-probability P(LF0)).")
            st.caption("Both readings are force-decoded after the same prompt. They share their first "
                       f"{c.divergence} tokens; at the next one the model chooses. Blue cells favour LF0, "
                       "orange cells LF1; after the divergence each reading follows its own context.")
    csv_download(influence_plots.contrast_frame(c), "contrast_lf0_lf1.csv", key="pi_contrast_csv")


def _influence_key(prompt: Prompt) -> tuple[Any, ...]:
    """What a stored result holds for: the sidebar's model (spec, engine, precision) and the prompt."""
    return (model_choice.current_choice().key, prompt.render(), prompt.gold_lf0, prompt.gold_lf1, prompt.words)


def counted_run(slot: Any, *, total: int, unit: str, cancel: tuple[str, str], label: str,
                fn: Callable[[Parser, Callable[[int, int], None]], T]) -> T | None:
    """``fn(parser, progress)`` on the sidebar's model, computed in ``slot``: a bar counting ``total``
    ``unit``, a Cancel button (``cancel``: its key and help) and the model's status box (``label``).
    ``slot`` is emptied once it worked, so the page's elements keep their places from one run to the
    next; an error stays in it.  ``None`` when the model is unusable, the run failed or was cancelled."""
    parser = parsers.get_parser()
    if parser is None:
        return None
    with slot.container():
        bar = st.progress(0.0, text=f"0 of {total} {unit}")
        st.button("Cancel", key=cancel[0], icon=":material/stop:", help=cancel[1])

        def progress(done: int, n: int) -> None:
            bar.progress(done / n if n else 1.0, text=f"{done} of {n} {unit}")

        result = actions.compute(parser, label, lambda p: fn(p, progress))
    if result is not None:
        slot.empty()
    return result


def _compute(slot: Any, prompt: Prompt, total: int) -> Influence | None:
    return counted_run(slot, total=total, unit="forced pair scores",
                       cancel=("pi_influence_cancel",
                               "Stops the model after the pair score it is computing (the finished ones stay cached)."),
                       label=f"Scoring both readings under {total} prompts (each example removed and each "
                             "ambiguous one flipped)…",
                       fn=lambda p, progress: example_influence(p, prompt, progress=progress))


def influence_section(prompt: Prompt) -> None:
    """Each example's change of P(LF0) when it is removed or flipped; computed on request."""
    st.subheader("Which examples pushed the model there?")
    if not prompt.examples:
        st.caption("A prompt without examples has nothing to attribute.")
        return
    total = len(influence_variants(prompt))
    key = _influence_key(prompt)
    stored = st.session_state.get(INFLUENCE_KEY)
    have = stored is not None and stored["key"] == key
    st.caption(f"Scores both readings after the prompt with each example removed and with each ambiguous one "
               f"flipped to its other reading: {total} forced pair scores (cached).")
    run = st.button("Find the influential examples", key="pi_influence_run", icon=":material/insights:",
                    disabled=have)
    slot = st.empty()  # always there: the figures below keep their places across runs
    if run:
        result = _compute(slot, prompt, total)
        if result is not None:
            st.session_state[INFLUENCE_KEY] = {"key": key, "result": result}
            have, stored = True, st.session_state[INFLUENCE_KEY]
    if not have or stored is None:
        return
    inf: Influence = stored["result"]
    c1, c2 = st.columns(2)
    change = c1.segmented_control("Change", ["removed", "flipped"], default="removed", required=True,
                                  key="pi_influence_change", format_func=lambda c: f"example {c}")
    version = c2.segmented_control("P(LF0)", ["min", "total"], default="min", required=True,
                                   key="pi_influence_version",
                                   format_func=lambda v: "min-token (paper)" if v == "min" else "total probability")
    left, right = st.columns([1, 1.6], gap="large")
    with left:
        st.markdown(f"**The prompt's examples** · base P(LF0) {fmt_prob(inf.base(version))}")
        st.caption("In the figure's order: ⇄ marks a change that turns the preferred reading (listed first), "
                   "then the largest change; the number is the example's place in the prompt.")
        for e in inf.ranked(change, version):
            shown = "plain" if e.label is None else f"LF{e.label}"
            d = e.delta(change, version)
            turn = " · ⇄" if inf.turns(e, change, version) else ""
            st.markdown(f"{e.index + 1}. {plain(e.utterance)} · *{shown}* · Δ {'–' if d is None else f'{d:+.3f}'}"
                        f"{turn}")
    with right:
        chart(influence_plots.influence_bars(inf, change, version), key="pi_influence_bars",
              filename="example_influence")
    chart(influence_plots.influence_by_position(inf, change, version), key="pi_influence_position",
          filename="influence_by_position")
    csv_download(influence_plots.influence_frame(inf), "example_influence.csv", key="pi_influence_csv")
