"""Metrics of the AmP paper (Stengel-Eskin et al. 2023, §2–§4; docs/paper-notes.md §13).

Each metric is one pure function over plain data.  Decisions made once, here:

* **Matching** is equality of canonical forms (:func:`amp.logic.canonical.canonical`);
  ``mode="logical"`` (default) judges meaning up to reordering, re-bracketing within a
  connective, renaming and same-kind quantifier order; ``mode="paper"`` reproduces the original
  metric's judgement (docs/paper-notes.md §13.1).  A prediction that does not parse (or is missing,
  ``None``, or empty) **never matches**.  A gold LF that does not parse is a
  :class:`~amp.errors.MetricError`.
* **Empty input** gives ``float("nan")``, never 0: an empty set has no accuracy.  (The original
  returned 0 for an empty set, which made its revscope ZM structurally 0 because the data says
  ``scope_reverse`` — docs/paper-notes.md §13.3.  Group examples with :func:`normalise_type`.)
* **Ratios** r must lie in [0, 1]; anything else is a MetricError.
* Rates are fractions in [0, 1], except ZM_k, which is in percent like the paper's tables.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from amp.data.types import normalise_type as normalise_type  # the type aliases, declared with the types
from amp.errors import MetricError
from amp.evaluation.matching import gold_key, is_lf0_like, is_lf1_like, match_lf, prediction_key
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE
from amp.prompts import check_ratio


@dataclass(frozen=True)
class ZeroShotOutcome:
    """One zero-shot test item: the beam (best first) and the two gold LFs (docs/paper-notes.md §10)."""

    predictions: tuple[str, ...]
    lf0: str
    lf1: str


# --------------------------------------------------------------------------------------
# matching


def matches(prediction: str | None, gold: str, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT) -> bool:
    """Whether ``prediction`` equals ``gold`` after canonicalisation (docs/paper-notes.md §13.1)."""
    gold_key(gold, mode, fmt)  # a gold LF that does not parse is a MetricError, not a mismatch
    return match_lf(prediction, gold, None, mode=mode, fmt=fmt) == "lf0"


# --------------------------------------------------------------------------------------
# zero-shot


def zm_k(
    examples: Iterable[ZeroShotOutcome | tuple[Sequence[str], str, str]],
    k: int = 5,
    mode: str = DEFAULT_MODE,
    *,
    either: bool = False,
    fmt: str = DEFAULT_FORMAT,
) -> float:
    """ZM_k, the zero-shot metric (paper Eq. 1), **in percent** (0–100).

    ZM_k = 100 · mean over examples of 1[LF0 ∈ T_k] · 1[LF1 ∈ T_k], where T_k is the top-k of
    the beam (best first), padded to k with empty strings (docs/paper-notes.md §13.3).  The paper reports
    k = 5.  ``either=True`` counts examples with LF0 *or* LF1 in the top k (the original's
    ``either`` option added the indicators instead, which could exceed 100 — fixed here).

    Examples are :class:`ZeroShotOutcome` or ``(predictions, lf0, lf1)`` tuples.  ``k`` must be
    an int ≥ 1 (MetricError); ``k`` larger than the beam is fine (padding).  No examples → NaN.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise MetricError(f"k must be an integer >= 1, got {k!r}")
    total = hits = 0
    for example in examples:
        predictions, lf0, lf1 = _unpack(example)
        key0, key1 = gold_key(lf0, mode, fmt), gold_key(lf1, mode, fmt)
        top = {prediction_key(p, mode, fmt) for p in list(predictions)[:k]}
        in0, in1 = key0 in top, key1 in top
        hits += (in0 or in1) if either else (in0 and in1)
        total += 1
    return 100.0 * hits / total if total else math.nan


def _unpack(example: ZeroShotOutcome | tuple[Sequence[str], str, str]) -> tuple[Sequence[str], str, str]:
    if isinstance(example, ZeroShotOutcome):
        return example.predictions, example.lf0, example.lf1
    try:
        predictions, lf0, lf1 = example
    except (TypeError, ValueError) as exc:
        raise MetricError(
            f"an example is a ZeroShotOutcome or a (predictions, lf0, lf1) tuple, got {example!r}"
        ) from exc
    if isinstance(predictions, str):
        raise MetricError("predictions must be a list of strings (the beam), not one string")
    return predictions, lf0, lf1


# --------------------------------------------------------------------------------------
# top-1 accuracy (the per-type report, docs/paper-notes.md §13.2)


def top1_accuracy(
    top1s: Sequence[str | None],
    lf0s: Sequence[str],
    lf1s: Sequence[str],
    mode: str = DEFAULT_MODE,
    *,
    fmt: str = DEFAULT_FORMAT,
) -> dict[str, float]:
    """Rates (fractions 0–1) of the best prediction matching each reading (docs/paper-notes.md §13.2).

    Keys: ``lf0`` (top-1 = LF0), ``lf1`` (top-1 = LF1), ``either`` (LF0 or LF1), ``neither``
    (= 1 − either; includes unparseable predictions) and ``unparseable`` (top-1 missing,
    empty or not parseable).  The original reported these ×100 and counted an empty beam as
    matching neither, as here.  Sequences must have equal lengths; empty input → all NaN.
    """
    if not len(top1s) == len(lf0s) == len(lf1s):
        raise MetricError(
            f"top1s, lf0s and lf1s must have equal lengths ({len(top1s)}, {len(lf0s)}, {len(lf1s)})"
        )
    n = len(top1s)
    if n == 0:
        return dict.fromkeys(("lf0", "lf1", "either", "neither", "unparseable"), math.nan)
    c0 = c1 = ce = cu = 0
    for top1, lf0, lf1 in zip(top1s, lf0s, lf1s):
        for gold in (lf0, lf1):
            gold_key(gold, mode, fmt)  # a gold LF that does not parse is a MetricError, not a mismatch
        label = match_lf(top1, lf0, lf1, mode=mode, fmt=fmt)
        m0, m1 = is_lf0_like(label), is_lf1_like(label)
        c0 += m0
        c1 += m1
        ce += m0 or m1
        cu += label == "unparseable"
    return {"lf0": c0 / n, "lf1": c1 / n, "either": ce / n, "neither": 1 - ce / n, "unparseable": cu / n}


# --------------------------------------------------------------------------------------
# few-shot


def fdm_by_ratio(
    by_ratio: Mapping[float, Sequence[tuple[str | None, str, str]]],
    mode: str = DEFAULT_MODE,
    *,
    fmt: str = DEFAULT_FORMAT,
) -> dict[float, float]:
    """The per-ratio terms d(r) = |a0 − r| + |a1 − (1 − r)| of :func:`fdm` (docs/paper-notes.md §13.4)."""
    out: dict[float, float] = {}
    for r, items in by_ratio.items():
        ratio = check_ratio(r)
        items = list(items)
        if not items:
            raise MetricError(f"ratio {r!r} has no examples")
        try:
            top1s, lf0s, lf1s = zip(*items)
        except ValueError as exc:
            raise MetricError("few-shot examples are (top1_prediction, lf0, lf1) tuples") from exc
        acc = top1_accuracy(top1s, lf0s, lf1s, mode, fmt=fmt)
        out[ratio] = fdm_distance(acc["lf0"], acc["lf1"], ratio)
    return out


def fdm_distance(acc_lf0: float, acc_lf1: float, ratio: float) -> float:
    """One ratio's FDM term d(r) = |a0 − r| + |a1 − (1 − r)| (paper Eq. 2, docs/paper-notes.md §13.4);
    shared by :func:`fdm_by_ratio` and the bootstrap intervals of FDM (§21)."""
    return abs(acc_lf0 - ratio) + abs(acc_lf1 - (1 - ratio))


def fim_error(p_lf0: float, ratio: float) -> float:
    """One item's FIM term (P(LF0) − r)² (paper Eq. 3, docs/paper-notes.md §13.5); shared by :func:`fim`
    and the bootstrap intervals of FIM (§21)."""
    return (p_lf0 - ratio) ** 2


def fdm(
    by_ratio: Mapping[float, Sequence[tuple[str | None, str, str]]],
    mode: str = DEFAULT_MODE,
    *,
    fmt: str = DEFAULT_FORMAT,
) -> float:
    """Few-shot dataset metric FDM (paper Eq. 2).  **Range 0–2**, lower is better.

    FDM = mean over ratios r of |a0 − r| + |a1 − (1 − r)|, where a0 (a1) is the fraction of
    test items whose top-1 prediction is LF0 (LF1) when the prompt had a fraction r of LF0
    examples.  ``by_ratio`` maps r to ``(top1_prediction, lf0, lf1)`` tuples.

    The paper states a range of 0–1, but the sum of two absolute errors reaches 2: at r = 1 a
    model that always predicts LF1 has a0 = 0, a1 = 1, so d = 1 + 1 (docs/paper-notes.md §13.4).  A model
    that never predicts either LF scores exactly 1.  A ratio with no examples is a
    MetricError; no ratios at all → NaN.
    """
    terms = fdm_by_ratio(by_ratio, mode, fmt=fmt)
    return sum(terms.values()) / len(terms) if terms else math.nan


def fim(by_ratio: Mapping[float, Sequence[float]]) -> float:
    """Few-shot instance metric FIM (paper Eq. 3).  Range 0–1, lower is better.

    FIM = mean over ratios r of the mean over test items of (P(LF0) − r)², where P(LF0) comes
    from forced decoding (:func:`p_lf0`).  NaN values of P(LF0) — both minimum probabilities
    zero — are skipped, as the original's pandas mean did (docs/paper-notes.md §13.5); a ratio left with
    no values is skipped too; nothing left → NaN.  P(LF0) outside [0, 1] is a MetricError.
    """
    per_ratio: list[float] = []
    for r, values in by_ratio.items():
        ratio = check_ratio(r)
        errors = []
        for p in values:
            p = float(p)
            if math.isnan(p):
                continue
            if not 0 <= p <= 1:
                raise MetricError(f"P(LF0) must lie in [0, 1], got {p!r}")
            errors.append(fim_error(p, ratio))
        if errors:
            per_ratio.append(sum(errors) / len(errors))
    return sum(per_ratio) / len(per_ratio) if per_ratio else math.nan


def min_token_prob(probs: Sequence[float], *, drop_eos: bool = False) -> float:
    """The minimum per-token probability of a forced decode (docs/paper-notes.md §12, §13.5).

    ``drop_eos=True`` drops the last value first, as the original metric code did (its stored
    probabilities ended with the EOS token's).
    """
    values = list(probs)[:-1] if drop_eos else list(probs)
    if not values:
        raise MetricError("no token probabilities")
    return float(min(values))


def p_lf0(min_prob_lf0: float, min_prob_lf1: float) -> float:
    """P(LF0) = m0 / (m0 + m1), the normalised minimum token probability (paper §2; ref §12).

    m0 and m1 are the minimum token probabilities of the forced decodes of LF0 and LF1
    (:func:`min_token_prob`).  Both zero → NaN (FIM skips it); negative → MetricError.
    """
    m0, m1 = float(min_prob_lf0), float(min_prob_lf1)
    if math.isnan(m0) or math.isnan(m1) or m0 < 0 or m1 < 0:
        raise MetricError(f"minimum probabilities must be >= 0, got {min_prob_lf0!r}, {min_prob_lf1!r}")
    if m0 + m1 == 0:
        return math.nan
    return m0 / (m0 + m1)
