"""The original AmP canonicaliser's *unordered* rendering, step for step (docs/paper-notes.md §8, §13.1).

``paper`` mode (:func:`amp.logic.canonical.canonical`) must give the original metric's verdict on
every pair, so it follows the original's string algorithm rather than our AST:

* FOL (§8.1): split on ``" . "`` (every piece but the last is a quantifier ``"<q> <var>"``);
  wrap the body in ``( … )``, turn attached parentheses into ``[ ]``, split on whitespace;
  tokenise (consecutive atom tokens merge, unknown words accumulate as "functions");
  shunting-yard in which equal-precedence operators are never popped (right-associative AND/OR);
  the reversed postfix becomes a binary tree whose nodes are named ``<token>:<index>``; repeated
  single merges flatten same-operator edges (a merged child's children are appended to the
  parent's child list); the §8.1 step 7 sort-key amendment, in node order; a singleton body must
  match ``\\w+\\([\\w\\d]+\\)``.
* Lisp (§8.2): atoms ``( f a b )`` → ``f[a,b]``, quantifiers peeled from the front, one node per
  list head — neither flattened nor amended.
* Anonymisation (§8.3, unordered mode): ``v<i>`` by prefix position *before* unused quantifiers
  are dropped, so a dropped quantifier leaves a gap (``exists x . exists y . boy(y)`` →
  ``exists v1 . boy(v1)``); a variable quantified twice keeps the later binder; an unbound
  lowercase argument fails.
* Rendering (§8.4): children sorted by node name (atoms ``pred[args]``; operators their
  amended or positional name), a same-operator child without parentheses.

Everything the original could not read (its ValueError, IndexError, AssertionError, KeyError and
the crashes its callers did not catch) raises :class:`OriginalError` here; the metrics then keep
the raw string, which never matches (§13.1).  The one rendering difference: with no quantifier
left the original wrote ``" . body"``; we write ``body`` (the map is injective, so no verdict
changes).  This module is a re-implementation from the description in ``docs/paper-notes.md``,
not the original's code.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from functools import lru_cache
from typing import Any

from amp.logic.errors import OriginalError
from amp.logic.vocabulary import DEFAULT_FORMAT

OPERATORS = ("AND", "OR")
_ATOM_TOKEN = re.compile(r"\w+\[.*\]")


class _Graph:
    """The few networkx DiGraph behaviours the original relies on: insertion-ordered nodes and
    successor lists; removing a node drops its edges; a new edge goes to the end of the list."""

    def __init__(self) -> None:
        self.name: dict[Any, str] = {}  # node ids: ints, as the original numbers them
        self.succ: dict[Any, list[Any]] = {}

    def add_node(self, n: object, name: str) -> None:
        if n not in self.name:
            self.succ[n] = []
        self.name[n] = name

    def add_edge(self, a: object, b: object) -> None:
        for n in (a, b):
            if n not in self.succ:
                self.succ[n] = []
                self.name.setdefault(n, "")
        if b not in self.succ[a]:
            self.succ[a].append(b)

    def remove_node(self, n: object) -> None:
        del self.name[n]
        del self.succ[n]
        for kids in self.succ.values():
            if n in kids:
                kids.remove(n)

    def edges(self) -> list[tuple[object, object]]:
        return [(a, b) for a, kids in self.succ.items() for b in kids]


def _base(name: str) -> str:
    return name.split(":")[0]


# ---------------------------------------------------------------------------------- FOL


def _tokenize(pieces: list[str]) -> list[str]:
    output: list[str] = []
    state, buf = "", ""
    for piece in pieces:
        if _ATOM_TOKEN.match(piece):
            if state != "num" and buf:
                output.append(buf)
                buf = ""
            state = "num"
            buf += piece
        elif piece in OPERATORS or piece in ("(", ")"):
            if buf:
                output.append(buf)
            buf = ""
            output.append(piece)
        else:
            if state != "func" and buf:
                output.append(buf)
                buf = ""
            state = "func"
            buf += piece
    if buf:
        output.append(buf)
    return output


def _shunt(tokens: list[str]) -> list[str]:
    output: list[str] = []
    stack: list[str] = []
    for tok in tokens:
        if _ATOM_TOKEN.match(tok):
            output.append(tok)
        elif tok in OPERATORS:
            # Equal precedence, and the associativity test never fires: nothing is popped —
            # unless the top is a "function" word, whose operator look-up fails (KeyError).
            if stack and stack[-1] not in ("(", ")") and stack[-1] not in OPERATORS:
                raise OriginalError(f"cannot read {stack[-1]!r} as an operand", found=stack[-1])
            stack.append(tok)
        elif tok == "(":
            stack.append(tok)
        elif tok == ")":
            while stack and stack[-1] != "(":
                output.append(stack.pop())
            if stack and stack[-1] == "(":
                stack.pop()
        else:
            stack.append(tok)
    output.extend(reversed(stack))
    return output


def _drop(stack: list[int], value: int) -> None:
    """``stack`` without ``value`` (an index is pushed once; it sits on top or just below)."""
    for k in (len(stack) - 1, len(stack) - 2):
        if k >= 0 and stack[k] == value:
            del stack[k]
            return
    stack[:] = [x for x in stack if x != value]


def _merge_same_operator(graph: _Graph) -> None:
    """Merge every same-operator edge, as the original's repeated passes do, in one sweep.

    The original merges, pass after pass, the *first* edge ``(a, b)`` in node and successor
    order whose ends share an operator: ``b`` leaves ``a``'s successor list and ``b``'s children
    are appended to it.  Only ``a``'s list changes (parents precede children), so the passes
    finish one node before they touch the next, and within a node the list before the merged
    child never changes again: a queue over the list gives the same final order.
    """
    for a in list(graph.name):
        if a not in graph.name:
            continue  # merged into its parent already
        op = _base(graph.name[a])
        if op not in OPERATORS:
            continue
        kids = graph.succ[a]
        if not any(_base(graph.name[c]) == op for c in kids):
            continue
        done: list[Any] = []
        seen = set(kids)
        queue = deque(kids)
        while queue:
            c = queue.popleft()
            if _base(graph.name[c]) != op:
                done.append(c)
                continue
            for g in graph.succ.pop(c):
                if g not in seen:
                    seen.add(g)
                    queue.append(g)
            del graph.name[c]
        graph.succ[a] = done


def _tree(postfix: list[str]) -> _Graph:
    """The binary tree of the reversed postfix, same-operator edges merged, names amended (§8.1).

    Linear in the number of tokens (docs/paper-notes.md §8.1 describes the original's repeated
    single merges, each a scan of every edge — quadratic; the result here is the same, see
    :func:`_merge_same_operator`).
    """
    graph = _Graph()
    stack: list[int] = []
    count: dict[int, int] = defaultdict(int)
    for i, tok in enumerate(reversed(postfix)):
        graph.add_node(i, f"{tok}:{i}")
        if tok in OPERATORS:
            parent = -1 if i == 0 else stack[-1]  # IndexError: handled by the caller
            stack.append(i)
        else:
            parent = stack[-1]
        count[parent] += 1
        if parent != -1:
            graph.add_edge(parent, i)
        if count[parent] == 2:
            _drop(stack, parent)
    _merge_same_operator(graph)
    for parent in list(graph.name):  # §8.1 step 7, in node order; later writes win
        kids = graph.succ[parent]
        if all(_base(graph.name[c]) in OPERATORS for c in kids):
            new_names = []
            for c in kids:
                suffix = sorted(re.sub(r"\[.*?\]", "", _base(graph.name[g])) for g in graph.succ[c])
                graph.name[c] = f"{_base(graph.name[c])}:{''.join(suffix)}"
                new_names.append(re.sub(r"\[.*?\]", "", graph.name[c].replace(":", "")))
            graph.name[parent] = f"{_base(graph.name[parent])}:{''.join(new_names)}"
    return graph


def _fol_graph(body: str) -> _Graph:
    text = f"( {body} )"
    text = re.sub(r"(\w)\(", r"\1[", text)
    text = re.sub(r"(\w)\)", r"\1]", text)
    text = re.sub(r"\[(\w+), (\w+)\]", r"[\1,\2]", text)
    try:
        return _tree(_shunt(_tokenize(re.split(r"\s+", text))))
    except IndexError:
        if not re.match(r"\w+\([\w\d]+\)", body):
            raise OriginalError("the body is neither a connective tree nor a lone one-place atom") from None
        graph = _Graph()
        graph.add_node(0, re.sub(r"\)", "]", re.sub(r"\(", "[", body)))
        return graph


# ---------------------------------------------------------------------------------- Lisp


def _lisp_parts(formula: str) -> tuple[list[str], _Graph]:
    for atom in re.findall(r"\( ([\w ]+?) \)", formula):
        fxn, *args = atom.split(" ")
        formula = re.sub(rf"\( {atom} \)", f"{fxn}[{','.join(args)}]", formula)
    for groups in re.findall(r"(exists [\w\d]+)|(forall [\w\d]+)", formula):
        quant_str = next(x for x in groups if x)
        quant, var = quant_str.split(" ")
        formula = re.sub(quant_str, f"{quant}_{var}", formula)
    tokens = re.split(r"\s+", formula)
    quants: list[str] = []
    quant_idx = 0
    for i, tok in enumerate(tokens):
        if tok != "(" and tok.startswith(("exists_", "forall_")):
            quants.append(" ".join(tok.split("_")))
            quant_idx = i
    if any(x != ")" for x in tokens[-len(quants):]):
        raise OriginalError("the quantifiers are not a prefix closed at the end")
    statement = tokens[quant_idx + 1:][:-len(quants)] if quants else []
    graph = _Graph()
    counter = [0]

    def helper(items: list[str], parent: object) -> None:
        i = 0
        while i < len(items):
            symbol = items[i]
            if symbol == "(":
                content: list[str] = []
                depth = 1
                while depth:
                    i += 1
                    if i >= len(items):
                        raise OriginalError("unmatched open parenthesis")
                    symbol = items[i]
                    depth += {"(": 1, ")": -1}.get(symbol, 0)
                    if depth:
                        content.append(symbol)
                helper(content, parent)
            elif symbol == ")":
                raise OriginalError("unmatched close parenthesis")
            else:
                graph.add_node(counter[0], symbol)
                graph.add_edge(parent, counter[0])
                if i == 0:
                    parent = counter[0]
                counter[0] += 1
            i += 1

    helper(statement, "none")
    if "none" not in graph.name:
        raise OriginalError("empty statement")
    graph.remove_node("none")
    return quants, graph


# ---------------------------------------------------------------------------------- render


def _anonymise(quants: list[str], graph: _Graph) -> list[str]:
    mapping: dict[str, str] = {}
    new_quants: list[tuple[str, str]] = []
    for i, item in enumerate(quants):
        parts = item.split(" ")
        if len(parts) != 2:
            raise OriginalError(f"{item!r} is not a quantifier '<q> <var>' (a nested quantifier?)", found=item)
        mapping[parts[1]] = f"v{i}"
        new_quants.append((parts[0], f"v{i}"))
    used: set[str] = set()
    for n, name in graph.name.items():
        found = re.search(r"\[(.+)\]", name)
        if found is None:
            continue
        args = []
        for a in found.group(1).split(","):
            if a in mapping:
                args.append(mapping[a])
                used.add(mapping[a])
            elif a[:1].isupper():
                args.append(a)
            else:
                raise OriginalError(f"unbound variable {a!r}", reason="unbound", found=a)
        graph.name[n] = name.split("[")[0] + "[" + ",".join(args) + "]"
    return [f"{q} {v}" for q, v in new_quants if v in used]


def _render(graph: _Graph, node: object, parent_op: str | None) -> str:
    kids = sorted(graph.succ[node], key=lambda c: graph.name[c])
    name = graph.name[node]
    if not kids:
        found = re.search(r"\[(.+?)\]", _base(name))
        if found is None:
            raise OriginalError(f"cannot read {_base(name)!r} as an atom", found=_base(name))
        return f"{_base(name).split('[')[0]}({', '.join(found.group(1).split(','))})"
    op = _base(name)
    inner = f" {op} ".join(_render(graph, c, op) for c in kids)
    if op in OPERATORS and (op == parent_op or parent_op is None):
        return inner
    return f"( {inner} )"


@lru_cache(maxsize=1 << 16)
def original_canonical(text: str, fmt: str = DEFAULT_FORMAT) -> str:
    """The original metric's canonical string of ``text`` (unordered ``v<i>`` names, §13.1).

    Raises :class:`OriginalError` where the original could not read the LF.
    """
    if fmt == "fol":
        pieces = re.split(r" \. ", text)
        quants, graph = pieces[:-1], _fol_graph(pieces[-1])
    elif fmt == "lisp":
        quants, graph = _lisp_parts(text)
    else:
        raise ValueError(f"unknown LF format {fmt!r}; expected 'fol' or 'lisp'")
    kept = _anonymise(quants, graph)
    if 0 not in graph.name:
        raise OriginalError("the statement has no root node")
    body = _render(graph, 0, None)
    return f"{' . '.join(kept)} . {body}" if kept else body
