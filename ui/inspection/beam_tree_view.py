"""The "Beam tree" section of Parse & inspect (issue #15 point 3): where the beams part, and how sure the model was.

The tree itself is :func:`amp.evaluation.beam_tree.beam_tree_of` (one forced pass per beam for its
token probabilities, cached by the parser) and its figure :func:`amp.reporting.beam_tree_plot.beam_tree_figure`.
The tree of the session's stored inspection is kept in ``st.session_state[KEY]``, so switching the
view or the probability kind redraws without asking the model again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from amp.evaluation.beam_tree import BEAM_TREE_COLUMNS, BeamTree, beam_tree_of, compress, tree_rows
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.reporting.beam_tree_plot import beam_tree_figure
from ui.model import actions
from ui.shared.common import chart, csv_download

if TYPE_CHECKING:
    from amp.evaluation.inspection import Inspection
    from amp.parser import Parser

#: session_state key: {"ins": the inspection the tree is of, "words": its own words, "tree": the full tree}.
KEY = "beam_tree"
#: The two views of the tree (segmented control ``pi_tree_view``).
VIEWS = {"compressed": "compressed (shared runs merged)", "full": "full (one node per token)"}


def _stored(ins: Inspection, words: OwnWords) -> BeamTree | None:
    stored = st.session_state.get(KEY)
    if stored is not None and stored["ins"] is ins and stored["words"] == words:
        return stored["tree"]
    return None


def _tree(parser_getter: Callable[[], Parser | None], ins: Inspection, words: OwnWords) -> BeamTree | None:
    """The full tree of ``ins``: the stored one if it is of this very inspection, else computed now."""
    stored = _stored(ins, words)
    if stored is not None:
        return stored
    parser = parser_getter()
    if parser is None:
        return None
    tree = actions.compute(parser, "Scoring every beam's tokens for the beam tree…",
                            lambda p: beam_tree_of(p, ins, words=words))
    if tree is not None:
        st.session_state[KEY] = {"ins": ins, "words": words, "tree": tree}
    return tree


def beam_tree_section(parser_getter: Callable[[], Parser | None], ins: Inspection, prob: Any, *,
                      words: OwnWords = NO_WORDS) -> None:
    """The beam tree of ``ins`` (full or compressed), its PNG/HTML export and its nodes as CSV.

    ``prob`` is the page's token-probability choice (``"raw"`` or ``"grammar"``); ``words`` the own
    words the parse used.  The beams' token probabilities need the model (cached): computed when
    the teacher asks for the tree of an inspection (a button), so a parse costs no extra passes.
    """
    st.subheader("Beam tree")
    if not ins.parse.beams:
        st.info("The model produced no beam, so there is no tree to draw.", icon=":material/info:")
        return
    slot = st.empty()  # the request and the model's status box: emptied once drawn, so the figure keeps its place
    tree = _stored(ins, words)
    if tree is None:
        with slot.container():
            more = len(ins.parse.beams) - 1
            st.caption(f"Where the {len(ins.parse.beams)} beams part, and how sure the model was at each token. "
                       f"It scores every beam's tokens: {more} more forced pass(es) over the prompt (cached), so it "
                       "is drawn on request.")
            if not st.button("Draw the beam tree", key="pi_tree_run", icon=":material/account_tree:"):
                return
            tree = _tree(parser_getter, ins, words)
        if tree is None:
            return  # the error stays in the slot
        slot.empty()
    view = st.segmented_control("Tree", list(VIEWS), default="compressed", required=True, key="pi_tree_view",
                                persist_state="session", format_func=VIEWS.__getitem__,
                                help="compressed: every run of tokens that the beams on a branch share is one "
                                     "branch (its probability the product of its tokens'); full: one node per token.")
    shown = compress(tree) if view == "compressed" else tree
    chart(beam_tree_figure(shown, prob=prob), key="pi_beam_tree", filename="beam_tree")
    st.caption("Each path from the grey square to a large marker is one beam, best on top; beams share a branch "
               "while they share tokens, and a diamond marks where they part. A node's colour is the probability "
               "of its token(s) given everything before (the Token probability setting above); the end's colour "
               "is the beam's reading (LF0 blue, LF1 orange, purple: LF0 = LF1, grey: neither reading, grey cross: unparseable). "
               "Hover a node for its tokens, their probabilities and the beams through it.")
    csv_download(pd.DataFrame(tree_rows(shown), columns=list(BEAM_TREE_COLUMNS)), "beam_tree.csv",
                 label="Download the tree (CSV)", key="pi_beam_tree_csv")
