"""``paper`` mode gives the original metric's verdict on every (prediction, gold) pair.

The oracle below is a small, independent transcription of the original canonicaliser's
algorithm as ``docs/paper-notes.md`` §8.1–8.4 and §13.1 describe it (split on " . ",
shunting-yard without pops, reversed postfix → binary tree named ``tok:i``, one-merge flatten
passes, the step 7 key amendment, positional ``v<i>`` names before dropping unused quantifiers,
sort by node name).  The pairs are gold LFs of every type with predictions derived from them by
the edits a model makes: unused quantifiers (front, second, random position), reordered
conjuncts, renamed and reordered variables, swapped quantifiers, the other reading, extra
parentheses, nested quantifiers, dropped atoms.
"""

from __future__ import annotations

import random
import re

import pytest

from amp.data.generate import AMBIGUOUS_TYPES, pairs
from amp.evaluation.metrics import matches

OPS = {"AND", "OR"}


class Fail(Exception):
    pass


def oracle(lf: str) -> str:
    """The original's unordered canonical string of a FOL ``lf`` (raises Fail where it failed)."""
    *quants, body = lf.split(" . ")
    s = "( " + body + " )"
    s = re.sub(r"(\w)\(", r"\1[", s)
    s = re.sub(r"(\w)\)", r"\1]", s)
    s = re.sub(r"\[(\w+), (\w+)\]", r"[\1,\2]", s)
    toks: list[str] = []
    buf, state = "", ""
    for w in re.split(r"\s+", s):
        if re.match(r"\w+\[.*\]", w):
            if state != "num" and buf:
                toks.append(buf)
                buf = ""
            state, buf = "num", buf + w
        elif w in OPS or w in "()":
            if buf:
                toks.append(buf)
            buf = ""
            toks.append(w)
        else:
            if state != "func" and buf:
                toks.append(buf)
                buf = ""
            state, buf = "func", buf + w
    if buf:
        toks.append(buf)
    out: list[str] = []
    ops: list[str] = []
    for t in toks:
        if re.match(r"\w+\[.*\]", t):
            out.append(t)
        elif t in OPS:
            if ops and ops[-1] not in "()" and ops[-1] not in OPS:
                raise Fail
            ops.append(t)
        elif t == "(":
            ops.append(t)
        elif t == ")":
            while ops and ops[-1] != "(":
                out.append(ops.pop())
            if ops:
                ops.pop()
        else:
            ops.append(t)
    out += ops[::-1]
    names: dict[int, str] = {}
    kids: dict[int, list[int]] = {}
    try:
        stack: list[int] = []
        seen: dict[int, int] = {}
        for i, t in enumerate(out[::-1]):
            names[i], kids[i] = f"{t}:{i}", []
            if t in OPS:
                par = -1 if i == 0 else stack[-1]
                stack.append(i)
            else:
                par = stack[-1]
            seen[par] = seen.get(par, 0) + 1
            if par >= 0:
                kids[par].append(i)
            if seen[par] == 2:
                stack = [x for x in stack if x != par]
    except IndexError:
        if not re.match(r"\w+\([\w\d]+\)", body):
            raise Fail from None
        names, kids = {0: body.replace("(", "[").replace(")", "]")}, {0: []}
    def base(n: int) -> str:
        return names[n].split(":")[0]

    for _ in range(len(names)):
        edge = next(((a, b) for a in names for b in kids[a] if base(a) == base(b) and base(a) in OPS), None)
        if edge:
            a, b = edge
            moved = kids.pop(b)
            del names[b]
            for k in kids.values():
                if b in k:
                    k.remove(b)
            kids[a] += [c for c in moved if c not in kids[a]]
    for p in list(names):
        if all(base(c) in OPS for c in kids[p]):
            new = []
            for c in kids[p]:
                names[c] = base(c) + ":" + "".join(sorted(re.sub(r"\[.*?\]", "", base(g)) for g in kids[c]))
                new.append(re.sub(r"\[.*?\]", "", names[c].replace(":", "")))
            names[p] = base(p) + ":" + "".join(new)
    rename: dict[str, str] = {}
    prefix = []
    for i, q in enumerate(quants):
        try:
            word, var = q.split(" ")
        except ValueError:
            raise Fail from None
        rename[var] = f"v{i}"
        prefix.append(f"{word} v{i}")
    used = set()
    for n in names:
        m = re.search(r"\[(.+)\]", names[n])
        if m:
            args = []
            for a in m.group(1).split(","):
                if a in rename:
                    args.append(rename[a])
                    used.add(rename[a])
                elif a[0].isupper():
                    args.append(a)
                else:
                    raise Fail
            names[n] = names[n].split("[")[0] + "[" + ",".join(args) + "]"

    def show(n: int, parent: str | None) -> str:
        cs = sorted(kids[n], key=lambda c: names[c])
        if not cs:
            m = re.search(r"\[(.+?)\]", base(n))
            if not m:
                raise Fail
            return base(n).split("[")[0] + "(" + ", ".join(m.group(1).split(",")) + ")"
        op = base(n)
        inner = f" {op} ".join(show(c, op) for c in cs)
        return inner if op in OPS and parent in (None, op) else f"( {inner} )"

    kept = [q for q in prefix if q.split(" ")[1] in used]
    return " . ".join(kept) + " . " + show(0, None)


def original_verdict(prediction: str, gold: str) -> bool:
    try:
        key = oracle(prediction)
    except Fail:
        key = prediction  # the metric keeps the raw string
    return key == oracle(gold)


# ---------------------------------------------------------------------------- the pairs


def _split_top(body: str, op: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for w in body.split(" "):
        depth += (w == "(") - (w == ")")
        if depth == 0 and w == op:
            parts.append(" ".join(cur))
            cur = []
        else:
            cur.append(w)
    parts.append(" ".join(cur))
    return parts


def _edits(lf: str, other: str, rng: random.Random) -> list[str]:
    *quants, body = lf.split(" . ")
    variables = [q.split(" ")[1] for q in quants]
    out = [lf, other]
    for pos in (0, 1, rng.randrange(len(quants) + 1)):  # one unused quantifier
        extra = list(quants)
        extra.insert(pos, rng.choice(["exists w", "forall w", "exists q"]))
        out.append(" . ".join([*extra, body]))
    conj = _split_top(body, "AND")
    shuffled = conj[:]
    rng.shuffle(shuffled)
    out.append(" . ".join([*quants, " AND ".join(shuffled)]))
    if len(conj) > 1:  # one atom dropped
        out.append(" . ".join([*quants, " AND ".join(conj[1:])]))
    perm = variables[:]
    rng.shuffle(perm)  # consistent renaming (a permutation of the names)
    table = dict(zip(variables, perm, strict=True))
    out.append(re.sub(r"\b[a-z]\b", lambda m: table.get(m.group(0), m.group(0)), lf))
    fresh = {v: f"{v}{k}" for k, v in enumerate(variables)}  # new names, order kept
    out.append(re.sub(r"\b[a-z]\b", lambda m: fresh.get(m.group(0), m.group(0)), lf))
    if len(quants) > 1:  # two adjacent quantifiers swapped
        k = rng.randrange(len(quants) - 1)
        swapped = list(quants)
        swapped[k], swapped[k + 1] = swapped[k + 1], swapped[k]
        out.append(" . ".join([*swapped, body]))
        out.append(" . ".join([quants[k], *quants, body]))  # one quantified twice
    out.append(" . ".join([*quants, f"( {body} )"]))  # the body in parentheses
    if len(quants) > 1:  # the last quantifier nested inside the body
        out.append(" . ".join([*quants[:-1], f"{conj[0]} AND {quants[-1]}", " AND ".join(conj[1:]) or conj[0]]))
    return out


def _cases(n_per_type: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    cases = []
    for type_ in AMBIGUOUS_TYPES:
        pool = list(pairs(type_))
        for pair in rng.sample(pool, n_per_type):
            for gold, other in ((pair.lf0.lf, pair.lf1.lf), (pair.lf1.lf, pair.lf0.lf)):
                cases += [(p, gold) for p in _edits(gold, other, rng)]
    return cases


CASES = _cases(30, 13)


def test_enough_pairs_and_both_verdicts() -> None:
    verdicts = [original_verdict(p, g) for p, g in CASES]
    assert len(CASES) > 3000 and 500 < sum(verdicts) < len(CASES) - 500


@pytest.mark.parametrize("chunk", range(4))
def test_paper_mode_gives_the_original_verdict_on_every_pair(chunk: int) -> None:
    disagreements = [
        (p, g) for p, g in CASES[chunk::4] if matches(p, g, "paper") != original_verdict(p, g)
    ]
    assert disagreements == []


def test_unused_front_quantifier_is_never_equal() -> None:
    """Issue 13's figure: with one unused quantifier at the front the original says 'equal' in
    no case (every used variable shifts one position); logical mode says 'equal' in all."""
    golds = [g for _, g in CASES[::40]]
    fronted = [("exists w . " + g, g) for g in golds]
    assert not any(original_verdict(p, g) for p, g in fronted)
    assert not any(matches(p, g, "paper") for p, g in fronted)
    assert all(matches(p, g, "logical") for p, g in fronted)


def test_oracle_on_the_reference_examples() -> None:
    """§8.4's verified strings."""
    assert oracle(
        "exists x . exists y . exists z . exists a . man(x) AND boy(y) AND telescope(z) AND saw(a) "
        "AND agent(a, x) AND patient(a, y) AND instrument(a, z)"
    ) == ("exists v0 . exists v1 . exists v2 . exists v3 . agent(v3, v0) AND boy(v1) AND instrument(v3, v2) "
          "AND man(v0) AND patient(v3, v1) AND saw(v3) AND telescope(v2)")
    assert oracle("exists x . exists y . exists z . man(x) AND boy(z)") == "exists v0 . exists v2 . boy(v2) AND man(v0)"
