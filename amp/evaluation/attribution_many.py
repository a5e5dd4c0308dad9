"""Attribution over many sentences: which words and roles push toward LF0, how sure that is, and
where the two methods disagree (issue #46 point 5; docs/paper-notes.md §18).

For every test sentence (pool sentences: from a file, or drawn from a template's pool) a mixed
prompt is built (:func:`amp.prompts.mixed_prompt`, the same ``ratio``, ``seed`` and ``k`` for all)
and attributed by **both** methods (:func:`amp.evaluation.attribution.attribute`, cached).  Each
word of the test sentence is a **unit**: its template role where the word fills a slot of the
sentence's template (``np1``, ``vp1``, ``np2``, ``np3`` …, from the pair's variable bindings), else
the word itself (``the``, ``with``); a unit's value in a sentence is the sum over its words.  Per
method and unit the mean over the sentences that have it gets a percentile-bootstrap interval
(:func:`amp.evaluation.bootstrap.bootstrap_interval`, resampling sentences); per unit the share of
sentences where the two methods give opposite signs gets one too, and per sentence Spearman's ρ
between the methods' word attributions is averaged (with its interval).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from amp.data.generate import AmbiguousPair, find_pair, pairs
from amp.data.types import find_type
from amp.evaluation.attribution import (
    DEFAULT_GAP_TARGET,
    DEFAULT_STEPS,
    METHODS,
    Attribution,
    Baseline,
    attribute,
    check_settings,
)
from amp.evaluation.bootstrap import DEFAULT_RESAMPLES, Interval, bootstrap_interval
from amp.evaluation.errors import AttributionError
from amp.evaluation.influence import _spearman
from amp.parser.core import limits
from amp.prompts import EXAMPLES_PER_PROMPT, mixed_prompt
from amp.records import JsonFloat, JsonRecord

if TYPE_CHECKING:
    from amp.parser.parser import Parser

__all__ = [
    "MAX_SENTENCES",
    "ManyAttribution",
    "SentenceAttribution",
    "UnitValue",
    "UnitSummary",
    "attribute_many",
    "sentences_from_template",
    "sentences_from_text",
    "units",
]

#: Sentences of one many-sentence attribution (each costs two attributions).
MAX_SENTENCES = 500


@dataclass(frozen=True)
class UnitValue(JsonRecord):
    """One unit of one sentence: its name (a role or a word), the words it covers, and its summed attribution."""

    unit: str
    words: str
    attribution: JsonFloat


@dataclass(frozen=True)
class SentenceAttribution(JsonRecord):
    """One sentence under one method: f(x), f(x′), the steps and relative completeness gap, its units."""

    sentence: str
    template: str
    method: str
    value: JsonFloat
    baseline_value: JsonFloat
    steps: int
    relative_gap: JsonFloat
    target_met: bool | None
    units: tuple[UnitValue, ...]

    def of(self, unit: str) -> float | None:
        return next((u.attribution for u in self.units if u.unit == unit), None)


@dataclass(frozen=True)
class UnitSummary(JsonRecord):
    """One unit over the sentences: each method's mean attribution with its interval, and the share
    of sentences where the two methods give opposite signs (with its interval)."""

    unit: str
    role: bool
    input_x_gradient: Interval
    integrated_gradients: Interval
    sign_disagreement: Interval


@dataclass(frozen=True)
class ManyAttribution(JsonRecord):
    """The many-sentence attribution (module docstring) and the settings it ran with."""

    ratio: float
    seed: int
    k: int
    target: str
    baseline: str
    steps: int
    gap_target: float | None
    sentences: tuple[SentenceAttribution, ...]
    summary: tuple[UnitSummary, ...]
    rank_agreement: Interval
    gap_met: int

    def rows(self) -> list[dict[str, object]]:
        """One flat row per unit (for CSV): both methods' means and intervals and the disagreement."""
        out: list[dict[str, object]] = []
        for s in self.summary:
            row: dict[str, object] = {"unit": s.unit, "role": s.role}
            for name, iv in (("input_x_gradient", s.input_x_gradient), ("integrated_gradients", s.integrated_gradients),
                             ("sign_disagreement", s.sign_disagreement)):
                row.update({f"{name}_mean": iv.estimate, f"{name}_low": iv.low, f"{name}_high": iv.high,
                            f"{name}_n": iv.n})
            out.append(row)
        return out


def sentences_from_text(text: str) -> list[AmbiguousPair]:
    """The pool sentences of a text, one a line (blank lines and ``#`` comments skipped);
    :class:`AttributionError` naming the line of a sentence no pool holds."""
    found: list[AmbiguousPair] = []
    for number, line in enumerate(text.splitlines(), 1):
        sentence = line.strip()
        if not sentence or sentence.startswith("#"):
            continue
        pair = find_pair(sentence)
        if pair is None:
            raise AttributionError(f"line {number}: {sentence[:80]!r} is not an ambiguous sentence of any pool")
        found.append(pair)
    if not found:
        raise AttributionError("the sentence file holds no sentence")
    limits.check_count(len(found), "sentences", MAX_SENTENCES)
    return found


def sentences_from_template(template: str, count: int, seed: int = 0) -> list[AmbiguousPair]:
    """``count`` sentences drawn without replacement (``default_rng(seed)``) from the pool of a
    template id or id prefix (``pp/visual/a``, ``pp/visual``), in pool order."""
    kind = find_type(template.split("/")[0]) if isinstance(template, str) else None
    if kind is None:
        raise AttributionError(f"{template!r} names no template: give an id such as pp/visual/a (type/…)")
    count = limits.check_count(count, "count", MAX_SENTENCES)
    pool = pairs(kind.id, template=template)
    if not pool:
        raise AttributionError(f"no sentence of the {kind.id} pool comes from a template {template!r}")
    chosen = np.random.default_rng(limits.check_seed(seed)).choice(len(pool), size=min(count, len(pool)),
                                                                    replace=False)
    return [pool[i] for i in sorted(int(i) for i in chosen)]


def units(pair: AmbiguousPair, attr: Attribution) -> tuple[UnitValue, ...]:
    """The sentence's words as units (module docstring): a word inside a slot's value takes the
    slot's name, any other word its own (lower case); values summed per unit, first-seen order."""
    words = [w.word for w in attr.words]
    role_of: list[str | None] = [None] * len(words)
    for slot, value in pair.var_bindings.items():
        parts = value.split()
        for start in range(len(words) - len(parts) + 1):
            if words[start:start + len(parts)] == parts and all(r is None for r in role_of[start:start + len(parts)]):
                role_of[start:start + len(parts)] = [slot] * len(parts)
                break
    sums: dict[str, tuple[list[str], float]] = {}
    for w, role in zip(attr.words, role_of, strict=True):
        name = role or w.word.lower()
        seen, total = sums.get(name, ([], 0.0))
        sums[name] = ([*seen, w.word], total + w.attribution)
    return tuple(UnitValue(name, " ".join(ws), total) for name, (ws, total) in sums.items())


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def attribute_many(
    parser: Parser, sentences: Sequence[AmbiguousPair], *, ratio: float = 0.3, seed: int = 0,
    k: int = EXAMPLES_PER_PROMPT, target: str = "divergence", baseline: Baseline | str = Baseline.ZERO,
    steps: int = DEFAULT_STEPS, gap_target: float | None = DEFAULT_GAP_TARGET, max_steps: int | None = None,
    resamples: int = DEFAULT_RESAMPLES, progress: Callable[[int, int], None] | None = None,
) -> ManyAttribution:
    """Both methods on every sentence's mixed prompt, summarised per unit (module docstring).
    ``progress(done, total)`` counts attributions (two per sentence)."""
    if not sentences:
        raise AttributionError("no sentence to attribute")
    limits.check_count(len(sentences), "sentences", MAX_SENTENCES)
    s = check_settings(target, "integrated_gradients", steps, max_steps, baseline, gap_target)
    per_method: dict[str, list[SentenceAttribution]] = {m: [] for m in METHODS}
    total, done = len(sentences) * len(METHODS), 0
    if progress is not None:
        progress(0, total)
    for pair in sentences:
        prompt = mixed_prompt(pair, ratio, seed=seed, k=k)
        for method in METHODS:
            attr = attribute(parser, prompt, target=s.target, method=method, steps=s.steps,
                             baseline=s.baseline, gap_target=s.gap_target, max_steps=s.max_steps)
            per_method[method].append(SentenceAttribution(
                sentence=pair.surface, template=pair.template, method=method, value=attr.value,
                baseline_value=attr.baseline_value, steps=attr.steps, relative_gap=attr.relative_gap,
                target_met=attr.target_met, units=units(pair, attr)))
            done += 1
            if progress is not None:
                progress(done, total)
    ixg, ig = per_method["input_x_gradient"], per_method["integrated_gradients"]
    roles = {slot for pair in sentences for slot in pair.var_bindings}
    names = list(dict.fromkeys(u.unit for row in ig for u in row.units))
    summary = []
    for name in names:
        both = [(a.of(name), b.of(name)) for a, b in zip(ixg, ig, strict=True)]
        present = [(a, b) for a, b in both if a is not None and b is not None]
        ixg_iv = bootstrap_interval([a for a, _ in present], _mean, resamples=resamples, seed=seed)
        ig_iv = bootstrap_interval([b for _, b in present], _mean, resamples=resamples, seed=seed)
        split = bootstrap_interval([float(a * b < 0) for a, b in present], _mean, resamples=resamples, seed=seed)
        summary.append(UnitSummary(unit=name, role=name in roles, input_x_gradient=ixg_iv,
                                   integrated_gradients=ig_iv, sign_disagreement=split))
    rhos = []
    for a, b in zip(ixg, ig, strict=True):
        rho = _spearman([u.attribution for u in a.units], [u.attribution for u in b.units])
        if rho is not None:
            rhos.append(rho)
    return ManyAttribution(
        ratio=float(ratio), seed=seed, k=k, target=s.target, baseline=s.baseline.value, steps=s.steps,
        gap_target=s.gap_target, sentences=tuple(ixg + ig), summary=tuple(summary),
        rank_agreement=bootstrap_interval(rhos, _mean, resamples=resamples, seed=seed),
        gap_met=sum(1 for row in ig if row.target_met))
