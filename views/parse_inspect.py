"""Parse & inspect: the beams, P(LF0), and where (and how confidently) the two readings diverge."""

from __future__ import annotations

import streamlit as st

from amp.evaluation.divergence_headline import divergence_headline
from amp.evaluation.inspection import Inspection, inspect
from amp.evaluation.p_lf0_measures import PLf0Measure
from amp.evaluation.semantic_divergence import inspection_semantic
from amp.logic.vocabulary import MODES
from amp.parser.search.settings import SearchSettings
from amp.reporting import plots
from amp.reporting.readings_heatmap import FIG4_CAPTION, readings_heatmap
from amp.reporting.token_plots import MARKS
from amp.teaching import lesson
from ui.inspection.attribution_view import attribution_section
from ui.inspection.beam_table_view import show_beam_table
from ui.inspection.beam_tree_view import beam_tree_section
from ui.inspection.influence_view import contrast_section, influence_section
from ui.inspection.inspect_view import (
    MARK_NAMES,
    P_AT_DIVERGENCE_HOW,
    custom_lf_section,
    divergence_sentence,
    heatmap_labels,
    match_name,
    normalised_lf,
    scored_spelling_note,
    semantic_sentence,
    verdict_of,
)
from ui.inspection.parse_progress import ParseAsk, cancelled_note, run_parse
from ui.model import choice as model_choice
from ui.model import parsers
from ui.own import examples as own_examples
from ui.shared import readings, settings_widgets
from ui.shared.common import chart, csv_download, fmt_prob, plain
from ui.shared.halt import halt
from ui.shared.meaning_view import beam_meanings
from ui.shared.prompt_state import current_prompt

KEY = "inspection"

st.title("Parse & inspect")
readings.logic_toggle()
prompt, built = current_prompt()
fmt = prompt.lf_format
if not built:
    st.info("No prompt built yet, so this is the default: PP attachment, 3 of 10 examples shown with LF0 "
            "(r = 0.3). Build your own in the Prompt builder.", icon=":material/info:")
st.markdown(f"## Test sentence: *{plain(prompt.test_utterance)}*")  # h2 under the h1 (headings in order)
own_examples.used_caption(prompt.test_utterance)  # an own sentence: which examples (issue #26 point 6)
with st.expander(f"The prompt ({len(prompt.examples)} examples, LF0 fraction "
                 f"{'–' if prompt.lf0_fraction is None else f'{prompt.lf0_fraction:.0%}'})"):
    st.code(prompt.render(), language=None, wrap_lines=True)

c1, c2, c3, c4 = st.columns([0.8, 2.1, 1.4, 1.2], vertical_alignment="bottom")
beams = settings_widgets.beams_input(c1, "pi_beams", label="Beams k")
prob = c2.segmented_control("Token probability", ["raw", "grammar"], default="raw", required=True,
                            key="pi_prob", persist_state="session",
                            format_func=lambda p: "raw model" if p == "raw" else "grammar-renormalised",
                            help="raw: softmax over the whole vocabulary (the paper's forced decode); "
                                 "grammar: renormalised over the tokens the grammar allows.")
mode = c3.segmented_control("Match", list(MODES), default=MODES[0], required=True, key="pi_mode",
                            persist_state="session", help="Canonicaliser used to label beams LF0/LF1.")
run = c4.button("Parse", type="primary", icon=":material/play_arrow:", key="pi_parse")

text = prompt.render()
has_gold = prompt.gold_lf0 is not None and prompt.gold_lf1 is not None
own_words = prompt.words  # a teacher's own sentence: its own words extend the decoding grammar
# the result belongs to the model that computed it: spec, engine and precision (or the parser server)
key = (model_choice.current_server(), model_choice.current_choice().key, text, beams, fmt, mode,
       prompt.gold_lf0, prompt.gold_lf1, own_words)
cancelled_note("pi_parse")  # stage, elapsed time and Cancel while a parse runs: ui/inspection/parse_progress.py
if run:
    search = SearchSettings(beams=beams)
    parser = parsers.get_parser()
    if parser is not None:
        if has_gold:
            result = run_parse(parser, "Parsing with grammar-constrained beam search and scoring both LFs…",
                               lambda p: inspect(p, text, prompt.gold_lf0, prompt.gold_lf1, search,
                                                 fmt=fmt, canonical_mode=mode, words=own_words), key="pi_parse",
                               ask=ParseAsk(text, search, prompt.gold_lf0, prompt.gold_lf1, fmt, own_words))
        else:
            result = run_parse(parser, "Parsing with grammar-constrained beam search…",
                               lambda p: p.parse(text, search, fmt=fmt, words=own_words), key="pi_parse",
                               after="Reading the beams", ask=ParseAsk(text, search, fmt=fmt, words=own_words))
        if result is not None:
            st.session_state[KEY] = {"key": key, "result": result}
stored = st.session_state.get(KEY)
if stored is None or stored["key"] != key:
    st.caption("Press **Parse** to run the model on this prompt." if stored is None else
               "The prompt or settings changed since the last parse: press **Parse** to update.")
    halt()

result = stored["result"]
parse = result.parse if isinstance(result, Inspection) else result
if not has_gold:
    st.warning("The test sentence has no gold LFs, so beams are not labelled and P(LF0) is not computed.")
    show_beam_table(plots.beam_table(parse, None, None, mode, fmt=fmt))
    halt()

ins = result
pair = ins.pair
m1, m2, m3, m_total, m4 = st.columns(5)
m1.metric("Top beam matches", match_name(ins.predicted_match),
          help="Canonical match of the best beam against the two gold LFs; neither = another formula.")
for col, measure in ((m2, PLf0Measure.PARTED), (m3, PLf0Measure.PAPER), (m_total, PLf0Measure.TOTAL)):
    col.metric(measure.label, fmt_prob(measure.of(pair)), help=measure.how)  # the verdict's measure first (#40)
if pair.shared_minimum is not None:  # the paper's measure is pinned at 0.5 by a token both readings share
    m3.caption(plain(f"Pinned at {pair.p_lf0:.2f}: both readings' least likely token is “{pair.shared_minimum}”, "
                     "which they share. The verdict compares the readings where they part."))
div = ins.divergence
headline = divergence_headline(ins, grammar=prob == "grammar")  # issue #40 point 4: by meaning first
m4.metric("p at divergence", fmt_prob(headline.prob), help=P_AT_DIVERGENCE_HOW)
readings.show_verdict(verdict_of(ins, lesson.sentence_item(prompt.test_utterance)))  # issue #26 point 5
st.markdown(divergence_sentence(headline), unsafe_allow_html=True)
spoken = lesson.pool_pair(prompt.test_utterance)
own = lesson.own_sentence(prompt.test_utterance) if spoken is None else None
item = lesson.sentence_item(prompt.test_utterance) if own is not None else None  # its own names and words
if own is not None:
    spoken = own.pair()
if spoken is not None and spoken.lf0.lf == ins.lf0 and spoken.lf1.lf == ins.lf1:
    top = ins.predicted.text if ins.predicted is not None else None
    st.markdown(f"**The model's parse in words:** {plain(lesson.explain_parse(spoken, top, fmt=fmt, item=item))}")

chart(readings_heatmap(ins, prob=prob), key="pi_fig4", filename="parse_and_readings", width="content")
st.caption(FIG4_CAPTION)  # issue #26 point 4: the paper's Fig. 4 view
with st.expander("Debugging: the parse against the other reading, and LF0 against LF1", icon=":material/bug_report:"):
    alt_label = heatmap_labels(ins)[1]
    mark = st.segmented_control("Mark", list(MARKS), default="semantic", required=True, key="pi_mark",
                                persist_state="session", format_func=MARK_NAMES.__getitem__,
                                help="token: the first token where the model's parse leaves the other reading; "
                                     "semantic: the first conjunct or quantifier where the two differ in meaning.")
    sem = inspection_semantic(ins)
    fig = plots.token_heatmap(ins.predicted_steps, ins.alternative_steps, divergence=div, prob=prob, align=True,
                              semantic=sem, mark=mark,
                              labels=(heatmap_labels(ins)[0], alt_label))
    chart(fig, key="pi_heatmap", filename="token_confidence", width="content")
    st.markdown(semantic_sentence(sem, ins))
    st.caption("Top row of each block: the model's best parse, each token coloured by its probability (scale on "
               "the right). Below it: the other reading, force-decoded; after the first differing token, equal "
               "tokens are aligned in one column (empty cells: a token the other row lacks). Solid black box: the "
               "first token where they differ; dashed box: the items where their meanings differ. Hover a cell for "
               "the whole token and the top alternative tokens.")
    contrast_section(ins, prob)

st.subheader("Beams")
table = plots.beam_table(ins.parse, ins.lf0, ins.lf1, mode, fmt=fmt)
show_beam_table(table)
beam_meanings(ins.parse, ins.lf0, ins.lf1, mode, fmt)
csv_download(table, "beams.csv", key="pi_beams_csv")
beam_tree_section(parsers.get_parser, ins, prob, words=own_words)

g0, g1 = st.columns(2)
words = lesson.readings_in_words(prompt.test_utterance)
gold_pair = lesson.pool_pair(prompt.test_utterance) or (own.pair() if own is not None else None)
kind = gold_pair.type if gold_pair is not None else None
for i, (col, name, lf, score) in enumerate(((g0, "LF0", ins.lf0, pair.lf0), (g1, "LF1", ins.lf1, pair.lf1))):
    col.markdown(f"**Gold {name}** · min-token p = {fmt_prob(score.min_prob, 4)} · "
                 f"log P = {score.sum_logprob:.2f}")
    col.markdown(readings.reading_line(kind, i, words[i] if words else None, item.reading_name(i) if item else None))
    if not readings.logic_hidden():
        col.code(lf, language=None, wrap_lines=True)
if (note := scored_spelling_note(own)) is not None:  # issue #26: which spelling was scored
    st.caption(note)

influence_section(prompt)
attribution_section(prompt)

st.subheader("Score your own LF")
custom_lf_section(text, fmt, ins, prob, normalise=normalised_lf, words=own_words, sentence=prompt.test_utterance)
