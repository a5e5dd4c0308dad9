"""The app's server: Streamlit's own (Starlette) server for ``app.py``, with the light vote path beside it.

``bash run.sh app`` and ``amp app`` run ``streamlit run asgi.py``: every page is the Streamlit app
(``app.py`` and ``views/``) as before, on the same host and port, and a student's link
(``/vote?poll=CODE``) opens the light vote page (:mod:`amp.classroom.vote_routes`), which answers a
vote with one store write instead of a Streamlit script run — what lets one laptop take a class of
150 phones (issue #41; ``bench/class_load.py``).
"""

import streamlit as st

from amp.classroom.vote_routes import vote_routes

app = st.App("app.py", routes=vote_routes())
