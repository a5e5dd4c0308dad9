"""Which words push the model toward one reading: contrastive token attribution at the point where
LF0 and LF1 part (issue #31; docs/paper-notes.md §18).

For a few-shot prompt and a test sentence with two gold readings, the target is the model's
log-odds between the readings where their tokens part, ``log p(LF0's token) − log p(LF1's token)``
given the prompt and the shared prefix, or the whole-sequence ``log P(LF0) − log P(LF1)``.  It is
attributed to every token of the prompt by input × gradient or by integrated gradients from a
baseline x′ (:class:`Baseline`: zero, pad-token or mean embeddings; :mod:`amp.parser.search.gradients`,
torch autograd on the loaded model).  The **completeness gap** ``|Σ attributions − (f(x) − f(x′))|``
says how far the integral's midpoint rule is from exact (input × gradient has no such
guarantee); integrated gradients triple their steps (16 → 48 → 144, reusing every pass) until
the gap is at most ``gap_target`` (default 5 %) of ``|f(x) − f(x′)|`` or ``max_steps`` is
reached, and the result says which (:attr:`Attribution.note`; docs/paper-notes.md §18).  The LFs are
tokenized as the forced scorer gets them, and the divergence point comes from
:func:`amp.parser.search.divergence.divergence`, so both follow whatever normalisation of the
prompt convention lands there.

The token attributions are summed per **word of the test sentence** and per **example** of the
prompt (every token is given to the word or example block it overlaps most; header and the test
block's ``Human:``/``Computer:`` belong to neither), so an example's attribution can be set beside
its leave-one-out influence (:mod:`amp.evaluation.influence`, :func:`beside_influence`, with
Spearman's ρ).  Positive values push toward LF0, negative toward LF1.

:func:`attribute` runs on an engine whose capabilities give gradients, in this process (it needs the
weights: the llama.cpp engine, a remote or an API backend is an :class:`AttributionError` naming an
engine that gives them), is bounded (:data:`~amp.parser.core.limits.MAX_ATTRIBUTION_STEPS`,
:data:`~amp.parser.core.limits.MAX_ATTRIBUTION_TOKENS`), cancellable between chunks of the path
(:func:`amp.parser.search.cancel.cancel_scope`), reports progress, and is cached under the
parser's keys (model, tokenizer, runtime, grammar, code digest, and every setting).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amp.errors import CacheError
from amp.evaluation.errors import AttributionError
from amp.evaluation.influence import Change, Influence, Version, _spearman
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core import limits
from amp.parser.core.attribution_settings import (
    DEFAULT_GAP_TARGET,
    DEFAULT_MAX_STEPS,
    DEFAULT_STEPS,
    METHODS,
    RULE,
    TARGETS,
    Baseline,
    check_baseline,
    check_gap_target,
    check_steps,
)
from amp.parser.core.errors import SearchCancelled
from amp.parser.engines import DEFAULT_ENGINE, engines_with
from amp.prompts import Prompt
from amp.records import JsonFloat, JsonRecord, OptJsonFloat

if TYPE_CHECKING:
    from amp.parser.models.loading import LoadedModel
    from amp.parser.parser import Parser

__all__ = [
    "DEFAULT_GAP_TARGET",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_STEPS",
    "METHODS",
    "RULE",
    "TARGETS",
    "Attribution",
    "Baseline",
    "Rung",
    "AttributionError",
    "ExampleAttribution",
    "TokenAttribution",
    "WordAttribution",
    "aggregate",
    "attribute",
    "Settings",
    "beside_influence",
    "check_settings",
    "prompt_layout",
]

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class TokenAttribution(JsonRecord):
    """One prompt token: its text (the prompt's characters ``start:end``; a special token's name),
    attribution, and the example (0-based) or test-sentence word it belongs to (``None`` if none);
    ``attributed`` is false for a special token kept as is in the baseline."""

    index: int
    token: str
    start: int
    end: int
    attribution: float
    example: int | None = None
    word: int | None = None
    attributed: bool = True


@dataclass(frozen=True)
class WordAttribution(JsonRecord):
    """One word of the test sentence (split at whitespace) and the sum over its tokens."""

    index: int
    word: str
    attribution: float


@dataclass(frozen=True)
class ExampleAttribution(JsonRecord):
    """One example of the prompt: its sentence, label (0, 1, ``None`` for an unambiguous
    ingredient) and the sum over the tokens of its block (sentence and LF)."""

    index: int
    utterance: str
    label: int | None
    attribution: float


@dataclass(frozen=True)
class Rung(JsonRecord):
    """One try of integrated gradients: its steps and the completeness gap as a share of |f(x) − f(x′)|."""

    steps: int
    relative_gap: JsonFloat


@dataclass(frozen=True)
class Attribution(JsonRecord):
    """A contrastive attribution map (module docstring).

    ``value`` = f(x), ``baseline_value`` = f(x′), ``completeness_gap`` =
    ``|Σ token attributions − (value − baseline_value)|`` and ``relative_gap`` that over
    ``|value − baseline_value|``; ``divergence`` the LF token index where the readings part and
    ``token_lf0``/``token_lf1`` their tokens there.  ``steps`` are those of the attributions given
    (1 for input × gradient); ``rungs`` every step count tried with its gap, ``gap_target`` the
    share asked for (``None``: no increase, or input × gradient) and ``rule`` the quadrature.
    """

    prompt: str
    test_utterance: str
    lf0: str
    lf1: str
    fmt: str
    target: str
    method: str
    steps: int
    baseline: str
    divergence: int
    token_lf0: str
    token_lf1: str
    value: float
    baseline_value: float
    completeness_gap: float
    tokens: tuple[TokenAttribution, ...]
    words: tuple[WordAttribution, ...]
    examples: tuple[ExampleAttribution, ...]
    relative_gap: JsonFloat = float("nan")
    gap_target: OptJsonFloat = None
    rungs: tuple[Rung, ...] = ()
    rule: str = RULE

    @property
    def total(self) -> float:
        """Σ of the token attributions."""
        return sum(t.attribution for t in self.tokens)

    @property
    def target_met(self) -> bool | None:
        """Whether the completeness gap is within the target (``None`` without a target)."""
        return None if self.gap_target is None else self.relative_gap <= self.gap_target

    @property
    def note(self) -> str:
        """One sentence on how complete the attribution is: the gap, and whether the target was met
        and at which steps (plain text for every front end)."""
        gap = f"completeness gap {self.completeness_gap:.4g} = {self.relative_gap:.1%} of |f(x) − f(x′)|"
        if self.method == "input_x_gradient":
            return f"{gap} (input × gradient: one pass, no completeness guarantee; read signs and ranks, not sizes)"
        tried = ", ".join(str(r.steps) for r in self.rungs) or str(self.steps)
        if self.gap_target is None:
            return f"{gap} at {self.steps} steps ({self.rule} rule; no gap target)"
        if self.target_met:
            return f"{gap} at {self.steps} steps: within the {self.gap_target:.0%} target ({self.rule} rule; tried {tried})"
        return (f"{gap} at {self.steps} steps: the {self.gap_target:.0%} target was NOT met (tried {tried}; "
                f"the bound on steps stopped the increase) — read the sizes with care")


def prompt_layout(prompt: Prompt) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]]:
    """Character spans in ``prompt.render()`` of each example's block and of each test-sentence word.

    Follows :meth:`amp.prompts.Prompt.render`'s layout (header block, ``"Human: u\\nComputer: lf\\n"``
    blocks and the test block joined by ``"\\n"``).
    """
    text = prompt.render()
    pos = len(prompt.header + "\n\n") + 1 if prompt.header else 0
    examples = []
    for ex in prompt.examples:
        block = f"Human: {ex.utterance}\nComputer: {ex.lf}\n"
        examples.append((pos, pos + len(block)))
        pos += len(block) + 1
    start = pos + len("Human: ")
    words = [(start + m.start(), start + m.end(), m.group()) for m in _WORD.finditer(prompt.test_utterance)]
    if text[start:start + len(prompt.test_utterance)] != prompt.test_utterance:
        raise AttributionError("the prompt's text does not have the expected layout (Human:/Computer: blocks)")
    return examples, words


def _owner(span: tuple[int, int], units: Sequence[tuple[int, int]]) -> int | None:
    """The unit the span overlaps most (the first on a tie), ``None`` when it overlaps none."""
    best, most = None, 0
    for i, (a, b) in enumerate(units):
        overlap = min(span[1], b) - max(span[0], a)
        if overlap > most:
            best, most = i, overlap
    return best


def aggregate(prompt: Prompt, spans: Sequence[tuple[int, int]], values: Sequence[float],
              names: Sequence[str] | None = None, attributed: Sequence[bool] | None = None,
              ) -> tuple[tuple[TokenAttribution, ...], tuple[WordAttribution, ...], tuple[ExampleAttribution, ...]]:
    """Token attributions (their character ``spans`` in ``prompt.render()``) summed per test-sentence
    word and per example (pure; module docstring).  ``names``: the tokens' texts where a span is
    empty (special tokens)."""
    if len(spans) != len(values):
        raise AttributionError(f"{len(spans)} token spans but {len(values)} attributions")
    text = prompt.render()
    example_spans, word_spans = prompt_layout(prompt)
    word_units = [(a, b) for a, b, _w in word_spans]
    tokens = []
    for i, (span, value) in enumerate(zip(spans, values, strict=True)):
        name = text[span[0]:span[1]] if span[1] > span[0] else (names[i] if names else "")
        tokens.append(TokenAttribution(
            index=i, token=name, start=span[0], end=span[1], attribution=float(value),
            example=_owner(span, example_spans), word=_owner(span, word_units),
            attributed=True if attributed is None else bool(attributed[i])))
    words = tuple(WordAttribution(index=j, word=w, attribution=sum(t.attribution for t in tokens if t.word == j))
                  for j, (_a, _b, w) in enumerate(word_spans))
    examples = tuple(ExampleAttribution(index=j, utterance=ex.utterance, label=ex.label,
                                        attribution=sum(t.attribution for t in tokens if t.example == j))
                     for j, ex in enumerate(prompt.examples))
    return tuple(tokens), words, examples


@dataclass(frozen=True)
class BesideRow(JsonRecord):
    """One example's attribution beside its influence (the change of P(LF0), ``None`` if undefined)."""

    index: int
    utterance: str
    label: int | None
    attribution: float
    influence: OptJsonFloat


def beside_influence(attr: Attribution, inf: Influence, change: Change = "removed",
                     version: Version = "min") -> tuple[tuple[BesideRow, ...], float | None]:
    """Per example: its attribution beside its influence, and Spearman's ρ between the two
    (``None`` with fewer than 3 defined pairs or no spread).  Both must be of the same prompt."""
    if len(attr.examples) != len(inf.examples) or any(
            a.utterance != b.utterance for a, b in zip(attr.examples, inf.examples, strict=True)):
        raise AttributionError("the attribution and the influence are of different prompts")
    rows = tuple(BesideRow(index=a.index, utterance=a.utterance, label=a.label, attribution=a.attribution,
                           influence=e.delta(change, version))
                 for a, e in zip(attr.examples, inf.examples, strict=True))
    pairs = [(r.attribution, r.influence) for r in rows if r.influence is not None]
    return rows, _spearman([p[0] for p in pairs], [p[1] for p in pairs])


@dataclass(frozen=True)
class Settings:
    """The validated settings of one attribution (:func:`check_settings`)."""

    target: str
    method: str
    steps: int
    max_steps: int
    baseline: Baseline
    gap_target: float | None


def check_settings(target: Any = "divergence", method: Any = "integrated_gradients", steps: Any = DEFAULT_STEPS,
                   max_steps: Any = None, baseline: Any = Baseline.ZERO,
                   gap_target: Any = DEFAULT_GAP_TARGET) -> Settings:
    """Every setting checked once (:class:`AttributionError` for a target or method,
    :class:`~amp.errors.SettingError`/:class:`~amp.parser.core.errors.RequestTooLarge` for the rest).
    ``max_steps`` ``None``: :data:`DEFAULT_MAX_STEPS`, or ``steps`` if more.  Input × gradient
    takes one pass and no gap target."""
    if target not in TARGETS:
        raise AttributionError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    if method not in METHODS:
        raise AttributionError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    steps = limits.check_count(steps, "steps", limits.MAX_ATTRIBUTION_STEPS)
    steps, max_steps = check_steps(steps, max(steps, DEFAULT_MAX_STEPS) if max_steps is None else max_steps)
    base, share = check_baseline(baseline), check_gap_target(gap_target)
    if method == "input_x_gradient":
        return Settings(target, method, 1, 1, base, None)
    return Settings(target, method, steps, max_steps, base, share)


def _check_gradients(parser: Parser) -> None:
    """:class:`AttributionError` unless the parser's backend gives gradients (its capabilities),
    naming an engine that does."""
    backend = parser.backend
    caps = backend.capabilities()
    if caps.gradients:
        return
    able = (*engines_with(lambda c: c.gradients), DEFAULT_ENGINE)[0]
    if backend.kind == "in-process":
        raise AttributionError(f"contrastive attribution takes gradients through the model's weights, which the "
                               f"{caps.engine} engine does not give: use the {able} engine (--engine {able}; "
                               f"in the app, Engine: {able})")
    raise AttributionError(f"contrastive attribution needs the model's weights in this process; the "
                           f"{backend.kind} backend only returns results (choose a local model)")


def _cached(parser: Parser, key: str) -> Attribution | None:
    """The attribution the parser's cache holds under ``key`` (one that does not rebuild is dropped)."""
    cache = parser.cache
    stored = cache.get(key) if cache is not None else None
    if cache is None or stored is None:
        return None
    try:
        return Attribution.from_dict(stored)
    except (TypeError, ValueError):
        cache.discard(key, "does not rebuild into an attribution")
        return None


def _weights(parser: Parser) -> LoadedModel:
    """The loaded model to take gradients through (loading it now)."""
    lm = parser.load()
    if lm is None:  # an engine that claims gradients but keeps no weights here
        raise AttributionError(f"the {parser.backend.capabilities().engine} engine gives no model weights to "
                               "take gradients through")
    return lm


def attribute(
    parser: Parser, prompt: Prompt, lf0: str | None = None, lf1: str | None = None, *,
    target: str = "divergence", method: str = "integrated_gradients", steps: int = DEFAULT_STEPS,
    baseline: Baseline | str = Baseline.ZERO, gap_target: float | None = DEFAULT_GAP_TARGET,
    max_steps: int | None = None, words: OwnWords | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Attribution:
    """The contrastive attribution map of ``prompt`` between ``lf0`` and ``lf1`` (default: the
    prompt's golds; module docstring).  Integrated gradients start at ``steps`` and triple up to
    ``max_steps`` while the completeness gap is above ``gap_target`` (``None``: exactly ``steps``);
    input × gradient takes one pass.  ``progress(done, total)`` follows the gradient passes (the
    total grows with each tripling)."""
    if not isinstance(prompt, Prompt):
        raise AttributionError(f"expected an amp.prompts.Prompt, got {type(prompt).__name__}")
    s = check_settings(target, method, steps, max_steps, baseline, gap_target)
    lf0, lf1 = lf0 or prompt.gold_lf0, lf1 or prompt.gold_lf1
    if not lf0 or not lf1:
        raise AttributionError(f"the test sentence {prompt.test_utterance!r} has no gold LF0 and LF1: give both "
                               "readings to contrast them")
    words = prompt.words if words is None else words
    text = limits.check_prompt(prompt.render())
    limits.check_lf(lf0)
    limits.check_lf(lf1)
    prompt_layout(prompt)  # a layout error before any model work
    _check_gradients(parser)
    fmt = prompt.lf_format
    key = parser.cache_key("attribution", prompt=text, lf0=lf0, lf1=lf1, fmt=fmt, target=s.target, method=s.method,
                           steps=s.steps, baseline=s.baseline.value, words=words or NO_WORDS,
                           gap_target=s.gap_target, max_steps=s.max_steps, rule=RULE)
    stored = _cached(parser, key)
    if stored is not None:
        return stored
    lm = _weights(parser)
    n_tokens = len(lm.tokenizer(text).input_ids)
    limits.check_count(n_tokens, "the prompt's tokens", limits.MAX_ATTRIBUTION_TOKENS)
    from amp.parser.search.gradients import contrast_gradients  # late: start-up cost (torch)

    with lm.lock:
        try:
            g = contrast_gradients(lm.model, lm.tokenizer, text, lf0, lf1, target=s.target, method=s.method,
                                   steps=s.steps, baseline=s.baseline, gap_target=s.gap_target,
                                   max_steps=s.max_steps, fmt=fmt, words=words or NO_WORDS, progress=progress)
        except SearchCancelled:
            raise
        except RuntimeError as exc:  # e.g. a quantised model without gradients
            raise AttributionError(f"the model gives no gradients for attribution ({exc})") from None
    names = lm.tokenizer.convert_ids_to_tokens(list(g.token_ids))
    tokens, word_sums, example_sums = aggregate(prompt, g.spans, g.attributions, names, g.attributed)
    total = sum(g.attributions)

    def token_text(i: int) -> str:
        return str(lm.tokenizer.decode([i])) if i >= 0 else ""

    result = Attribution(
        prompt=text, test_utterance=prompt.test_utterance, lf0=lf0, lf1=lf1, fmt=fmt, target=s.target,
        method=s.method, steps=g.steps, baseline=s.baseline.value, divergence=g.divergence,
        token_lf0=token_text(g.token_lf0), token_lf1=token_text(g.token_lf1), value=g.value,
        baseline_value=g.baseline_value, completeness_gap=abs(total - (g.value - g.baseline_value)),
        tokens=tokens, words=word_sums, examples=example_sums, relative_gap=g.rungs[-1][1],
        gap_target=s.gap_target, rungs=tuple(Rung(n, gap) for n, gap in g.rungs))
    if parser.cache is not None:
        with contextlib.suppress(CacheError, TypeError, ValueError):  # an uncached result is still a result
            parser.cache.set(key, result.to_dict(), model=parser.identity)
    return result
