"""Where two readings differ in *meaning*: the first quantifier or conjunct without a counterpart.

The token divergence (:func:`amp.parser.search.divergence.divergence`) is where two token sequences
part ways, which is often an incidental spot: for "the boy saw the girl with the telescope" the
LF0 tokens leave LF1 at an extra ``exists e`` before the conjuncts that carry the difference
(``have(e)`` versus ``instrument(a, z)``).  :func:`semantic_divergence` finds the item that
carries it, for each reading:

* **items** of an LF, in its text order: the quantifiers of its leading prefix, then the
  conjuncts (children) of the junction below it (the body itself when it is one atom);
* **variables are matched by what describes them**, not by their names: a variable's *role* is
  the sorted one-place predicates applied to it (``boy``, ``saw``), or, without one, the places
  it fills (``agent.1``); constants stand for themselves; duplicate roles are numbered in
  binding order; a role of one reading that the other lacks takes the one role there that
  shares a predicate with it (``man+tall`` is the other reading's ``man``);
* an item's **meaning key**: an atom is its predicate over roles (``instrument(saw,telescope)``);
  a group is its connective over the sorted keys of its (flattened) children, so reordering and
  re-bracketing within one connective do not count; a prefix quantifier is its kind, its role
  and the roles of the outer quantifiers of the other kind (scope: ∃∀ differs from ∀∃, adjacent
  same-kind quantifiers commute);
* a prefix quantifier whose role the other reading lacks (the extra ``exists e`` above) is no
  difference in itself: the conjuncts that describe that variable are;
* the divergent item of a reading is its first item whose key the other reading's items do not
  hold (as a multiset).

Both LFs are compared in the prompt convention (:func:`amp.logic.prompt_convention.prompt_form`,
docs/paper-notes.md §16) unless ``normalise=False``: a teacher's ``exists a . exists e . …`` and
the template spelling give the same items, and two LFs that differ only in variable names or the
order of same-kind quantifiers mean the same (``None``; :func:`meaning_difference` says
:data:`SAME_MEANING`).  Items whose texts are equal in the two (normalised) renderings are never
the divergent pair: when the first unmatched items of both sides read the same (their variables
play different parts elsewhere), the next unmatched ones that read differently are named.

The result gives, for each LF, the item's text and character span in the LF's render normal
form (:func:`amp.logic.render.render`, which is the exact text of every data LF; the prompt
convention's spelling when normalised), plus a short description ("have versus instrument").  :func:`token_indices` maps such a span onto the
token steps of a parse or forced decode.  Pure functions, no model; computed at display time,
so no cached result depends on this module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from amp.logic.ast import Atom, Formula, Junction, Quantified, atoms, is_variable, quantifier_prefix
from amp.logic.errors import LFParseError
from amp.logic.prompt_convention import prompt_form
from amp.logic.reader import parse_lf
from amp.logic.render import render
from amp.logic.vocabulary import DEFAULT_FORMAT, Format, check_format
from amp.records import JsonRecord

__all__ = ["SAME_MEANING", "SemanticDivergence", "SemanticItem", "inspection_semantic", "meaning_difference",
           "parse_semantic", "semantic_divergence", "token_indices"]

#: What is said of two LFs that differ only in naming or the order of same-kind quantifiers (or
#: of conjuncts): no item of either lacks a counterpart.
SAME_MEANING = "the two LFs mean the same"

ItemKind = Literal["quantifier", "conjunct"]


@dataclass(frozen=True)
class SemanticItem(JsonRecord):
    """One item of an LF: ``text == lf[start:end]`` of the LF it came from, its kind and gist.

    ``gist`` names it in words made of its predicates and roles (``have``, ``exists boy``,
    ``ate and (drank or slept)``).
    """

    text: str
    start: int
    end: int
    kind: ItemKind
    gist: str


@dataclass(frozen=True)
class SemanticDivergence(JsonRecord):
    """The first item of each reading that the other lacks, and a short description.

    ``lf_a``/``lf_b`` are the two LFs in render normal form (the spans refer to them); ``a`` or
    ``b`` is ``None`` when every item of that reading has a counterpart in the other.
    """

    lf_a: str
    lf_b: str
    fmt: str
    a: SemanticItem | None
    b: SemanticItem | None
    description: str


@dataclass(frozen=True)
class _Item:
    key: str
    node: Formula
    start: int
    end: int
    kind: ItemKind
    gist: str


def semantic_divergence(lf_a: str | Formula, lf_b: str | Formula, fmt: str = DEFAULT_FORMAT,
                        *, normalise: bool = True) -> SemanticDivergence | None:
    """Where ``lf_a`` and ``lf_b`` first differ in meaning (module docstring); ``None`` when no
    item of either lacks a counterpart.  ``normalise``: compare (and give spans in) the prompt
    convention's spelling of both (docs/paper-notes.md §16).  Raises
    :class:`~amp.logic.errors.LFParseError` for text that does not parse in ``fmt``.
    """
    check_format(fmt)
    fa = parse_lf(lf_a, fmt) if isinstance(lf_a, str) else lf_a
    fb = parse_lf(lf_b, fmt) if isinstance(lf_b, str) else lf_b
    if normalise:
        fa, fb = prompt_form(fa), prompt_form(fb)
    roles_a = _roles(fa)
    roles_b = _reconcile(_roles(fb), roles_a)
    items_a = _items(fa, fmt, roles_a, set(roles_b.values()))
    items_b = _items(fb, fmt, roles_b, set(roles_a.values()))
    text_a, text_b = render(fa, fmt), render(fb, fmt)
    first_a, first_b = _first_visible(_unmatched(items_a, items_b), _unmatched(items_b, items_a), text_a, text_b)
    if (first_a is None and first_b is None) or _same_meaning(fa, fb, roles_a, roles_b, items_a, items_b):
        return None
    return SemanticDivergence(text_a, text_b, fmt, _public(first_a, text_a), _public(first_b, text_b),
                              _describe(first_a, first_b))


def meaning_difference(lf_a: str | Formula, lf_b: str | Formula, fmt: str = DEFAULT_FORMAT) -> str:
    """In words: where the two LFs differ in meaning ("have versus instrument"), or
    :data:`SAME_MEANING` when they differ only in naming or order (or not at all)."""
    found = semantic_divergence(lf_a, lf_b, fmt)
    return SAME_MEANING if found is None else found.description


def _same_meaning(fa: Formula, fb: Formula, roles_a: dict[str, str], roles_b: dict[str, str],
                  items_a: list[_Item], items_b: list[_Item]) -> bool:
    """Every prefix quantifier has a counterpart and the bodies' keys are equal (re-bracketing
    within one connective, reordering and renaming are no difference)."""
    quants_a = [i for i in items_a if i.kind == "quantifier"]
    quants_b = [i for i in items_b if i.kind == "quantifier"]
    if _first_unmatched(quants_a, quants_b) is not None or _first_unmatched(quants_b, quants_a) is not None:
        return False
    return _key(quantifier_prefix(fa)[1], roles_a) == _key(quantifier_prefix(fb)[1], roles_b)


def parse_semantic(ins: Any, *, normalise: bool = True) -> SemanticDivergence | None:
    """The semantic divergence of an :class:`~amp.evaluation.inspection.Inspection`'s predicted
    (top) beam (``a``, which must exist) against the other reading (``b``); ``normalise`` as in
    :func:`semantic_divergence` (``False``: the spans are in the beam's own spelling, which is
    what its tokens spell).  Raises :class:`~amp.logic.errors.LFParseError` when the beam is not
    a well-formed LF (no meaning to compare)."""
    return semantic_divergence(str(ins.predicted.text).strip(), str(ins.alternative_lf), str(ins.fmt),
                               normalise=normalise)


def inspection_semantic(ins: Any) -> SemanticDivergence | None:
    """The semantic divergence of an :class:`~amp.evaluation.inspection.Inspection`'s rows.

    ``a`` is the predicted (top) beam's text and ``b`` the other reading (the two heatmap
    rows, :func:`parse_semantic`).  Without a beam, or when the beam is not a well-formed LF (no
    meaning to compare), ``a`` is the *other gold reading* instead (``lf0``/``lf1``, whichever is
    not ``ins.alternative``): the page can still show where the two readings differ, on the
    alternative's row.
    """
    if getattr(ins, "predicted", None) is not None:
        try:
            return parse_semantic(ins)
        except LFParseError:
            pass
    other = ins.lf1 if ins.alternative == "lf0" else ins.lf0
    return semantic_divergence(str(other), str(ins.alternative_lf), str(ins.fmt))


def token_indices(tokens: Sequence[str], lf: str, start: int, end: int) -> tuple[int, ...]:
    """Indices of the tokens covering characters ``start:end`` of ``lf``.

    ``tokens`` are the step tokens of a parse or forced decode of ``lf``; their concatenation is
    the LF with the decoding grammar's leading space (and possibly a closing newline), so the LF
    is located inside it first.  Empty when the tokens do not spell the LF up to ``end``.
    """
    joined = "".join(tokens)
    lead = joined.find(lf)
    if lead < 0:
        lead = joined.find(lf[:end])
    if lead < 0 or end <= start:
        return ()
    lo, hi = lead + start, lead + end
    out: list[int] = []
    pos = 0
    for i, tok in enumerate(tokens):
        t0, t1 = pos, pos + len(tok)
        pos = t1
        if t0 < hi and t1 > lo and tok.strip():
            out.append(i)
    return tuple(out)


# ---------------------------------------------------------------------------------- roles


def _binders(f: Formula) -> Iterator[str]:
    """Bound variables in binding (pre-)order."""
    if isinstance(f, Quantified):
        yield f.var
        yield from _binders(f.body)
    elif isinstance(f, Junction):
        for child in f.children:
            yield from _binders(child)


def _roles(f: Formula) -> dict[str, str]:
    """Variable → role (module docstring); duplicates numbered ``boy#2`` in binding order."""
    unary: dict[str, list[str]] = {}
    places: dict[str, list[str]] = {}
    order: list[str] = list(dict.fromkeys(_binders(f)))
    for atom in atoms(f):
        for pos, arg in enumerate(atom.args):
            if not is_variable(arg):
                continue
            if arg not in order:
                order.append(arg)
            if len(atom.args) == 1:
                unary.setdefault(arg, []).append(atom.pred)
            else:
                places.setdefault(arg, []).append(f"{atom.pred}.{pos}")
    roles: dict[str, str] = {}
    seen: Counter[str] = Counter()
    for var in order:
        base = "+".join(sorted(unary[var])) if var in unary else "?" + ",".join(sorted(places.get(var, [var])))
        seen[base] += 1
        roles[var] = base if seen[base] == 1 else f"{base}#{seen[base]}"
    return roles


def _reconcile(roles: dict[str, str], reference: dict[str, str]) -> dict[str, str]:
    """Rename a role the reference lacks to the one reference role it shares a predicate with.

    ``man+tall`` in one reading is the ``man`` of the other when no other variable there is
    ``man`` (an added adjective is then a conjunct that differs, not a new individual).
    """
    ref = set(reference.values())
    mine = set(roles.values())
    out = dict(roles)
    for var, role in roles.items():
        if role in ref:
            continue
        preds = set(role.split("#")[0].split("+"))
        near = [r for r in ref - mine if preds & set(r.split("#")[0].split("+"))]
        if len(near) == 1:
            out[var] = near[0]
    return out


# ---------------------------------------------------------------------------------- items


def _key(f: Formula, roles: dict[str, str]) -> str:
    """The meaning key of a subformula: variables as roles, junctions flattened and sorted."""
    if isinstance(f, Atom):
        return f"{f.pred}({','.join(roles.get(a, a) for a in f.args)})"
    if isinstance(f, Junction):
        return f"{f.op}[{'|'.join(sorted(_key(c, roles) for c in _flat(f)))}]"
    return f"{f.quantifier} {roles.get(f.var, f.var)}.{_key(f.body, roles)}"


def _flat(f: Junction) -> Iterator[Formula]:
    for child in f.children:
        if isinstance(child, Junction) and child.op == f.op:
            yield from _flat(child)
        else:
            yield child


def _gist(f: Formula, roles: dict[str, str], *, top: bool = True) -> str:
    """Words for an item: an atom's predicate, a quantifier and its role, a group's events."""
    if isinstance(f, Atom):
        return f.pred
    if isinstance(f, Quantified):
        return f"{f.quantifier} {roles.get(f.var, f.var)} . {_gist(f.body, roles)}"
    parts = [c for c in f.children if not (isinstance(c, Atom) and len(c.args) > 1)] or list(f.children)
    text = f" {f.op.lower()} ".join(_gist(c, roles, top=False) for c in parts)
    return text if top or len(parts) == 1 else f"({text})"


def _items(f: Formula, fmt: str, roles: dict[str, str], other_roles: set[str]) -> list[_Item]:
    """The items of ``f`` in text order with their spans in ``render(f, fmt)``."""
    prefix, body = quantifier_prefix(f)
    lisp = fmt == Format.LISP
    items: list[_Item] = []
    pos = 0
    for depth, (q, var) in enumerate(prefix):
        qstart = pos + (2 if lisp else 0)
        qend = qstart + len(q) + 1 + len(var)
        role = roles.get(var, var)
        if role in other_roles:
            outer = sorted(roles.get(v, v) for k, v in prefix[:depth] if k != q)
            items.append(_Item(f"{q} {role} under {outer}", f, qstart, qend, "quantifier", f"{q} {role}"))
        pos = qend + (1 if lisp else 3)
    if not isinstance(body, Junction):
        end = pos + len(render(body, fmt))
        items.append(_Item(_key(body, roles), body, pos, end, "conjunct", _gist(body, roles)))
        return items
    for child, start in _conjuncts(body, pos, lisp):
        end = start + len(render(child, fmt))
        items.append(_Item(_key(child, roles), child, start, end, "conjunct", _gist(child, roles)))
    return items


def _conjuncts(body: Junction, pos: int, lisp: bool) -> Iterator[tuple[Formula, int]]:
    """The children of ``body`` at text offset ``pos``, with each child's start offset (inside
    its ``( … )`` in FOL).  Groups are kept whole (their gist names the grouping); a body that
    only re-brackets the other's within one connective has the same key and is caught first."""
    pos += len(f"( {body.op} ") if lisp else 0
    for child in body.children:
        text = render(child, Format.LISP if lisp else Format.FOL)
        grouped = not lisp and not isinstance(child, Atom)
        start = pos + (2 if grouped else 0)
        yield child, start
        pos = start + len(text) + (2 if grouped else 0) + (1 if lisp else len(f" {body.op} "))


def _first_unmatched(items: list[_Item], others: list[_Item]) -> _Item | None:
    return next(iter(_unmatched(items, others)), None)


def _unmatched(items: list[_Item], others: list[_Item]) -> list[_Item]:
    """The items whose key ``others`` lacks (as a multiset), in text order."""
    available = Counter(o.key for o in others)
    out = []
    for item in items:
        if available[item.key] > 0:
            available[item.key] -= 1
        else:
            out.append(item)
    return out


def _first_visible(a: list[_Item], b: list[_Item], text_a: str, text_b: str) -> tuple[_Item | None, _Item | None]:
    """The first unmatched item of each side, skipping items that read the same in both texts
    (an identical atom is never named as the difference).  When every unmatched item has an
    identical twin, the first ones are kept: the difference is in how the variables connect."""
    texts_a = Counter(text_a[i.start:i.end] for i in a)
    texts_b = Counter(text_b[i.start:i.end] for i in b)
    shared = texts_a & texts_b
    keep_a = [i for i in a if text_a[i.start:i.end] not in shared]
    keep_b = [i for i in b if text_b[i.start:i.end] not in shared]
    if not keep_a and not keep_b:
        return (a[0] if a else None), (b[0] if b else None)
    return (keep_a[0] if keep_a else None), (keep_b[0] if keep_b else None)


def _public(item: _Item | None, lf: str) -> SemanticItem | None:
    if item is None:
        return None
    return SemanticItem(text=lf[item.start:item.end], start=item.start, end=item.end, kind=item.kind, gist=item.gist)


def _describe(a: _Item | None, b: _Item | None) -> str:
    """``"have versus instrument"``; same predicates are told apart by their roles."""
    if a is None or b is None:
        only = a or b
        assert only is not None
        side = "first" if a is not None else "second"
        return f"{only.gist} (only in the {side} reading)"
    ga, gb = a.gist, b.gist
    if ga == gb:
        ga, gb = _role_text(a.key), _role_text(b.key)
    return f"{ga} versus {gb}"


def _role_text(key: str) -> str:
    return key.replace(",", ", ")
