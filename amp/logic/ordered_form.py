"""The original canonicaliser's *ordered* rendering of an LF (docs/paper-notes.md §8.3 ordered mode, §8.4).

Variables are named a, e, i (events) and x, y, z (entities) in quantifier-prefix order, assigned
*before* unused quantifiers are dropped (a dropped quantifier leaves a naming gap); AND/OR are
flattened and children sorted by node-name string, operators before atoms, with the §8.1 step 7
sort-key amendment.  This is how the original wrote its sorted few-shot dev/test files and
post-processed beam outputs (§12, §14 item 4); :mod:`amp.data.splits_render` uses it.
:func:`unbound_error` is the error both this and :mod:`amp.logic.canonical` raise for a free
variable.
"""

from __future__ import annotations

import re

from amp.logic import lexicon
from amp.logic.ast import Atom, Formula, Junction, Quantified, has_nested_quantifier, quantifier_prefix
from amp.logic.errors import LFParseError
from amp.logic.logical_form import spliced
from amp.logic.reader import parse_lf
from amp.logic.vocabulary import DEFAULT_FORMAT, check_format


def unbound_error(var: str, text: str | None, fmt: str) -> LFParseError:
    """The error for a variable no quantifier binds, pointing at its first occurrence in ``text``."""
    source = text or ""
    match = re.search(rf"(?<![A-Za-z0-9_]){re.escape(var)}(?![A-Za-z0-9_])", source)
    position = match.start() if match else 0
    line = source.count("\n", 0, position) + 1
    column = position - (source.rfind("\n", 0, position) + 1) + 1
    return LFParseError(
        f"cannot canonicalise {fmt.upper()}: unbound variable {var!r} (every variable must be "
        "bound by a quantifier; capitalised names are constants)",
        text=source, position=position, line=line, column=column, found=var, fmt=fmt,
    )


# A paper-mode node is a tuple (kind, label, text, key, children):
#   kind "atom" | "op" | "quant"; label: predicate, operator or quantifier word;
#   text: FOL rendering (operators without their outer parentheses);
#   key: atoms ``pred[args]``, quantifiers their text, operators the §8.1 step 7 key from their
#   own children (``OP:`` + children's keys when those are all operators) or None;
#   children: the sorted children (operators only).


def _ordered(f: Formula, fmt: str, text: str | None) -> str:
    prefix, body = quantifier_prefix(f)
    free = _free(body)
    # The later binder of a variable wins; a binder is used when its variable occurs in the body.
    last = {var: i for i, (_, var) in enumerate(prefix)}
    used = [i for i, (_, var) in enumerate(prefix) if var in free and last[var] == i]
    names = _ordered_names(prefix, body, text, fmt)
    env = {prefix[i][1]: names[i] for i in used}
    unbound = sorted(free - set(env))
    if unbound:
        raise unbound_error(unbound[0], text, fmt)
    if has_nested_quantifier(f):
        raise LFParseError(
            f"cannot render {fmt.upper()} in ordered mode: a quantifier below the prefix "
            "(the original canonicaliser cannot parse nested quantifiers, §8.1 step 1)",
            text=text or "", position=0, fmt=fmt,
        )
    root = _paper_node(body, env, len(used), text, fmt, fmt == "fol")
    if not used:
        return root[2]
    return "".join([f"{prefix[i][0]} {names[i]} . " for i in used]) + root[2]


def _free(f: Formula) -> set[str]:
    """Free variables of ``f`` (a faster :func:`amp.logic.ast.free_variables` for this module)."""
    out: set[str] = set()
    stack: list[tuple[Formula, frozenset[str]]] = [(f, frozenset())]
    while stack:
        node, bound = stack.pop()
        kind = type(node)
        if kind is Atom:
            for a in node.args:  # type: ignore[union-attr]
                if a not in bound and not a[:1].isupper():
                    out.add(a)
        elif kind is Junction:
            stack.extend((c, bound) for c in node.children)  # type: ignore[union-attr]
        else:
            stack.append((node.body, bound | {node.var}))  # type: ignore[union-attr]
    return out


def _paper_atom(f: Atom, env: dict[str, str], text: str | None, fmt: str) -> tuple:
    try:
        args = [a if a[:1].isupper() else env[a] for a in f.args]
    except KeyError as exc:
        raise unbound_error(exc.args[0], text, fmt) from None
    pred = f.pred
    return ("atom", pred, f"{pred}({', '.join(args)})", f"{pred}[{','.join(args)}]", ())


def _paper_node(f: Formula, env: dict[str, str], level: int, text: str | None, fmt: str,
                amend: bool) -> tuple:
    kind = type(f)
    if kind is Atom:
        return _paper_atom(f, env, text, fmt)  # type: ignore[arg-type]
    if kind is Quantified:  # nested quantifier: keep in place, name by nesting level
        if f.var not in _free(f.body):  # type: ignore[union-attr]
            return _paper_node(f.body, env, level, text, fmt, amend)  # type: ignore[union-attr]
        name = f"v{level}"
        inner = _paper_node(f.body, {**env, f.var: name}, level + 1, text, fmt, amend)  # type: ignore[union-attr]
        rendered = f"{f.quantifier} {name} . {inner[2]}"  # type: ignore[union-attr]
        return ("quant", f.quantifier, rendered, rendered, ())  # type: ignore[union-attr]
    op = f.op  # type: ignore[union-attr]
    children = [_paper_atom(c, env, text, fmt) if type(c) is Atom else _paper_node(c, env, level, text, fmt, amend)
                for c in f.children]  # type: ignore[union-attr]
    if amend:  # §8.1 step 6: flatten (FOL input only, §8.2 step 5)
        children = spliced(children, lambda node: node[0] == "op" and node[1] == op, 4)
    keys = _paper_keys(children, amend)
    order = sorted(range(len(children)), key=keys.__getitem__)  # stable: ties keep input order
    children = [children[k] for k in order]
    parts = [
        c[2] if c[0] == "atom" or (c[0] == "op" and c[1] == op) else f"( {c[2]} )"
        for c in children
    ]  # same operator as its parent (Lisp only): no parentheses (§8.4)
    own = None
    if all(c[0] == "op" for c in children):
        own = f"{op}:" + "".join(sorted(keys))
    return ("op", op, f" {op} ".join(parts), own, children)


def _paper_keys(children: list[tuple], amend: bool) -> list[str]:
    """Sort keys of a node's children (§8.4, §8.1 step 7; §8.2 step 5 when not ``amend``)."""
    if not amend:  # Lisp: operators sort by their bare name, i.e. keep input order
        return [c[1] if c[0] == "op" else c[3] for c in children]
    all_ops = all(c[0] == "op" for c in children)
    keys = []
    for c in children:
        if c[0] != "op":
            keys.append(c[3])
        elif all_ops:  # every sibling is an operator: content key from the children's names
            keys.append(f"{c[1]}:" + "".join(sorted(g[1] for g in c[4])))
        elif c[3] is not None:  # its own children are all operators
            keys.append(c[3])
        else:  # positional name: keeps input order among such siblings
            keys.append(f"{c[1]}:")
    return keys


def _ordered_names(prefix: tuple[tuple[str, str], ...], body: Formula, text: str | None,
                   fmt: str) -> dict[int, str]:
    """§8.3 ordered mode: events take a, e, i and entities x, y, z, in prefix order."""
    events = _event_variables(body)
    pools = {True: list(lexicon.EVENT_VARIABLES), False: list(lexicon.ENTITY_VARIABLES)}
    names: dict[int, str] = {}
    for i, (_, var) in enumerate(prefix):
        pool = pools[var in events]
        if not pool:
            kind = "event" if var in events else "entity"
            raise LFParseError(
                f"cannot render {fmt.upper()} in ordered mode: more than three {kind} variables",
                text=text or "", position=0, found=var, fmt=fmt,
            )
        names[i] = pool.pop(0)
    return names


def _event_variables(body: Formula) -> set[str]:
    """First arguments of agent/patient and sole arguments of verb predicates (§8.3 item 1)."""
    verbs = set(lexicon.verb_predicates())
    events: set[str] = set()
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, Atom):
            if node.pred in ("agent", "patient") or (node.pred in verbs and len(node.args) == 1):
                events.add(node.args[0])
        elif isinstance(node, Junction):
            stack.extend(node.children)
        else:
            stack.append(node.body)
    return events


def ordered_form(lf: str | Formula, fmt: str = DEFAULT_FORMAT) -> str:
    """The original's *ordered* rendering (§8.3 ordered mode, §8.4), as FOL.

    Like ``paper`` mode, but variables are named a, e, i (events) and x, y, z (entities) in
    prefix order, assigned *before* unused quantifiers are dropped — so a dropped quantifier
    leaves a gap (``exists x . exists z . …``), as in the original.  This is how the original
    wrote its sorted few-shot dev/test files and post-processed beam outputs (§12, §14 item 4).
    Raises LFParseError for a 4th entity or event variable, an unbound variable or a nested
    quantifier, where the original failed too.
    """
    check_format(fmt)
    text = lf if isinstance(lf, str) else None
    f = parse_lf(lf, fmt) if isinstance(lf, str) else lf
    return _ordered(f, fmt, text)
