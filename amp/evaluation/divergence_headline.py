"""The headline of Parse & inspect: where the readings part in *meaning*, then the model's token there.

The token divergence (:func:`amp.parser.search.divergence.divergence`) is where two token
sequences part, which is often a variable name (``x`` versus ``a``) rather than the difference
the readings' meanings make.  The headline therefore says, in this order:

1. **where the readings part in meaning**: the items of LF0 and LF1 that
   :func:`~amp.evaluation.semantic_divergence.semantic_divergence` finds (the ones the Fig. 4
   view boxes), as their own text ("The readings part in meaning at ``have(e)`` (LF0) versus
   ``instrument(a, z)`` (LF1)."); or, in words, that they mean the same or that it cannot be
   computed;
2. **the model's token there**: the first token of the model's parse inside the item where the
   parse parts in meaning from the other reading
   (:func:`~amp.evaluation.semantic_divergence.parse_semantic`), with its index and probability
   and the other reading's token and probability at its own item (a parse spelled otherwise than
   the prompt convention is compared in its own spelling, so that its tokens spell the item).
   That token, never a variable name, is the one the page's "p at divergence" takes
   (:attr:`DivergenceHeadline.prob`).
   When the parse means the same as the other reading, is not a well-formed LF, or its item
   cannot be placed on its tokens, the sentence says so and falls back to the token divergence.

The sentences are :class:`HeadlinePart` runs, LF text and tokens marked ``code``: the page shows
every run as plain text (escaped), never as Markdown built from what a model or a teacher wrote.
Pure functions, no model; computed at display time, so no cached result depends on this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from amp.evaluation.semantic_divergence import (
    SAME_MEANING,
    SemanticDivergence,
    SemanticItem,
    parse_semantic,
    semantic_divergence,
    token_indices,
)
from amp.logic.errors import LFParseError
from amp.records import JsonRecord

__all__ = ["DivergenceHeadline", "HeadlineBasis", "HeadlinePart", "divergence_headline"]

#: What the headline's token is: the first token of the parse's item that differs in meaning
#: (``meaning``), the first differing token (``tokens``, the fallback), or none.
HeadlineBasis = Literal["meaning", "tokens", "none"]

@dataclass(frozen=True)
class HeadlinePart(JsonRecord):
    """A run of headline text; ``code``: an LF item or a token, shown as code (still plain text)."""

    text: str
    code: bool = False


@dataclass(frozen=True)
class DivergenceHeadline(JsonRecord):
    """The two sentences of the headline (module docstring) and the token the page's "p at
    divergence" shows: its index in the model's parse and its probability (raw or
    grammar-renormalised, as asked); ``None`` when there is none."""

    meaning: tuple[HeadlinePart, ...]
    tokens: tuple[HeadlinePart, ...]
    index: int | None
    prob: float | None
    basis: HeadlineBasis

    @property
    def text(self) -> str:
        """Both sentences as one plain string."""
        return " ".join("".join(p.text for p in sentence) for sentence in (self.meaning, self.tokens) if sentence)


def _code(text: str) -> HeadlinePart:
    return HeadlinePart(" ".join(text.split()), code=True)


def _words(text: str) -> HeadlinePart:
    return HeadlinePart(text)


def _fmt(p: float | None) -> str:
    return "–" if p is None else f"{p:.3f}"


def _shown(token: str | None) -> str:
    return "" if token is None else (token.strip() or repr(token))


def _prob(step: Any, grammar: bool) -> float | None:
    value = getattr(step, "prob_grammar" if grammar else "prob", None)
    return None if value is None else float(value)


def _readings_sentence(lf0: str, lf1: str, fmt: str) -> tuple[HeadlinePart, ...]:
    """Where LF0 and LF1 part in meaning (their differing items as code), or in words why not."""
    try:
        sem = semantic_divergence(lf0, lf1, fmt)
    except LFParseError:
        return (_words("Where the readings part in meaning cannot be computed (a reading is not a well-formed "
                       "LF)."),)
    if sem is None:
        return (_words(f"LF0 and LF1: {SAME_MEANING} (they differ at most in variable names or the order of "
                       "conjuncts or same-kind quantifiers)."),)
    if sem.a is not None and sem.b is not None:
        return (_words("The readings part in meaning at "), _code(sem.a.text), _words(" (LF0) versus "),
                _code(sem.b.text), _words(" (LF1)."))
    only, name = (sem.a, "LF0") if sem.a is not None else (sem.b, "LF1")
    assert only is not None
    return (_words("The readings part in meaning at "), _code(only.text), _words(f", which only {name} has."))


def _first_token(steps: Sequence[Any], lf: str, item: SemanticItem | None) -> int | None:
    if item is None:
        return None
    found = token_indices([str(s.token) for s in steps], lf, item.start, item.end)
    return found[0] if found else None


def _token_fallback(ins: Any, why: str, other: str, grammar: bool) -> DivergenceHeadline:
    """The page's former headline (the first differing token), after ``why`` in words."""
    div = ins.divergence
    if div is None or div.index is None:
        return DivergenceHeadline((), (_words(f"{why}; the model's tokens do not part from the {other} reading."),),
                                  None, None, "none")
    pa = div.prob_a_grammar if grammar else div.prob_a
    pb = div.prob_b_grammar if grammar else div.prob_b
    wrote = _words("the end of the LF") if div.token_a is None else _code(_shown(div.token_a))
    has = _words("the end of the LF") if div.token_b is None else _code(_shown(div.token_b))
    parts = (_words(f"{why}; its tokens part from the {other} reading at token {div.index}: it wrote "), wrote,
             _words(f" (p = {_fmt(pa)}) where the {other} reading continues with "), has,
             _words(f" (p = {_fmt(pb)})."))
    return DivergenceHeadline((), parts, div.index, pa, "tokens")


def _parse_sentence(ins: Any, grammar: bool) -> DivergenceHeadline:
    """The model's token where its parse parts in meaning from the other reading (module docstring)."""
    other = str(ins.alternative).upper()  # lf0 → LF0, as the app names the readings
    if ins.predicted is None:
        return DivergenceHeadline((), (_words("The model produced no beam."),), None, None, "none")
    try:
        sem: SemanticDivergence | None = parse_semantic(ins)
    except LFParseError:
        return _token_fallback(ins, "The model's parse is not a well-formed LF, so its meaning cannot be compared",
                               other, grammar)
    if sem is None:
        return _token_fallback(ins, f"The model's parse and the {other} reading: {SAME_MEANING}", other, grammar)
    i = _first_token(ins.predicted_steps, sem.lf_a, sem.a)
    if i is None and sem.a is not None:  # a parse in another spelling: its items where its tokens spell them
        spelled = parse_semantic(ins, normalise=False)
        if spelled is not None and spelled.a is not None:
            sem = spelled
            i = _first_token(ins.predicted_steps, sem.lf_a, sem.a)
    j = _first_token(ins.alternative_steps, sem.lf_b, sem.b)
    theirs: tuple[HeadlinePart, ...] = ()
    if j is not None:  # the other reading's token at its own item: the token, its probability and index
        step_b = ins.alternative_steps[j]
        theirs = (_code(_shown(str(step_b.token))), _words(f" (p = {_fmt(_prob(step_b, grammar))}, its token {j})"))
    if i is not None:
        step = ins.predicted_steps[i]
        p = _prob(step, grammar)
        lead = _words(f"The model's parse parts in meaning from the {other} reading at its token {i}: it wrote ")
        tail = (_words(f" where the {other} reading has "), *theirs) if theirs else \
            (_words(f", which the {other} reading lacks"),)
        return DivergenceHeadline((), (lead, _code(_shown(str(step.token))), _words(f" (p = {_fmt(p)})"), *tail,
                                       _words(".")), i, p, "meaning")
    if sem.a is None and sem.b is not None:  # the parse says less: no token of its own differs
        at = (_words(", which starts with "), *theirs) if theirs else ()
        parts = (_words("The model's parse lacks "), _code(sem.b.text), _words(f" of the {other} reading"), *at,
                 _words("; no token of the parse differs in meaning."))
        return DivergenceHeadline((), parts, None, None, "meaning")
    where = sem.a.text if sem.a is not None else sem.description
    return _token_fallback(ins, f"Where the model's parse parts in meaning from the {other} reading ({where}) "
                                "cannot be placed on its tokens", other, grammar)


def divergence_headline(ins: Any, *, grammar: bool = False) -> DivergenceHeadline:
    """The headline of an :class:`~amp.evaluation.inspection.Inspection` (module docstring);
    ``grammar``: the grammar-renormalised probabilities instead of the raw ones."""
    told = _parse_sentence(ins, grammar)
    return DivergenceHeadline(_readings_sentence(str(ins.lf0), str(ins.lf1), str(ins.fmt)), told.tokens,
                              told.index, told.prob, told.basis)
