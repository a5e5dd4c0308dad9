"""Ending a page early: :func:`halt` and its signal :class:`PageHalt` (a control-flow signal, not an error).

``st.stop()`` would also stop the frame code that runs after the page (``app.py``: model status,
cache size, the sidebar's actions), so a page that has nothing more to show calls :func:`halt`,
and ``app.py`` suppresses :class:`PageHalt` around ``page.run()``.

:class:`PageHalt` is deliberately **not** an :class:`amp.errors.AmpError`: the pages and their
helpers catch ``AmpError`` to turn bad input into an error box (``ui.shared.common.guarded`` among
them), and a halt raised inside such a block must reach ``app.py`` instead of becoming a box.  It
derives from ``Exception`` (not ``BaseException``) so that a halt outside ``page.run()`` still ends
as Streamlit's ordinary exception display rather than escaping its script runner.
"""

from __future__ import annotations

from typing import NoReturn


class PageHalt(Exception):
    """Raised by :func:`halt`; ``app.py`` suppresses it around ``page.run()``.  Not an error (see the module)."""


def halt() -> NoReturn:
    """Stop the current page here, like ``st.stop()``, but let the frame (``app.py``) finish."""
    raise PageHalt
