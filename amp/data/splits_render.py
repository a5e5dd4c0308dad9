"""Re-render LFs the way the original split script wrote them (docs/paper-notes.md §5.1 step 6, §8.3–8.4).

The original wrote its few-shot dev/test files (and every Lisp file) through its canonicaliser
in *ordered* mode: variables renamed in quantifier-prefix order, events a, e, i and entities
x, y, z (§8.3); AND/OR flattened and children sorted by node-name string, operators (``AND:…``,
``OR:…``) before atoms, with the §8.1 step 7 sort-key amendment (§8.4).  The FOL string comes
from :func:`amp.logic.canonical.ordered_form`, which implements exactly that; the Lisp string
is the same sorted tree rendered as Lisp (§8.4 "Lisp rendering": one list per node,
quantifiers as a chain of single-child nodes), obtained by parsing the sorted FOL (whose
groups are the tree's operator nodes) and rendering it with :func:`amp.logic.render.render_lisp`.

Example (§6.1, PP LF1 of "Watson spotted Alan with the binoculars")::

    raw      exists x . exists a . binoculars(x) AND spotted(a) AND agent(a, Watson)
             AND patient(a, Alan) AND instrument(a, x)
    FOL      exists x . exists a . agent(a, Watson) AND binoculars(x) AND instrument(a, x)
             AND patient(a, Alan) AND spotted(a)
    Lisp     ( exists x ( exists a ( AND ( agent a Watson ) ( binoculars x )
             ( instrument a x ) ( patient a Alan ) ( spotted a ) ) ) )
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from amp.data.templates.records import Example
from amp.logic.canonical import ordered_form
from amp.logic.reader import parse_lf
from amp.logic.render import render_lisp
from amp.logic.vocabulary import DEFAULT_FORMAT, FORMATS, Format, check_format

__all__ = ["FORMATS", "render_ordered", "rerender"]

#: The two output formats of the split folders (§6.1) are :data:`amp.logic.vocabulary.FORMATS`.


@lru_cache(maxsize=1 << 17)
def render_ordered(lf: str, fmt: str = DEFAULT_FORMAT) -> str:
    """The ordered, sorted rendering of a FOL ``lf`` as ``fmt`` (``"fol"`` or ``"lisp"``).

    This is the string the original wrote into few-shot FOL dev/test files and into every
    Lisp file (§5.1 step 6, §6.1).  Raises :class:`~amp.logic.errors.LFParseError` where the
    original failed too (a 4th entity or event variable, an unbound variable).
    """
    if check_format(fmt) == Format.FOL:
        return ordered_form(lf, Format.FOL)
    return render_lisp(parse_lf(render_ordered(lf, Format.FOL), Format.FOL))


def rerender(records: Iterable[Example], fmt: str) -> list[Example]:
    """The records with each ``lf`` re-rendered by :func:`render_ordered`.

    Every other field is kept; in particular ``unfilled_template`` stays FOL even in Lisp
    folders, as in the released files (§6.1).
    """
    return [_rerender_one(r, fmt) for r in records]


@lru_cache(maxsize=1 << 18)
def _rerender_one(record: Example, fmt: str) -> Example:
    # Memoised per record: the split folders share most records, and pool records are the
    # same objects in every folder, so repeat look-ups are identity hits.
    return replace(record, lf=render_ordered(record.lf, fmt))
