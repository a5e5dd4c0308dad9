"""Convert logical forms between FOL and Lisp (docs/paper-notes.md §7.3).

There is one tree (:mod:`amp.logic.ast`); converting is parsing one format and rendering the
other.  ``fol → fol`` and ``lisp → lisp`` normalise spacing and grouping to the render normal
form.  Conversion keeps the formula as written: it neither sorts nor renames (that is
:mod:`amp.logic.canonical`).
"""

from __future__ import annotations

from amp.logic.reader import parse_lf
from amp.logic.render import render
from amp.logic.vocabulary import check_format


def convert(text: str, src: str = "fol", dst: str = "lisp", *, strict: bool = False) -> str:
    """Parse ``text`` as ``src`` and render it as ``dst`` (each ``"fol"`` or ``"lisp"``).

    Raises :class:`~amp.logic.errors.LFParseError` when ``text`` does not parse.
    """
    check_format(dst)
    return render(parse_lf(text, src, strict=strict), dst)


def fol_to_lisp(text: str) -> str:
    """``convert(text, "fol", "lisp")``."""
    return convert(text, "fol", "lisp")


def lisp_to_fol(text: str) -> str:
    """``convert(text, "lisp", "fol")``."""
    return convert(text, "lisp", "fol")
