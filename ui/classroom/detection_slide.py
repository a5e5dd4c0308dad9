"""The lesson's slide "Does the model know a sentence is ambiguous?" (issue #43 point 4; docs/paper-notes.md §22).

Its numbers are the Research page's measurement of this session (:mod:`ui.inspection.detection_view`
keeps the last report under :data:`~ui.inspection.detection_view.DETECTION_KEY`): the teacher
measures once there, and the Presentation's deck ends with this slide (a sidebar checkbox, on by
default, takes it out).  Without a measurement the slide is not offered; the sidebar says where
to measure.  Nothing is ever made up: every number on the slide is the report's, with its 95 %
interval, its n, the model and the settings it came from.

The words are for a class: the question, then what the data answers — the most telling of the
model's uncertainty signals against chance (:func:`amp.detection.report.against_chance`), the best
layer's probe against chance and against a probe that reads only the sentence's words
(:func:`amp.detection.report.probe_beats_words`) — and a bar chart of those AUROCs
(:func:`amp.reporting.detection_plots.auroc_bars`) whose box follows the window's height.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import streamlit as st

from amp.detection import saved
from amp.detection.errors import DetectionError
from amp.detection.hidden_states import Pooling
from amp.detection.report import (
    Chance,
    DetectionReport,
    against_chance,
    best_signal,
    probe_beats_words,
)
from amp.detection.signals import Signal
from amp.reporting.detection_plots import AurocBar, BarKind, auroc_bars, short_model
from ui.inspection.detection_view import DETECTION_KEY
from ui.shared.common import chart, plain

__all__ = ["CHART_BOX", "NAV_LABEL", "TITLE", "TOGGLE_KEY", "SlideText", "chosen_report", "show", "sidebar_choice", "slide_bars",
           "slide_text"]

#: The slide's heading (the question a class asks).
TITLE = "Does the model know a sentence is ambiguous?"
#: The slide's name in the Presentation's position caption ("6 / 6 · …").
NAV_LABEL = "Does the model know it is ambiguous?"
#: session_state key of the sidebar checkbox that puts the slide at the end of the deck.
TOGGLE_KEY = "present_detection"
#: Key of the box the slide's chart fills; the page's CSS gives it a height that follows the window.
CHART_BOX = "projector_detection_box"
#: The slide's styles: the question in the sentence's large type (a heading, so Streamlit's own
#: heading size is overruled), and the chart's box, taller than the vote chart's (no sentence nor
#: readings above it) and still whole, with the captions under it, in full screen at 1280×720.
SLIDE_CSS = (
    '[data-testid="stMain"] h2.present-q{font-size:clamp(1.8rem,min(3vw,5.4vh),4.4rem) !important;'
    "font-weight:700;line-height:1.15;padding:.3rem 0 .5rem}"
    f' .st-key-{CHART_BOX},[data-testid="stLayoutWrapper"]:has(> .st-key-{CHART_BOX})'
    "{height:clamp(190px,33vh,620px) !important;min-height:clamp(190px,33vh,620px) !important;"
    "max-height:clamp(190px,33vh,620px) !important;flex:0 0 auto !important}"
)

#: A signal's name short enough for a bar's label on the projector (its whole name is in the answer).
_SHORT_SIGNAL = {Signal.SEMANTIC_ENTROPY: "semantic entropy", Signal.MARGIN_MIN_TOKEN: "|P − 0.5|, min-token",
                 Signal.MARGIN_TOTAL: "|P − 0.5|, total", Signal.TOP2_GAP: "top-2 gap"}
_POOLING_WORDS = {Pooling.LAST: "the sentence's last token", Pooling.MEAN: "the mean over the sentence's tokens"}


def chosen_report() -> DetectionReport | None:
    """The Research page's last report of this session, else the last one kept on disk (so the slide
    survives a reload or a restart), or ``None``; a damaged file is said in the sidebar."""
    stored = st.session_state.get(DETECTION_KEY)
    if stored:
        return stored["report"]
    try:
        return saved.load_latest()
    except DetectionError as exc:
        st.warning(plain(str(exc)), icon=":material/warning:")
        return None


def sidebar_choice() -> DetectionReport | None:
    """In the sidebar: with a report, a checkbox (on by default) that ends the deck with the slide, and
    the report when it is on; without one, where to measure it (no slide)."""
    report = chosen_report()
    if report is None:
        st.caption(f"A last slide, “{TITLE}”, shows the model's answer once it is measured on the Research "
                   "page (section “Does the model know it is ambiguous?”).")
        st.page_link("views/research.py", label="Measure it on the Research page", icon=":material/troubleshoot:")
        return None
    on = st.checkbox(f"Last slide: “{TITLE}”", value=True, key=TOGGLE_KEY,
                     help="The Research page's last measurement (kept on disk, so a reload keeps it), in words for a class, "
                          "with a chart.")
    return report if on else None


@dataclass(frozen=True)
class SlideText:
    """The slide's words: ``signals`` and ``probe`` the two answers (one sentence each), ``source``
    where the numbers came from; each plain text."""

    signals: str
    probe: str
    source: str


def _signals_answer(report: DetectionReport) -> str:
    found = best_signal(report)
    if found is None:
        return "Its uncertainty was not measured this time (tick “Uncertainty signals” on the Research page)."
    signal, kind, interval = found
    said = {Chance.AT: "does not tell ambiguous sentences from unambiguous ones",
            Chance.ABOVE: "tells ambiguous sentences from unambiguous ones better than chance",
            Chance.BELOW: "points the wrong way (it is surer of the ambiguous sentences)"}[against_chance(interval)]
    pairs = len(report.signals.prompts) * len(Signal) if report.signals is not None else 0  # best_signal's choice
    return (f"Its uncertainty {said}: AUROC {interval.text()}; 0.5 is chance "
            f"(the most telling of {pairs} signals and prompts: {signal.label}, {kind} prompt).")


def _probe_answer(report: DetectionReport) -> str:
    probes = report.probes
    best = probes.best() if probes is not None else None
    if probes is None or best is None:
        return ("Its hidden states were not probed this time (the probes need the transformers engine; "
                "tick “Probes on hidden states” on the Research page).")
    side = against_chance(best.auroc)
    if side is not Chance.ABOVE:
        verdict = "no better than chance"
    elif probe_beats_words(probes):
        verdict = "better than the words themselves"
    else:
        verdict = "but no better than the words themselves"
    layers, poolings = len({r.layer for r in probes.results}), len({r.pooling for r in probes.results})
    return (f"A probe reading its hidden states at layer {best.layer} ({_POOLING_WORDS[best.pooling]}) scores AUROC "
            f"{best.auroc.text()} — {verdict} (a probe on the sentence's words alone: {probes.words.text()}). "
            f"Best of {len(probes.results)} probes ({layers} layers, {poolings} ways each), chosen on the test "
            "sentences: a generous figure.")


def slide_text(report: DetectionReport) -> SlideText:
    """The slide's words for ``report`` (module docstring)."""
    prompts = ", ".join(str(k) for k in report.signals.prompts) if report.signals is not None else "none"
    source = (f"Measured on the Research page in this session: model {short_model(report.model)} · "
              f"{report.n_train + report.n_test} sentences of {len(report.types)} types, half ambiguous "
              f"({report.per_type} per type and class; {report.n_test} test sentences use only held-out words) · "
              f"seed {report.seed} · prompts: signals {prompts}"
              + ("; probes zero-shot" if report.probes is not None else "") + " · 95 % bootstrap intervals.")
    return SlideText(signals=_signals_answer(report), probe=_probe_answer(report), source=source)


def slide_bars(report: DetectionReport) -> list[AurocBar]:
    """The chart's bars, the answers' numbers: the most telling uncertainty signal, the best probe,
    its shuffled-label control and the bag-of-words probe (four bars stay readable at 1280×720)."""
    bars: list[AurocBar] = []
    found = best_signal(report)
    if found is not None:
        signal, kind, interval = found
        bars.append(AurocBar(f"uncertainty: {_SHORT_SIGNAL[signal]} ({kind})", interval, BarKind.SIGNAL))
    best = report.probes.best() if report.probes is not None else None
    if report.probes is not None and best is not None:
        bars += [AurocBar(f"probe, layer {best.layer}", best.auroc, BarKind.PROBE),
                 AurocBar(f"probe, labels shuffled (layer {best.layer})", best.shuffled, BarKind.CONTROL),
                 AurocBar("probe on the words alone", report.probes.words, BarKind.CONTROL)]
    return bars


def show(report: DetectionReport) -> None:
    """The slide: the question as a heading, the two answers in large type, the chart, the source."""
    text = slide_text(report)
    st.html(f"<style>{SLIDE_CSS}</style>")  # style only: takes no space
    st.markdown(f"<h2 class='present-q'>{html.escape(TITLE)}</h2>", unsafe_allow_html=True)
    for line in (text.signals, text.probe):
        st.markdown(f"<div class='present-r'>{html.escape(line)}</div>", unsafe_allow_html=True)
    bars = slide_bars(report)
    summary = "The bars, AUROC [95 % interval]: " + "; ".join(f"{b.label} {b.auroc.text()}" for b in bars) + "."
    with st.container(key=CHART_BOX, height=300, border=False):  # CSS sets the height
        chart(auroc_bars(bars), key="present_detection_chart", filename="ambiguity_detection_slide",
              height="stretch", html_download=False, summary=summary, summary_beside=True)
    st.caption(plain(summary))
    st.caption(plain(text.source))
