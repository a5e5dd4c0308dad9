"""Which of a mixed prompt's examples pushed the model towards a reading (issue #15 point 1).

For a few-shot prompt with ``k`` examples and a test sentence with two gold readings, the
model's P(LF0) (paper §2: ``m0 / (m0 + m1)`` over the minimum token probabilities of the two
forced decodes, and the total-probability version ``exp(s0) / (exp(s0) + exp(s1))``) is
computed for the prompt itself and for ``2k`` variants of it: each example **removed**, and each
ambiguous example **flipped** to its other reading (LF0 ↔ LF1; an unambiguous ingredient has
no other reading and is not flipped).  The change in P(LF0) against the base prompt is that
example's influence — a leave-one-out attribution, the prompt-level counterpart of the token
attributions of inseq's contrastive mode.

Every front end lists the examples in one order (:meth:`Influence.ranked`, issue #46 point 6):
first the examples whose change **turns** the model's preferred reading (the base and the variant
P(LF0) prefer different readings, each outside the undecided band of
:func:`amp.evaluation.verdict.preference`), then the rest; within each, by the size of the change
shown (the larger of |Δ removed| and |Δ flipped| where both are listed), largest first;
undefined changes last; ties by position.  So a large flip is never buried under the removals.

All ``2k + 1`` pair scores go through :meth:`amp.parser.Parser.score_pairs` in chunks (cached
under the parser's keys, so a second look is instant and a demo pack can carry them); between
chunks the computation reports progress and honours the caller's cancel check
(:func:`amp.parser.search.cancel.cancel_scope`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from amp.evaluation.errors import InfluenceError
from amp.evaluation.verdict import preferred_index
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.errors import SearchCancelled
from amp.parser.search.cancel import current_check
from amp.prompts import Prompt
from amp.records import JsonRecord, OptJsonFloat

if TYPE_CHECKING:
    from amp.parser.core.results import PairScore
    from amp.parser.parser import Parser

__all__ = [
    "CHUNK",
    "ExampleInfluence",
    "Influence",
    "InfluenceError",
    "PositionSummary",
    "example_influence",
    "influence_from_scores",
    "influence_variants",
]

#: Pair scores per model call: small enough for progress and cancel to follow closely, large
#: enough to batch (the forced pass of one prompt is one forward pass).
CHUNK = 4

Version = Literal["min", "total"]
Change = Literal["removed", "flipped"]


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _delta(value: float | None, base: float | None) -> float | None:
    return None if value is None or base is None else value - base


@dataclass(frozen=True)
class ExampleInfluence(JsonRecord):
    """One example's influence on P(LF0): the score without it and with its reading flipped.

    ``index`` is its 0-based position in the prompt, ``label`` the reading it is shown with (0,
    1, or ``None`` for an unambiguous ingredient, which is never flipped).  ``*_p_lf0`` is the
    paper's min-token P(LF0), ``*_p_lf0_total`` the total-probability one; ``delta_*`` the change
    against the base prompt (variant − base); ``None`` where a score is undefined (both minima 0).
    """

    index: int
    utterance: str
    label: int | None
    removed_p_lf0: OptJsonFloat
    removed_p_lf0_total: OptJsonFloat
    flipped_p_lf0: OptJsonFloat = None
    flipped_p_lf0_total: OptJsonFloat = None
    delta_removed: OptJsonFloat = None
    delta_removed_total: OptJsonFloat = None
    delta_flipped: OptJsonFloat = None
    delta_flipped_total: OptJsonFloat = None

    def delta(self, change: Change = "removed", version: Version = "min") -> float | None:
        """The change in P(LF0) when this example is ``removed`` or ``flipped`` (``min``: the
        paper's min-token P(LF0); ``total``: the total-probability one)."""
        return getattr(self, f"delta_{change}" + ("_total" if version == "total" else ""))


@dataclass(frozen=True)
class PositionSummary(JsonRecord):
    """Does the example's position matter?  ``spearman``: rank correlation between position
    and |Δ| (``None`` with fewer than 3 defined values or no spread); ``first_mean`` /
    ``last_mean``: mean |Δ| of the first and the last third of the examples."""

    spearman: OptJsonFloat
    first_mean: OptJsonFloat
    last_mean: OptJsonFloat
    n: int


@dataclass(frozen=True)
class Influence(JsonRecord):
    """The base P(LF0) of a prompt and every example's influence on it."""

    test_utterance: str
    lf0: str
    lf1: str
    fmt: str
    base_p_lf0: OptJsonFloat
    base_p_lf0_total: OptJsonFloat
    examples: tuple[ExampleInfluence, ...]

    def base(self, version: Version = "min") -> float | None:
        return self.base_p_lf0_total if version == "total" else self.base_p_lf0

    def turns(self, e: ExampleInfluence, change: Change = "removed", version: Version = "min") -> bool:
        """Whether ``change`` of example ``e`` turns the model from one reading to the other: the
        base P(LF0) and the variant's prefer different readings, both decided
        (:func:`amp.evaluation.verdict.preferred_index`)."""
        d = e.delta(change, version)
        base = self.base(version)
        if d is None or base is None:
            return False
        before, after = preferred_index(base), preferred_index(base + d)
        return before is not None and after is not None and before != after

    def ranked(self, change: Change | None = None, version: Version = "min") -> list[ExampleInfluence]:
        """The examples in the order every front end lists them (module docstring): those whose
        ``change`` (``None``: either change) turns the preferred reading first, then the rest; each
        group by |Δ P(LF0)| (``None``: the larger of the two), largest first; undefined changes
        last; ties by position."""
        changes: tuple[Change, ...] = ("removed", "flipped") if change is None else (change,)

        def key(e: ExampleInfluence) -> tuple[int, int, float, int]:
            sizes = [abs(d) for c in changes if (d := e.delta(c, version)) is not None]
            if not sizes:
                return (1, 1, 0.0, e.index)
            return (0, 0 if any(self.turns(e, c, version) for c in changes) else 1, -max(sizes), e.index)

        return sorted(self.examples, key=key)

    def position_summary(self, change: Change = "removed", version: Version = "min") -> PositionSummary:
        """Whether later (or earlier) examples move P(LF0) more: see :class:`PositionSummary`."""
        pairs = [(e.index, abs(d)) for e in self.examples if (d := e.delta(change, version)) is not None]
        third = max(1, len(self.examples) // 3)
        first = [v for i, v in pairs if i < third]
        last = [v for i, v in pairs if i >= len(self.examples) - third]
        return PositionSummary(
            spearman=_spearman([float(i) for i, _ in pairs], [v for _, v in pairs]),
            first_mean=sum(first) / len(first) if first else None,
            last_mean=sum(last) / len(last) if last else None,
            n=len(pairs),
        )


def _ranks(values: Sequence[float]) -> list[float]:
    """Average ranks (ties share the mean of their positions), 1-based."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for m in range(i, j + 1):
            ranks[order[m]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson's r of the average ranks); ``None`` when undefined."""
    if len(x) < 3:
        return None
    try:
        return statistics.correlation(_ranks(x), _ranks(y))  # (method="ranked" needs Python 3.12)
    except statistics.StatisticsError:  # no spread in one of them
        return None


def influence_golds(prompt: Prompt, lf0: str | None, lf1: str | None) -> tuple[str, str]:
    """The two readings an influence run scores (``lf0``/``lf1`` or the prompt's golds), after
    checking that the prompt has examples to remove; raises :class:`InfluenceError`.  Pure, so a
    front end checks its input before loading a model."""
    if not isinstance(prompt, Prompt):
        raise InfluenceError(f"expected an amp.prompts.Prompt, got {type(prompt).__name__}")
    if not prompt.examples:
        raise InfluenceError("the prompt has no examples, so no example can influence it (zero-shot or empty prompt)")
    lf0, lf1 = lf0 or prompt.gold_lf0, lf1 or prompt.gold_lf1
    if not lf0 or not lf1:
        raise InfluenceError(f"the test sentence {prompt.test_utterance!r} has no gold LF0 and LF1: give both "
                             "readings to score them")
    return lf0, lf1


def influence_variants(prompt: Prompt) -> list[tuple[str, int | None, Prompt]]:
    """The prompts to score, in order: ``("base", None, prompt)``, then ``("removed", i, …)`` for
    every example and ``("flipped", i, …)`` for every ambiguous one (2k + 1 at most)."""
    out: list[tuple[str, int | None, Prompt]] = [("base", None, prompt)]
    out += [("removed", i, prompt.remove(i)) for i in range(len(prompt.examples))]
    out += [("flipped", i, prompt.flip(i)) for i, ex in enumerate(prompt.examples) if ex.is_ambiguous]
    return out


def influence_from_scores(prompt: Prompt, lf0: str, lf1: str, fmt: str,
                          scores: Sequence[PairScore]) -> Influence:
    """Put the pair scores of :func:`influence_variants` (same order) together."""
    variants = influence_variants(prompt)
    if len(scores) != len(variants):
        raise InfluenceError(f"expected {len(variants)} pair scores, got {len(scores)}")
    by_variant = {(kind, i): s for (kind, i, _p), s in zip(variants, scores, strict=True)}
    base = by_variant[("base", None)]
    b_min, b_total = _num(base.p_lf0), _num(base.p_lf0_total)
    examples = []
    for i, ex in enumerate(prompt.examples):
        removed, flipped = by_variant[("removed", i)], by_variant.get(("flipped", i))
        r_min, r_total = _num(removed.p_lf0), _num(removed.p_lf0_total)
        f_min = _num(flipped.p_lf0) if flipped is not None else None
        f_total = _num(flipped.p_lf0_total) if flipped is not None else None
        examples.append(ExampleInfluence(
            index=i, utterance=ex.utterance, label=ex.label, removed_p_lf0=r_min, removed_p_lf0_total=r_total,
            flipped_p_lf0=f_min, flipped_p_lf0_total=f_total,
            delta_removed=_delta(r_min, b_min), delta_removed_total=_delta(r_total, b_total),
            delta_flipped=_delta(f_min, b_min), delta_flipped_total=_delta(f_total, b_total),
        ))
    return Influence(test_utterance=prompt.test_utterance, lf0=lf0, lf1=lf1, fmt=fmt, base_p_lf0=b_min,
                     base_p_lf0_total=b_total, examples=tuple(examples))


def example_influence(
    parser: Parser, prompt: Prompt, lf0: str | None = None, lf1: str | None = None, *,
    words: OwnWords | None = None, chunk: int = CHUNK,
    progress: Callable[[int, int], None] | None = None,
) -> Influence:
    """Each example's influence on the model's P(LF0) for the test sentence (module docstring).

    ``lf0``/``lf1`` default to the prompt's gold readings, ``words`` to the prompt's own words.
    ``progress(done, total)`` is called after each chunk of pair scores; a cancel check
    installed with :func:`amp.parser.search.cancel.cancel_scope` is honoured between chunks (and
    inside the model's work) with :class:`~amp.parser.core.errors.SearchCancelled`.
    """
    lf0, lf1 = influence_golds(prompt, lf0, lf1)
    words = prompt.words if words is None else words
    if chunk < 1:
        raise InfluenceError(f"chunk must be at least 1, got {chunk}")
    fmt = prompt.lf_format
    items = [(p.render(), lf0, lf1) for _kind, _i, p in influence_variants(prompt)]
    scores: list[PairScore] = []
    if progress is not None:
        progress(0, len(items))
    for start in range(0, len(items), chunk):
        check = current_check()
        if check is not None and check():
            raise SearchCancelled("example influence cancelled")
        scores += parser.score_pairs(items[start:start + chunk], fmt=fmt, words=words or NO_WORDS)
        if progress is not None:
            progress(len(scores), len(items))
    return influence_from_scores(prompt, lf0, lf1, fmt, scores)
