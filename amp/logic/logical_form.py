"""The ``logical`` canonical form: sound and complete for the equivalences AmP LFs need.

See :mod:`amp.logic.canonical` (the public entry point) and ``docs/canonical-forms.md`` for what
it equates.  Algorithm: normalise the tree (resolve scoping, drop unused quantifiers, flatten,
group maximal runs of same-kind adjacent quantifiers into *blocks*); a block at nesting level
``L`` names its variables ``vL, vL+1, …`` in the order of an isomorphism-invariant signature;
ties are resolved by an individualisation–refinement search (:class:`_TieSearch`) that keeps
the smallest rendering and prunes branches related by an automorphism.  Conjuncts and
disjuncts are sorted by their canonical strings, recursively.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from amp.logic.ast import Atom, Formula, Junction

# Internal normalised tree (tuples, for speed):
#   ("A", pred, args)         args: str (constant or free variable) or int (bound variable id)
#   ("J", op, children)       flattened: no child is a junction with the same op
#   ("Q", q, ids, body)       a block: maximal run of same-kind quantifiers, all used


def logical_form(f: Formula) -> str:
    """The ``logical``-mode canonical string of an AST (module docstring of :mod:`amp.logic.canonical`)."""
    occurrences: list[list[tuple[str, int]]] = []
    free: set[str] = set()
    node = _normalise(f, {}, occurrences, free)
    names = _NAMES if not free.intersection(_NAMES) else _names_avoiding(free)
    return _render(node, {}, 0, names, occurrences)


def spliced(nodes: list[tuple], same: Callable[[tuple], bool], children_at: int) -> list[tuple]:
    """``nodes`` with every node that ``same`` accepts replaced by its children (``node[children_at]``):
    one level of flattening of a junction's same-operator children (both canonical trees use it)."""
    out: list[tuple] = []
    for node in nodes:
        if same(node):
            out.extend(node[children_at])
        else:
            out.append(node)
    return out


#: Canonical bound-variable names by nesting level.
_NAMES: tuple[str, ...] = tuple(f"v{i}" for i in range(256))


def _names_avoiding(free: set[str]) -> tuple[str, ...]:
    """``v0, v1, …`` without the names that occur free (so no free variable is captured)."""
    out: list[str] = []
    for i in itertools.count():
        if f"v{i}" not in free:
            out.append(f"v{i}")
            if len(out) == len(_NAMES):
                return tuple(out)
    raise AssertionError("unreachable")  # pragma: no cover


def _normalise(f: Formula, env: dict[str, int], occurrences: list[list[tuple[str, int]]],
               free: set[str]) -> tuple:
    """Resolve scoping to integer ids, drop unused quantifiers, flatten, build blocks.

    ``occurrences[id]`` collects (predicate, argument position) of every use of bound id ``id``
    — the cheap first signature of :func:`_cheap_colours`; ``free`` collects free variables.
    """
    kind = type(f)
    if kind is Atom:
        return _normalise_atom(f, env, occurrences, free)  # type: ignore[arg-type]
    if kind is Junction:
        op = f.op  # type: ignore[union-attr]
        kids = [_normalise_atom(c, env, occurrences, free) if type(c) is Atom else _normalise(c, env, occurrences, free)
                for c in f.children]  # type: ignore[union-attr]
        return ("J", op, spliced(kids, lambda node: node[0] == "J" and node[1] == op, 2))
    ident = len(occurrences)
    occurrences.append([])
    node = _normalise(f.body, {**env, f.var: ident}, occurrences, free)  # type: ignore[union-attr]
    if not occurrences[ident]:  # unused quantifier: drop it
        return node
    if node[0] == "Q" and node[1] == f.quantifier:  # type: ignore[union-attr]
        return ("Q", node[1], (ident, *node[2]), node[3])  # same kind, adjacent: one block
    return ("Q", f.quantifier, (ident,), node)  # type: ignore[union-attr]


def _normalise_atom(f: Atom, env: dict[str, int], occurrences: list[list[tuple[str, int]]],
                    free: set[str]) -> tuple:
    pred = f.pred
    args: list[str | int] = []
    for j, a in enumerate(f.args):
        ident = env.get(a)
        if ident is None:
            if not a[:1].isupper():
                free.add(a)
            args.append(a)
        else:
            occurrences[ident].append((pred, j))
            args.append(ident)
    return ("A", pred, tuple(args))


def _atom_text(node: tuple, env: dict[int, str]) -> str:
    return f"{node[1]}({', '.join([env[a] if type(a) is int else a for a in node[2]])})"


def _render(node: tuple, env: dict[int, str], level: int, names: tuple[str, ...],
            occurrences: list[list[tuple[str, int]]]) -> str:
    kind = node[0]
    if kind == "A":
        return _atom_text(node, env)
    if kind == "J":
        parts = [
            _atom_text(c, env) if c[0] == "A"
            else f"( {_render(c, env, level, names, occurrences)} )"
            for c in node[2]
        ]
        parts.sort()
        return f" {node[1]} ".join(parts)
    return _render_block(node, env, level, names, occurrences)


def _render_block(node: tuple, env: dict[int, str], level: int, names: tuple[str, ...],
                  occurrences: list[list[tuple[str, int]]]) -> str:
    """``q v<L> . q v<L+1> . … body`` with the block's variables labelled to minimise the string.

    Variables are ordered by an invariant signature (:func:`_cheap_colours`); when that ties,
    a canonical individualisation–refinement search (:class:`_TieSearch`) picks the smallest
    rendering among all labellings consistent with the ordered partition.
    """
    _, quantifier, ids, body = node
    deeper = level + len(ids)
    if deeper > len(names):
        raise ValueError(f"more than {len(names)} nested bound variables")
    slots = names[level:deeper]
    head = "".join([f"{quantifier} {name} . " for name in slots])

    def render_with(order: list[int]) -> str:
        local = dict(env)
        local.update(zip(order, slots))
        return _render(body, local, deeper, names, occurrences)

    colour = _cheap_colours(ids, occurrences)
    if len(set(colour.values())) == len(ids):  # the common case: every variable distinct
        return head + render_with(sorted(ids, key=colour.__getitem__))
    return head + _TieSearch(ids, body, env, render_with).run(colour)[0]


def _cheap_colours(ids: tuple[int, ...], occurrences: list[list[tuple[str, int]]]) -> dict[int, int]:
    """Rank of each variable's sorted (predicate, argument position) uses — enough to tell
    every variable of every AmP LF apart.  Invariant under reordering and renaming."""
    signature = {i: tuple(sorted(occurrences[i])) for i in ids}
    ranked = sorted(set(signature.values()))
    return {i: ranked.index(signature[i]) for i in ids}


class _TieSearch:
    """Canonical labelling of one block by individualisation and refinement.

    The ordered partition of the block's variables (colour → cell) is refined with the full
    occurrence signature: for each use, the path of connectives/quantifiers from the block,
    the predicate, the argument position and the other arguments (constants, free and outer
    variables by name, inner-bound ones as ``~``, block variables by their current colour).
    While a cell has several variables, each of them is tried first (*individualised*), the
    partition refined again, and the smallest rendering of all leaves kept.  A branch whose first
    leaf renders like an explored branch's first leaf is related to it by an automorphism and
    pruned, so interchangeable variables (or interchangeable groups of them) cost no factorial
    search.  Every step is invariant under
    reordering children and renaming, hence the result is canonical.
    """

    def __init__(self, ids: tuple[int, ...], body: tuple, env: dict[int, str], render_with: Any) -> None:
        self.ids = ids
        self.render_with = render_with
        block = set(ids)
        self.uses: dict[int, list[tuple]] = {i: [] for i in ids}
        stack: list[tuple[tuple, tuple]] = [(body, ())]
        while stack:
            node, path = stack.pop()
            kind = node[0]
            if kind == "A":
                args = node[2]
                for j, a in enumerate(args):
                    if a in block:
                        others = tuple(
                            o if type(o) is not int else (o if o in block else env.get(o, "~"))
                            for k, o in enumerate(args) if k != j
                        )
                        self.uses[a].append((path, node[1], j, others, a))
            elif kind == "J":
                sub = (*path, node[1])
                stack.extend((c, sub) for c in node[2])
            else:
                stack.append((node[3], (*path, node[1])))

    def refine(self, colour: dict[int, int]) -> dict[int, int]:
        count = len(set(colour.values()))
        while count < len(self.ids):
            signature = {
                i: (colour[i], *sorted(
                    (path, pred, j, tuple("=" if o == me else f"*{colour[o]}" if type(o) is int else o
                                          for o in others))
                    for path, pred, j, others, me in self.uses[i]
                ))
                for i in self.ids
            }
            ranked = sorted(set(signature.values()))
            index = {sig: k for k, sig in enumerate(ranked)}
            colour = {i: index[signature[i]] for i in self.ids}
            if len(ranked) == count:
                break
            count = len(ranked)
        return colour

    @staticmethod
    def cells(colour: dict[int, int]) -> list[list[int]]:
        out: dict[int, list[int]] = {}
        for i, c in colour.items():
            out.setdefault(c, []).append(i)
        return [out[c] for c in sorted(out)]

    @staticmethod
    def individualise(colour: dict[int, int], u: int) -> dict[int, int]:
        """``u`` alone in front of the rest of its cell; other cells keep their order."""
        split = {i: (c, i != u) for i, c in colour.items()}
        ranked = sorted(set(split.values()))
        index = {key: k for k, key in enumerate(ranked)}
        return {i: index[key] for i, key in split.items()}

    def first_leaf(self, colour: dict[int, int]) -> str:
        """The rendering reached by always individualising the first variable of the first tie."""
        while True:
            colour = self.refine(colour)
            target = next((cell for cell in self.cells(colour) if len(cell) > 1), None)
            if target is None:
                return self.render_with(sorted(self.ids, key=colour.__getitem__))
            colour = self.individualise(colour, min(target))

    def run(self, colour: dict[int, int]) -> tuple[str, str]:
        """(smallest rendering below this node, rendering of its first leaf)."""
        colour = self.refine(colour)
        target = next((cell for cell in self.cells(colour) if len(cell) > 1), None)
        if target is None:
            text = self.render_with(sorted(self.ids, key=colour.__getitem__))
            return text, text
        best = first = ""
        seen: set[str] = set()
        for k, u in enumerate(sorted(target)):
            child = self.individualise(colour, u)
            # Equal first leaves reveal an automorphism mapping an explored branch onto this
            # one (fixing every variable individualised so far): same minimum, skip it.
            if k and self.first_leaf(child) in seen:
                continue
            result, leaf = self.run(child)
            seen.add(leaf)
            if not k:
                best, first = result, leaf
            elif result < best:
                best = result
        return best, first
