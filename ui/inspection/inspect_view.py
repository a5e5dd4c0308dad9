"""Pieces of the Parse & inspect page: wording of matches and divergence, the custom-LF scorer."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import streamlit as st

from amp.evaluation.divergence_headline import DivergenceHeadline, HeadlinePart
from amp.evaluation.semantic_divergence import SAME_MEANING
from amp.evaluation.verdict import Verdict, score_verdict
from amp.logic.errors import LFParseError
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.prompt_convention import REORDERED_NOTE, conjuncts_reordered
from amp.logic.prompt_convention import prompt_text as lf_prompt_text
from amp.parser.core.limits import MAX_LF_CHARS
from amp.parser.search.divergence import divergence
from amp.reporting import plots
from amp.teaching.poll_records import PollItem
from ui.model import actions, parsers
from ui.shared.common import chart, fmt_prob, lf_error_text, plain

CUSTOM_KEY = "custom_score"


def verdict_of(ins: Any, item: PollItem | None = None) -> Verdict:
    """The verdict on an inspection (:func:`amp.evaluation.verdict.score_verdict`): what the top beam
    is, then which reading the forced scores favour where the readings part; in the sentence's reading names and
    paraphrases when ``item`` (:func:`amp.teaching.lesson.sentence_item`) has them."""
    names = (item.reading_name(0), item.reading_name(1)) if item is not None else None
    texts = (item.paraphrase0, item.paraphrase1) if item is not None else None
    return score_verdict(ins.predicted_match, ins.pair, names=names, paraphrases=texts)


def match_name(match: str | None) -> str:
    """A match label in the app's words (:data:`amp.reporting.plots.MATCH_NAMES`: ``lf0`` → ``LF0``,
    ``neither`` → ``neither reading``, …)."""
    return plots.MATCH_NAMES.get(str(match), str(match))  # type: ignore[call-overload]


def _runs(parts: tuple[HeadlinePart, ...]) -> str:
    return "".join(f"<code>{html.escape(p.text, quote=False)}</code>" if p.code else html.escape(p.text, quote=False)
                   for p in parts)


def divergence_sentence(headline: DivergenceHeadline) -> str:
    """HTML for ``st.markdown(..., unsafe_allow_html=True)``: where the readings part in meaning
    (bold), then the model's token there (:mod:`amp.evaluation.divergence_headline`); every run
    escaped, LF items and tokens as code, so model and teacher text is shown as typed."""
    lines = [f"<strong>{_runs(headline.meaning)}</strong>" if headline.meaning else "", _runs(headline.tokens)]
    return f"<div class='amp-headline'>{'<br>'.join(line for line in lines if line)}</div>"


#: What the page's "p at divergence" metric shows (:attr:`DivergenceHeadline.prob`).
P_AT_DIVERGENCE_HOW = ("Probability of the model's token where its parse parts in meaning from the other reading "
                       "(the first token of the item that differs, never a variable name); when the meanings cannot "
                       "be compared, of the first token where the parse leaves the other reading.")


#: The heatmap's marks in the page's words (:data:`amp.reporting.token_plots.MARKS`).
MARK_NAMES = {"token": "where the model commits (token)", "semantic": "where the meanings differ (semantic)",
              "both": "both"}
_SHORT = {"lf0": "LF0", "lf1": "LF1", "both": "both"}


def heatmap_labels(ins: Any) -> tuple[str, str]:
    """Short row labels (at most 14 characters): ``predicted LF1`` and ``forced LF0``; a parse that
    is neither reading is just ``predicted`` (the metric above names it)."""
    return (f"predicted {_SHORT.get(ins.predicted_match, '')}".strip(),
            f"forced {_SHORT.get(ins.alternative, '')}".strip())


def semantic_sentence(sem: Any, ins: Any) -> str:
    """Plain text under the heatmap: where the readings differ in meaning (the items of
    :func:`amp.evaluation.semantic_divergence.inspection_semantic`, model text shown as typed)
    and where the model's tokens part."""
    other = match_name(ins.alternative)
    if sem is None:
        meaning = (f"The model's parse and the {other} reading: {SAME_MEANING} (they differ at most in "
                   "variable names or the order of conjuncts or same-kind quantifiers)")
    else:
        a = sem.a.text if sem.a is not None else "nothing"
        b = sem.b.text if sem.b is not None else "nothing"
        meaning = f"The readings differ in meaning at {a} versus {b} ({sem.description})"
    if ins.predicted is None or ins.predicted_match == "unparseable":
        return plain(f"{meaning}; the model's parse is not a well-formed LF, so only the "
                     f"{other} reading's row is marked.")
    div = ins.divergence
    if div is None or div.index is None:
        return plain(f"{meaning}; the model's tokens do not part from the {other} reading.")
    ta = "the end" if div.token_a is None else repr(div.token_a.strip() or div.token_a)
    tb = "the end" if div.token_b is None else repr(div.token_b.strip() or div.token_b)
    return plain(f"{meaning}; the model's tokens part at token {div.index} ({ta} versus {tb}).")


def scored_spelling_note(own: Any) -> str | None:
    """A caption for an own sentence whose readings were typed with other letters or another
    quantifier order: they are scored as the prompts spell LFs (docs/paper-notes.md §16)."""
    if own is None or own.readings == own.typed_readings:
        return None
    reordered = any(conjuncts_reordered(lf, "fol", own.surface) for lf in own.typed_readings)
    return ("The gold LFs are scored as the prompts spell LFs (x, y, z for things and people, a, e, i for events, "
            "quantifiers in the templates' order), not as typed: "
            + " · ".join(plain(lf) for lf in own.typed_readings) + (f". {REORDERED_NOTE}" if reordered else ""))


def normalised_lf(text: str, fmt: str, sentence: str | None = None) -> str:
    """A typed LF checked and rewritten as the prompts spell LFs: the data's exact spacing, entity
    variables x, y, z and event variables a, e, i in the templates' order, conjuncts in the pools'
    order with ``sentence`` (the prompt's test sentence) deciding the ties (docs/paper-notes.md §16;
    raises LFParseError)."""
    return lf_prompt_text(text.strip(), fmt, sentence)


def custom_lf_section(prompt_text: str, fmt: str, ins: Any, prob: str,
                      *, normalise: Callable[[str, str, str | None], str] = normalised_lf,
                      words: OwnWords = NO_WORDS, sentence: str | None = None) -> None:
    """A form to force-decode any LF under the prompt and compare it with the predicted parse."""
    with st.form("pi_custom_form", border=False):
        typed = st.text_area(f"Any LF in {fmt.upper()} (lenient spacing is fine)", key="pi_custom",
                             persist_state="session", height=90, placeholder=ins.alternative_lf,
                             max_chars=MAX_LF_CHARS)
        submitted = st.form_submit_button("Score this LF", icon=":material/functions:")
    if submitted:
        if not typed.strip():
            st.error("Type an LF to score first.", icon=":material/error:")
            return
        try:
            lf = normalise(typed, fmt, sentence)
            reordered = conjuncts_reordered(typed.strip(), fmt, sentence)
        except LFParseError as exc:
            st.error(lf_error_text(exc), icon=":material/error:")
            return
        parser = parsers.get_parser()
        if parser is None:
            return
        scores = actions.compute(parser, "Force-decoding your LF…", lambda p: p.score(prompt_text, [lf], fmt=fmt, words=words))
        if scores:
            st.session_state[CUSTOM_KEY] = {"prompt": prompt_text, "lf": lf, "score": scores[0], "reordered": reordered}
    stored = st.session_state.get(CUSTOM_KEY)
    if not stored or stored["prompt"] != prompt_text:
        return
    score = stored["score"]
    m0, m1, m = ins.pair.lf0.min_prob, ins.pair.lf1.min_prob, score.min_prob
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("min-token p", fmt_prob(m, 4))
    c2.metric("log P", f"{score.sum_logprob:.2f}")
    c3.metric("vs LF0: m / (m + m0)", fmt_prob(m / (m + m0) if m + m0 > 0 else None))
    c4.metric("vs LF1: m / (m + m1)", fmt_prob(m / (m + m1) if m + m1 > 0 else None))

    div = divergence(ins.predicted_steps, score.steps)
    fig = plots.token_heatmap(ins.predicted_steps, score.steps, divergence=div, prob=prob,
                              labels=(f"predicted: {match_name(ins.predicted_match)}", "your LF (forced)"),
                              title="Your LF against the predicted parse")
    chart(fig, key="pi_custom_heatmap", filename="custom_lf_confidence")
    st.caption(f"Scored as the prompts spell it (x, y, z / a, e, i): `{stored['lf']}`"
               + (f" {REORDERED_NOTE}" if stored.get("reordered") else ""))
