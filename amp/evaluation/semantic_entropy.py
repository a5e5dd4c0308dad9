"""Meaning-level uncertainty: semantic entropy over the canonical meanings of beams or samples
(docs/paper-notes.md §17; Kuhn, Gal and Farquhar 2023, *Semantic Uncertainty*, ICLR).

Entropy over output *strings* counts ``exists x . man(x) AND tall(x)`` and
``exists y . tall(y) AND man(y)`` as two outcomes; semantic entropy first groups the outputs
into meaning classes and takes the entropy of the class distribution.  Here a meaning class is a
canonical form (:func:`amp.logic.canonical.canonical`, ``logical`` mode by default: equal up to
conjunct order, variable names and same-kind quantifier order), so the classes are exactly the
meanings :func:`amp.evaluation.matching.match_lf` tells apart.

For outputs ``s_1 … s_n`` (the beams of one search, or samples) with weights ``w_i`` —
``exp(log p(s_i | x))`` for beams, 1 per draw for samples — each class ``C`` gets the mass

    p(C | x) = Σ_{s_i ∈ C} w_i / Σ_i w_i

(the mass is normalised over the outputs found, as Kuhn et al. do for their sampled set), and

    SE(x) = − Σ_C p(C | x) · ln p(C | x)      (nats; 0 for one meaning, ln m for m equal ones).

An output that does not read as an LF has no meaning to compare: each distinct such text is its
own class (two different malformed strings are not taken to mean the same).  The mass is also
split by what the classes are against the two gold readings: ``p_lf0`` (classes matching LF0),
``p_lf1`` and ``p_neither`` (every other class, unparseable ones included); when the two golds
canonicalise alike a class matching both counts for both (as ``both`` does in the accuracies,
docs/paper-notes.md §13.4), so only then can ``p_lf0 + p_lf1 + p_neither`` exceed 1.  Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from amp.evaluation.errors import SemanticEntropyError
from amp.evaluation.matching import Match, is_lf0_like, is_lf1_like, match_lf, prediction_key
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, check_mode
from amp.records import JsonRecord

__all__ = ["MeaningClass", "SemanticEntropy", "SemanticEntropyError", "beam_shares", "semantic_entropy"]


@dataclass(frozen=True)
class MeaningClass(JsonRecord):
    """One meaning: its canonical ``key`` (the raw text for an unparseable output), a
    representative ``text`` (its first output), ``mass`` p(C | x), ``count`` outputs and ``match``
    (what :func:`~amp.evaluation.matching.match_lf` says of it against the gold readings)."""

    key: str
    text: str
    mass: float
    count: int
    match: str


@dataclass(frozen=True)
class SemanticEntropy(JsonRecord):
    """Semantic entropy (nats) of a set of outputs and where its mass lies (module docstring).

    ``n`` outputs with positive weight, ``classes`` by mass (largest first), ``n_meanings`` their
    number; ``p_lf0``/``p_lf1``/``p_neither`` the mass on LF0, LF1 and neither.
    """

    entropy: float
    p_lf0: float
    p_lf1: float
    p_neither: float
    n: int
    n_meanings: int
    classes: tuple[MeaningClass, ...] = ()


def beam_shares(logprobs: Sequence[float]) -> tuple[float, ...]:
    """Each beam's share of the beams' probability mass, ``exp(lp_i) / Σ exp(lp_j)`` (stable).

    ``-inf`` (a filler beam) gets 0; NaN anywhere (no probability known) or no finite value
    gives ``()`` (the outputs are then weighed equally).
    """
    values = [float(v) for v in logprobs]
    if not values or any(math.isnan(v) for v in values):
        return ()
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return ()
    top = max(finite)
    raw = [math.exp(v - top) if math.isfinite(v) else 0.0 for v in values]
    total = math.fsum(raw)
    return tuple(r / total for r in raw)


def semantic_entropy(
    outputs: Sequence[str | None],
    weights: Sequence[float] | None = None,
    lf0: str | None = None,
    lf1: str | None = None,
    *,
    mode: str = DEFAULT_MODE,
    fmt: str = DEFAULT_FORMAT,
) -> SemanticEntropy:
    """Semantic entropy of ``outputs`` under ``weights`` (module docstring, docs/paper-notes.md §17).

    ``weights``: one non-negative number per output (probabilities or shares, normalised here;
    :func:`beam_shares` turns beam log-probs into shares), or ``None``/empty for equal weights
    (samples: each draw counts once).  ``lf0``/``lf1`` the gold readings (``None`` matches
    nothing).  Raises :class:`SemanticEntropyError` for mismatched lengths, a negative or
    non-finite weight, or no output with positive weight.
    """
    check_mode(mode, SemanticEntropyError)
    texts = list(outputs)
    ws = [1.0] * len(texts) if not weights else [float(w) for w in weights]
    if len(ws) != len(texts):
        raise SemanticEntropyError(f"got {len(texts)} outputs but {len(ws)} weights")
    bad = next((w for w in ws if not math.isfinite(w) or w < 0), None)
    if bad is not None:
        raise SemanticEntropyError(f"weights must be finite and non-negative, got {bad!r}")
    total = math.fsum(ws)
    if not texts or total <= 0:
        raise SemanticEntropyError("semantic entropy needs at least one output with positive weight")
    masses: dict[str, float] = {}
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for text, w in zip(texts, ws, strict=True):
        if w == 0:
            continue
        key = prediction_key(text, mode, fmt)
        key = key if key is not None else f"unparseable:{text or ''}"
        masses[key] = masses.get(key, 0.0) + w / total
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, text or "")
    classes = tuple(sorted(
        (MeaningClass(key=k, text=first[k], mass=m, count=counts[k],
                      match=str(match_lf(first[k], lf0, lf1, mode=mode, fmt=fmt)))
         for k, m in masses.items()),
        key=lambda c: (-c.mass, c.key)))
    entropy = max(0.0, -math.fsum(c.mass * math.log(c.mass) for c in classes if c.mass > 0))
    p0 = math.fsum(c.mass for c in classes if is_lf0_like(c.match))
    p1 = math.fsum(c.mass for c in classes if is_lf1_like(c.match))
    other = math.fsum(c.mass for c in classes if c.match in (Match.NEITHER, Match.UNPARSEABLE))
    return SemanticEntropy(entropy=entropy, p_lf0=p0, p_lf1=p1, p_neither=other, n=sum(counts.values()),
                           n_meanings=len(classes), classes=classes)
