"""The default rule for a GGUF on a CPU (issue #42 point 4), on what a researcher reads (pure).

llama.cpp may stay the default engine when, on the same N ≥ 200 sweep items (all five types, zero-
and few-shot, ratios 0 / 0.5 / 1), it agrees with transformers in float32 on the numbers the
reproduction reports (docs/paper-notes.md §24):

(a) for each type and statistic — ZM_k of the zero-shot items (k the bench's beam count), FDM of
    the few-shot items, mean P(LF0) (the records' ``p_lf0``, the paper's min-prob measure) of the
    zero-shot items and of the few-shot items at each ratio — llama.cpp's value lies within the
    95 % percentile-bootstrap interval of transformers' own estimate, computed by the project's
    functions (:func:`amp.evaluation.sweep_intervals.zeroshot_with_intervals` and
    :func:`~amp.evaluation.sweep_intervals.fewshot_with_intervals`: test sentences resampled within
    their type, the paired ratios together, §21);
(b) no item flips reading (P(LF0) ≥ 0.5 on one engine, < 0.5 on the other) where
    |P(LF0) − 0.5| > ``flip_margin`` (0.1) on either engine;
(c) the mean |ΔP(LF0)| over the items both engines scored is ≤ ``max_mean_delta`` (0.02).

Item-level agreement of the top beam's match is reported (:attr:`Verdict.same_match`), not gated:
between two approximations of one GGUF it counts noise, not what a reader sees.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from errors import AgreementError

from amp.evaluation.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, Interval
from amp.evaluation.sweep_intervals import (
    BootstrapSettings,
    fewshot_with_intervals,
    interval_columns,
    zeroshot_with_intervals,
)
from amp.evaluation.sweep_run import SweepRecord
from amp.evaluation.sweep_summary import fewshot_summary, zeroshot_summary

__all__ = [
    "AgreementRule",
    "ItemPair",
    "StatisticRow",
    "Verdict",
    "is_flip",
    "judge",
    "lies_inside",
    "pair_items",
    "split_items",
    "statistic_rows",
]

#: P(LF0) at or above this reads LF0, below it LF1.
READING_THRESHOLD = 0.5
#: The statistic names of the table (ZM's name carries k: :meth:`AgreementRule.zm_name`).
FDM = "FDM"
MEAN_P = "mean P(LF0)"


@dataclass(frozen=True)
class AgreementRule:
    """The rule's settings, checked once here: the bootstrap's ``level``, ``resamples`` and ``seed``;
    ``k`` of ZM_k; the ``flip_margin`` around 0.5 inside which a flip does not count; the largest
    mean |ΔP(LF0)| that holds; the fewest items (``min_items``) on which a verdict is given."""

    level: float = DEFAULT_LEVEL
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    k: int = 5
    flip_margin: float = 0.1
    max_mean_delta: float = 0.02
    min_items: int = 200

    def __post_init__(self) -> None:
        for name in ("resamples", "k", "min_items"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise AgreementError(f"the agreement rule's {name} must be a whole number >= 1, not {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise AgreementError(f"the agreement rule's seed must be a whole number >= 0, not {self.seed!r}")
        if not 0.0 < float(self.level) < 1.0:
            raise AgreementError(f"the agreement rule's level must lie strictly between 0 and 1, not {self.level!r}")
        if not 0.0 <= float(self.flip_margin) < 0.5:
            raise AgreementError(f"the agreement rule's flip_margin must lie in [0, 0.5), not {self.flip_margin!r}")
        if not 0.0 <= float(self.max_mean_delta) <= 1.0:
            raise AgreementError(f"the agreement rule's max_mean_delta must lie in [0, 1], not {self.max_mean_delta!r}")

    @property
    def boot(self) -> BootstrapSettings:
        return BootstrapSettings(resamples=self.resamples, level=self.level, seed=self.seed)

    @property
    def zm_name(self) -> str:
        return f"ZM_{self.k}"


@dataclass(frozen=True)
class StatisticRow:
    """One cell of the agreement table: a statistic of one type (``where``: ``zero``, ``few`` or
    ``few r=0.50``), transformers' estimate with its interval, llama.cpp's value, and whether it lies inside."""

    type: str
    statistic: str
    where: str
    reference: Interval
    candidate: float
    inside: bool


@dataclass(frozen=True)
class ItemPair:
    """One item on both engines: its key's text, each engine's P(LF0) (None: not scored) and top-beam match."""

    key: str
    p_reference: float | None
    p_candidate: float | None
    match_reference: str
    match_candidate: str

    @property
    def delta(self) -> float | None:
        """|ΔP(LF0)|, None unless both engines scored the item."""
        if self.p_reference is None or self.p_candidate is None:
            return None
        return abs(self.p_reference - self.p_candidate)


@dataclass(frozen=True)
class Verdict:
    """The rule's outcome: the table's ``rows``, the ``flips`` that count, the mean |ΔP(LF0)| over
    ``n_scored`` items, ``same_match`` of ``n_paired`` items (reported only), ``holds`` and, when it
    does not, the ``reasons`` in words."""

    rows: tuple[StatisticRow, ...]
    flips: tuple[ItemPair, ...]
    mean_abs_delta: float
    max_abs_delta: float
    n_items: int
    n_paired: int
    n_scored: int
    same_match: int
    holds: bool
    reasons: tuple[str, ...]


def split_items(n: int, n_types: int, n_ratios: int) -> tuple[int, int]:
    """(zero-shot sentences per type, few-shot sentences per type) for about ``n`` items: each type gets
    ``n // n_types`` items, ``round(n // n_types / (1 + n_ratios))`` few-shot sentences (each one item per
    ratio) and the rest zero-shot, at least one of each: 200 items over 5 types and 3 ratios → (10, 10),
    10 + 3 · 10 = 40 a type, 200 in all."""
    for name, value in (("N", n), ("the number of types", n_types), ("the number of ratios", n_ratios)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise AgreementError(f"{name} must be a whole number >= 1, not {value!r}")
    per_type = n // n_types
    n_few = max(1, round(per_type / (1 + n_ratios)))
    return max(1, per_type - n_ratios * n_few), n_few


def lies_inside(reference: Interval, value: float) -> bool:
    """Whether ``value`` lies in ``[low, high]`` (ends included); a statistic undefined on both engines
    (NaN) agrees, one defined on one side only, or without an interval, does not."""
    if math.isnan(value) or math.isnan(reference.low) or math.isnan(reference.high):
        return math.isnan(value) and math.isnan(reference.estimate)
    return reference.low <= value <= reference.high


def is_flip(p_reference: float, p_candidate: float, margin: float) -> bool:
    """Whether the two P(LF0) read differently (≥ 0.5 is LF0) and one of them lies more than ``margin`` from 0.5."""
    differ = (p_reference >= READING_THRESHOLD) != (p_candidate >= READING_THRESHOLD)
    far = abs(p_reference - READING_THRESHOLD) > margin or abs(p_candidate - READING_THRESHOLD) > margin
    return differ and far


def pair_items(reference: Mapping[Any, SweepRecord], candidate: Mapping[Any, SweepRecord],
               keys: Sequence[Any]) -> tuple[ItemPair, ...]:
    """The items of ``keys`` both engines hold, in that order (a key's ``text()`` names it if it has one)."""
    out = []
    for key in keys:
        if key in reference and key in candidate:
            r, c = reference[key], candidate[key]
            name = key.text() if hasattr(key, "text") else str(key)
            out.append(ItemPair(name, r.p_lf0, c.p_lf0, r.match, c.match))
    return tuple(out)


def _rows(ref: Any, cand: Any, stat: str, name: str, where: Any) -> list[StatisticRow]:
    """A row per type (and ratio) of ``ref``'s frame with intervals, against ``cand``'s summary frame."""
    low_col, high_col = interval_columns(stat)
    by = ["type", "ratio"] if "ratio" in ref.columns else ["type"]
    values = {tuple(row[c] for c in by): float(row[stat]) for _, row in cand.iterrows()}
    rows = []
    for _, row in ref.iterrows():
        at = tuple(row[c] for c in by)
        reference = Interval(float(row[stat]), float(row[low_col]), float(row[high_col]), int(row["n"]))
        value = values.get(at, math.nan)
        rows.append(StatisticRow(str(row["type"]), name, where(at), reference, value, lies_inside(reference, value)))
    return rows


def statistic_rows(reference: Sequence[SweepRecord], candidate: Sequence[SweepRecord],
                   rule: AgreementRule = AgreementRule()) -> tuple[StatisticRow, ...]:
    """Rule (a)'s table: per type, ZM_k and mean P(LF0) of the zero-shot records, FDM of the few-shot
    records and their mean P(LF0) at each ratio; transformers' (``reference``) estimates with intervals
    by the project's summaries (module docstring), llama.cpp's (``candidate``) values by the same summaries."""
    rows: list[StatisticRow] = []
    ref_zero = [r for r in reference if r.ratio is None]
    cand_zero = [r for r in candidate if r.ratio is None]
    if ref_zero:
        ref = zeroshot_with_intervals(ref_zero, k=rule.k, boot=rule.boot)
        cand = zeroshot_summary(cand_zero, k=rule.k)
        rows += _rows(ref, cand, rule.zm_name, rule.zm_name, lambda at: "zero")
        rows += _rows(ref, cand, "mean_p_lf0", MEAN_P, lambda at: "zero")
    ref_few = [r for r in reference if r.ratio is not None]
    cand_few = [r for r in candidate if r.ratio is not None]
    if ref_few:
        ref_ratio, ref_type = fewshot_with_intervals(ref_few, boot=rule.boot)
        cand_ratio, cand_type = fewshot_summary(cand_few)
        rows += _rows(ref_type, cand_type, FDM, FDM, lambda at: "few")
        rows += _rows(ref_ratio, cand_ratio, "mean_p_lf0", MEAN_P, lambda at: f"few r={float(at[1]):.2f}")
    return tuple(rows)


def judge(rows: Sequence[StatisticRow], pairs: Sequence[ItemPair], n_items: int,
          rule: AgreementRule = AgreementRule()) -> Verdict:
    """The verdict of rules (a)–(c) on the table ``rows`` and the item ``pairs`` of ``n_items`` planned
    items (every planned item must be on both engines, and there must be ``rule.min_items``)."""
    reasons = []
    if n_items < rule.min_items:
        reasons.append(f"only {n_items} items: the rule needs at least {rule.min_items}")
    if len(pairs) < n_items:
        reasons.append(f"{n_items - len(pairs)} of the {n_items} items are missing on an engine")
    outside = [r for r in rows if not r.inside]
    if outside:
        reasons.append(f"{len(outside)} of {len(rows)} statistics outside transformers' interval: "
                       + ", ".join(f"{r.type} {r.statistic} ({r.where})" for r in outside))
    flips = tuple(p for p in pairs if p.p_reference is not None and p.p_candidate is not None
                  and is_flip(p.p_reference, p.p_candidate, rule.flip_margin))
    if flips:
        reasons.append(f"{len(flips)} item(s) flip reading with |P(LF0) - 0.5| > {rule.flip_margin:g} on an engine")
    deltas = [d for d in (p.delta for p in pairs) if d is not None]
    mean_delta = math.fsum(deltas) / len(deltas) if deltas else math.nan
    if not deltas:
        reasons.append("no item was scored on both engines")
    elif not mean_delta <= rule.max_mean_delta:
        reasons.append(f"mean |dP(LF0)| {mean_delta:.4f} > {rule.max_mean_delta:g}")
    return Verdict(rows=tuple(rows), flips=flips, mean_abs_delta=mean_delta, max_abs_delta=max(deltas, default=math.nan),
                   n_items=n_items, n_paired=len(pairs), n_scored=len(deltas),
                   same_match=sum(p.match_reference == p.match_candidate for p in pairs),
                   holds=not reasons, reasons=tuple(reasons))
