"""Render the AST as FOL or Lisp text in the AmP data spacing (docs/paper-notes.md §7.1, §7.2).

FOL (``render_fol``)::

    exists x . exists a . man(x) AND agent(a, x)

* a quantifier is ``q v . `` followed by its body, unparenthesised;
* atoms are ``pred(a1, a2)``;
* junction children that are junctions or quantified formulas are wrapped in a spaced group
  ``( … )``, atoms are not.

Because :func:`amp.logic.reader.parse_lf` keeps explicit groups as their own nodes and folds a
flat chain into one n-ary junction, this rendering satisfies ``parse_lf(render_fol(f)) == f``
for every AST.  It is the *render normal form*: ``render_fol(parse_lf(s)) == s`` whenever ``s``
already has that form, which holds for every LF of the ambiguous templates (§4.1–4.5).  The
unambiguous disjunction templates of §4.6 rely on right-associativity instead of a group
(``bird(x) AND ( … ) OR ( … )``); they parse to the same AST as, but render as,
``bird(x) AND ( ( … ) OR ( … ) )``.

Lisp (``render_lisp``)::

    ( exists x ( exists a ( AND ( agent a x ) ( man x ) ) ) )

one space-separated list per node; ``AND``/``OR`` are n-ary.
"""

from __future__ import annotations

from amp.logic.ast import Atom, Formula, Junction
from amp.logic.vocabulary import DEFAULT_FORMAT, check_format


def render_fol(f: Formula) -> str:
    """The FOL text of ``f`` in AmP spacing (§7.1)."""
    if isinstance(f, Atom):
        return f"{f.pred}({', '.join(f.args)})"
    if isinstance(f, Junction):
        sep = f" {f.op} "
        return sep.join(
            render_fol(c) if isinstance(c, Atom) else f"( {render_fol(c)} )" for c in f.children
        )
    return f"{f.quantifier} {f.var} . {render_fol(f.body)}"


def render_lisp(f: Formula) -> str:
    """The Lisp text of ``f`` (§7.2): ``( q v body )``, ``( AND c1 c2 … )``, ``( pred a1 a2 )``."""
    if isinstance(f, Atom):
        return f"( {f.pred} {' '.join(f.args)} )"
    if isinstance(f, Junction):
        return f"( {f.op} {' '.join(render_lisp(c) for c in f.children)} )"
    return f"( {f.quantifier} {f.var} {render_lisp(f.body)} )"


def render(f: Formula, fmt: str = DEFAULT_FORMAT) -> str:
    """Render ``f`` as ``"fol"`` or ``"lisp"``."""
    return render_fol(f) if check_format(fmt) == "fol" else render_lisp(f)
