"""The GBNF sent to llama.cpp's server accepts exactly the decoding grammar's language (on samples).

An independent reader of the GBNF subset :mod:`amp.logic.gbnf` writes (literals, rule names,
alternatives, parenthesised groups, ``*``) recognises the very text that is sent; every gold LF of
the generated pools, framed as the decoding grammar frames it, must be accepted, and the same LFs
broken in ways the grammar forbids must be rejected, in the same verdict as lark's."""

from __future__ import annotations

import re
from functools import cache

import pytest
from lark.exceptions import LarkError

from amp.data.generate import sample_pairs
from amp.data.types import type_ids
from amp.logic.convert import fol_to_lisp
from amp.logic.gbnf import gbnf_text
from amp.logic.grammar import lark_parser

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([a-z0-9-]+)|(\()|(\))|(\|)|(\*))')


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        assert m, f"unreadable GBNF at {text[pos:pos + 20]!r}"
        kind = ("lit", "name", "(", ")", "|", "*")[next(i for i in range(6) if m.group(i + 1) is not None)]
        value = m.group(1)
        out.append((kind, bytes(value[1:-1], "utf-8").decode("unicode_escape") if value else m.group(0).strip()))
        pos = m.end()
    return out


def _alternatives(toks: list[tuple[str, str]], i: int) -> tuple[list, int]:
    alts, seq = [], []
    while i < len(toks) and toks[i][0] != ")":
        kind, value = toks[i]
        if kind == "|":
            alts.append(seq)
            seq, i = [], i + 1
            continue
        if kind == "(":
            inner, i = _alternatives(toks, i + 1)
            item: tuple = ("group", inner)
            i += 1  # the ")"
        else:
            item, i = (kind, value), i + 1
        if i < len(toks) and toks[i][0] == "*":
            item, i = ("star", item), i + 1
        seq.append(item)
    alts.append(seq)
    return alts, i


def recogniser(gbnf: str):  # type: ignore[no-untyped-def]
    rules = {}
    for line in gbnf.strip().splitlines():
        name, body = line.split(" ::= ", 1)
        rules[name], _ = _alternatives(_tokens(body), 0)

    def accepts(text: str) -> bool:
        @cache
        def rule(name: str, pos: int) -> frozenset[int]:
            return alts(id(rules[name]), name, pos)

        def alts(_key: int, name: str, pos: int, group: list | None = None) -> frozenset[int]:
            out: set[int] = set()
            for seq in (group if group is not None else rules[name]):
                out |= seq_ends(seq, 0, pos)
            return frozenset(out)

        def seq_ends(seq: list, k: int, pos: int) -> set[int]:
            if k == len(seq):
                return {pos}
            return {end for mid in item_ends(seq[k], pos) for end in seq_ends(seq, k + 1, mid)}

        def item_ends(item: tuple, pos: int) -> set[int]:
            kind, value = item
            if kind == "lit":
                return {pos + len(value)} if text.startswith(value, pos) else set()
            if kind == "name":
                return set(rule(value, pos))
            if kind == "group":
                return set(alts(0, "", pos, value))
            ends, frontier = {pos}, {pos}
            while frontier:  # "star": zero or more
                frontier = {e for p in frontier for e in item_ends(value, p) if e not in ends and e > p}
                ends |= frontier
            return ends

        return len(text) in rule("root", 0)

    return accepts


def _golds(fmt: str) -> list[str]:
    lfs = []
    for t in type_ids():
        for pair in sample_pairs(t, 6, seed=3):
            lfs += [pair.lf0.lf, pair.lf1.lf]
    return lfs if fmt == "fol" else [fol_to_lisp(lf) for lf in lfs]


def _lark_accepts(fmt: str, text: str) -> bool:
    try:
        lark_parser(fmt, "decoding").parse(text)  # type: ignore[arg-type]
    except LarkError:
        return False
    return True


@pytest.mark.parametrize("fmt", ["fol", "lisp"])
def test_gbnf_accepts_every_gold_and_rejects_what_lark_rejects(fmt: str) -> None:
    accepts = recogniser(gbnf_text(fmt))  # type: ignore[arg-type]
    golds = _golds(fmt)
    assert len(golds) >= 50
    for lf in golds:
        framed = f" {lf}\n"
        assert _lark_accepts(fmt, framed), lf
        assert accepts(framed), f"GBNF rejects the gold {lf!r}"
        for broken in (lf, f" {lf}", f" {lf} \n", f" {lf[:-1]}\n", f" {lf.replace(' ', '  ', 1)}\n",
                       f" {lf.replace('(', ' (', 1)}\n"):
            assert accepts(broken) == _lark_accepts(fmt, broken), (broken, _lark_accepts(fmt, broken))
