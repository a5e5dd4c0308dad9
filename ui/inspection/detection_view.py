"""Research: "Does the model know it is ambiguous?" — ambiguity detection from the model's
uncertainty signals and from linear probes on its hidden states (issue #43; docs/paper-notes.md §22),
on request.

Widget glue only: the report from :func:`amp.detection.report.detection_report` (its signals and
probes each cached by the parser), the figures from :mod:`amp.reporting.detection_plots`.  The run
shows one bar per step (signals, then probes) and one Cancel; the last report of the session is
kept per model and settings, so the page's other widgets redraw it without the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from amp.detection import saved
from amp.detection.dataset import DEFAULT_PER_TYPE
from amp.detection.hidden_states import Pooling
from amp.detection.report import CSV_COLUMNS, DetectionReport, detection_report, probe_beats_words, report_rows
from amp.detection.signals import PromptKind, Signal
from amp.parser import engines
from amp.reporting.detection_plots import probe_layer_figure, roc_figure
from ui.model import actions, parsers
from ui.model import choice as model_choice
from ui.model.use import rerun_requested
from ui.shared.common import chart, csv_download, plain

DETECTION_KEY = "det_report"
#: The most sentences per type and class the section offers (each is a search and a forward pass).
MAX_PER_TYPE = 200
_STEPS = {"signals": "sentences searched and scored", "probes": "forward passes, then probe fits"}


@dataclass(frozen=True)
class _Ask:
    """What the user asked for: the model choice's key and the run's settings."""

    model: tuple[Any, ...]
    per_type: int
    seed: int
    signals: bool
    probes: bool


def _probes_need_states() -> bool:
    """Whether the sidebar's engine gives no per-layer states: then the section says so and offers,
    one click away, the transformers engine (the same model, exactly)."""
    engine = model_choice.current_engine()
    if engine == engines.TRANSFORMERS:
        return False
    st.info(f"The probes read every layer's hidden states, which the {engine} engine does not give (llama.cpp's "
            f"embeddings API returns the last layer only). The {engines.TRANSFORMERS} engine runs the same model "
            "exactly (float32, slower).", icon=":material/info:")
    st.button(f"Use {engines.TRANSFORMERS}", key="det_exact", on_click=model_choice.set_engine,
              args=(engines.TRANSFORMERS,), icon=":material/swap_horiz:")
    return True


def _compute(slot: Any, ask: _Ask) -> DetectionReport | None:
    """The report on the sidebar's model, computed in ``slot`` (a bar per step, one Cancel)."""
    parser = parsers.get_parser()
    if parser is None:
        return None
    with slot.container():
        bar = st.progress(0.0, text="Starting…")
        st.button("Cancel", key="det_cancel", icon=":material/stop:",
                  help="Stops the model after the sentence or probe it is on (finished searches stay cached).")

        def progress(step: str, done: int, total: int) -> None:
            bar.progress(done / total if total else 1.0, text=f"{step}: {done} of {total} {_STEPS.get(step, '')}")

        report = actions.compute(parser, "Measuring how well the model detects ambiguity…", lambda p: detection_report(
            p, seed=ask.seed, per_type=ask.per_type, signals=ask.signals, probes=ask.probes, progress=progress,
            cancelled=rerun_requested))
    if report is not None:
        slot.empty()
    return report


def detection_section() -> None:
    """The section: settings, a button, and once computed the probes' curve and the signals' ROC."""
    st.header("Does the model know it is ambiguous?")
    st.caption("Ambiguous sentences of the five types against unambiguous ones built from the same kinds of words "
               "(balanced; the test sentences use only held-out words). Two ways to ask: does an **uncertainty "
               "signal** of the model's search separate them (AUROC), and does a **linear probe** on one layer's "
               "hidden states, trained on the training words, detect ambiguity on the held-out ones — beside two "
               "controls: labels shuffled (chance) and a bag-of-words probe on the sentence alone.")
    c1, c2, c3 = st.columns(3)
    per_type = int(c1.number_input("Sentences per type and class", 5, MAX_PER_TYPE, DEFAULT_PER_TYPE,
                                   key="det_per_type", help="ambiguous and as many unambiguous, per type"))
    seed = int(c2.number_input("Seed (the split and the resamples)", 0, 2**31 - 1, 0, key="det_seed"))
    signals = c3.checkbox("Uncertainty signals", value=True, key="det_signals")
    probes = c3.checkbox("Probes on hidden states", value=True, key="det_probes")
    if probes and _probes_need_states():
        probes = False
    ask = _Ask(model_choice.current_choice().key, per_type, seed, signals, probes)
    stored = st.session_state.get(DETECTION_KEY)
    have = stored is not None and stored["ask"] == ask
    run = st.button("Measure", key="det_run", icon=":material/troubleshoot:",
                    disabled=have or not (signals or probes))
    slot = st.empty()  # always there: the figures below keep their places across runs
    if run:
        report = _compute(slot, ask)
        if report is not None:
            st.session_state[DETECTION_KEY] = {"ask": ask, "report": report}
            have, stored = True, st.session_state[DETECTION_KEY]
            try:  # the lesson's last slide reads it, also after a reload
                saved.save_latest(report)
            except OSError as exc:
                st.warning(f"This measurement could not be kept for the lesson's slide: {plain(exc.strerror or exc)}",
                           icon=":material/warning:")
    if have and stored is not None:
        show(stored["report"])


def _probe_summary(report: DetectionReport) -> str:
    probes = report.probes
    best = probes.best() if probes is not None else None
    if probes is None or best is None:
        return "No probe results."
    pooling = "last sentence token" if best.pooling is Pooling.LAST else "mean over the sentence's tokens"
    beats = probe_beats_words(probes)
    return (f"Best probe: layer {best.layer} ({pooling}), AUROC {best.auroc.text()}; labels shuffled there "
            f"{best.shuffled.text()}; bag of words {probes.words.text()} — the probe "
            f"{'beats' if beats else 'does not clearly beat'} the words alone.")


def show(report: DetectionReport) -> None:
    """The computed report: the probe curve, the signals' ROC per prompt, the AUROC table and its CSV."""
    st.caption(f"{report.n_train} training and {report.n_test} test sentences (seed {report.seed}, "
               f"{len(report.held_out)} held-out words).")
    if report.probes is not None:
        chart(probe_layer_figure(report.probes), key="det_probe_chart", filename="ambiguity_probes",
              summary=_probe_summary(report))
    if report.signals is not None:
        kinds = list(report.signals.prompts)
        kind = st.radio("Prompt of the signals", kinds, horizontal=True, key="det_prompt",
                        format_func=lambda k: {PromptKind.ZERO_SHOT: "zero-shot", PromptKind.MIXED: "mixed"}.get(k, k))
        curves = {s.label: report.signals.scores(s, kind) for s in Signal}
        chart(roc_figure(curves, subtitle=f"{kind} prompt · every sentence · higher score = more ambiguous"),
              key="det_roc_chart", filename=f"ambiguity_signals_{kind}")
    rows = pd.DataFrame(report_rows(report), columns=list(CSV_COLUMNS))
    st.dataframe(rows, hide_index=True, key="det_table")
    csv_download(rows, "ambiguity_detection.csv", label="AUROCs CSV", key="det_csv")
