"""AmP Explorer — the frame: page setup, navigation and the shared sidebar.

Run with ``streamlit run app.py`` (or ``bash run.sh app``).  Each page is a short script in
``views/``; the sidebar (and its callbacks) is :mod:`ui.frame.sidebar`; the model, its lock and
the result cache live in ``ui/model/`` (:mod:`ui.model.choice`, :mod:`ui.model.parsers`).

Why ``views/`` and not ``pages/``: with a ``pages/`` folder next to the entrypoint, Streamlit
1.67 runs the app in its legacy multipage mode (``PagesManager.uses_pages_directory``) and wraps
our ``st.navigation`` inside an automatic one built from that folder; ``AppTest`` then reruns
page scripts *without* this frame (the sidebar disappears, its widget state is dropped).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import streamlit as st

from ui.frame import auth as ui_auth
from ui.frame import layout as ui_layout
from ui.frame import sidebar
from ui.shared.halt import PageHalt
from ui.sweeps import job_runs

# A local favicon: a ":material/…:" page icon would be fetched from fonts.gstatic.com.
ICON = str(Path(__file__).parent / "ui" / "static" / "icon.png")
st.set_page_config(page_title="AmP Explorer", page_icon=ICON, layout="wide", initial_sidebar_state="expanded")

PAGES = [
    st.Page("views/templates.py", title="Templates & examples", icon=":material/category:", default=True),
    st.Page("views/own_sentences.py", title="Your own sentences", icon=":material/edit:"),
    st.Page("views/prompt_builder.py", title="Prompt builder", icon=":material/edit_note:"),
    st.Page("views/parse_inspect.py", title="Parse & inspect", icon=":material/troubleshoot:"),
    st.Page("views/ratio_sweep.py", title="Ratio sweep (few-shot)", icon=":material/show_chart:"),
    st.Page("views/zero_shot.py", title="Zero-shot", icon=":material/bar_chart:"),
    st.Page("views/teach_poll.py", title="Class poll", icon=":material/how_to_vote:"),
    st.Page("views/teach_present.py", title="Presentation", icon=":material/slideshow:"),
    st.Page("views/research.py", title="Research (reproduce)", icon=":material/science:"),
    st.Page("views/compare.py", title="Compare models", icon=":material/compare_arrows:"),
    st.Page("views/about.py", title="About & cache", icon=":material/info:"),
]
if "poll" in st.query_params:  # a student's link ?poll=<CODE>: the student page only, no teacher frame
    student = st.navigation([st.Page("views/teach_student.py", title="Class poll", default=True)],
                            position="hidden")
    with contextlib.suppress(PageHalt):
        student.run()
    st.stop()
if not ui_auth.teacher_signed_in():  # reachable from a classroom network: the teacher signs in first
    ui_auth.keep_asked_page(PAGES)  # the page asked for (and its ?query) is where the sign-in lands
    st.stop()
page = st.navigation(PAGES)
job_runs.save_finished()  # sweeps finished on the parser service while no tab watched: saved as runs
ui_layout.label_css()  # labels wrap instead of being cut (a projector at 1280 px, the sidebar open)

slots = sidebar.draw(ICON)

with contextlib.suppress(PageHalt):  # a page that ends early (ui.shared.halt.halt) still gets its sidebar
    page.run()

# After the page: it may have loaded (or failed to load) the model, or filled the cache.
sidebar.fill(slots)
