"""Interpretation-level views of a model's output: distinct top-k and sampled distributions.

Beam search returns *strings*; several beams are often the same interpretation written
differently (variable names, conjunct order).  Two complements, both grammar-constrained:

* :func:`distinct_topk` — a wider beam (``width``) whose beams are deduplicated by their
  canonical form (:func:`amp.logic.canonical.canonical` in ``mode``); unparseable beams are
  dropped; the first ``k`` distinct interpretations are kept, best first.
* :func:`sample_interpretations` — ``n`` grammar-constrained samples
  (:func:`amp.parser.search.sampling.sample_texts`, through :meth:`amp.parser.Parser.sample`), seeded
  with ``torch.manual_seed``; the estimated distribution over canonical interpretations is
  count / n, with P(LF0), P(LF1) and P(other) (unparseable/unfinished samples count as other).

Both go through the parser facade, so they work with any model backend (in-process or the
parser service) and are cached in the :class:`amp.cache.ResultCache` under the facade's keys
(model, tokenizer, device, dtype, grammar, versions and every setting).  Both return plain,
JSON-serialisable results labelled with their ``method``.  The
``topk`` list of either result is a ranked list of LF strings, so
:func:`amp.evaluation.metrics.zm_k` can be computed on it exactly as on beams.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from amp.evaluation.errors import InterpretationError
from amp.evaluation.matching import gold_key, prediction_key
from amp.logic.vocabulary import DEFAULT_FORMAT, DEFAULT_MODE, check_mode
from amp.parser.search.settings import DEFAULT_SEARCH
from amp.records import JsonRecord, NanAsNull

if TYPE_CHECKING:
    from amp.parser.parser import Parser

__all__ = [
    "METHODS",
    "DistinctTopK",
    "Interpretation",
    "SampledInterpretations",
    "distinct_from_beams",
    "distinct_topk",
    "distribution_from_samples",
    "sample_interpretations",
    "sample_with_parser",
    "samples_cached",
]

#: Ways of turning a prompt into a ranked list of LFs (what ``--method`` chooses).
METHODS: tuple[str, ...] = ("beam", "distinct", "sampling")


@dataclass(frozen=True)
class Interpretation(JsonRecord):
    """One distinct interpretation: a representative LF text, its canonical key and its weight.

    ``score`` is the GNMT score of the best beam with this reading (distinct top-k) or the
    estimated probability count / n (sampling); ``count`` how many beams/samples had it.
    """

    text: str
    canonical: str
    score: float
    count: int = 1


@dataclass(frozen=True)
class DistinctTopK(JsonRecord):
    """Result of :func:`distinct_topk`: up to ``k`` interpretations, best first."""

    interpretations: tuple[Interpretation, ...]
    k: int
    width: int
    mode: str
    fmt: str = DEFAULT_FORMAT
    n_beams: int = 0
    n_unparseable: int = 0
    method: str = "distinct"

    @property
    def topk(self) -> list[str]:
        """The representative LF texts, best first (input of ``zm_k``)."""
        return [i.text for i in self.interpretations]


@dataclass(frozen=True)
class SampledInterpretations(JsonRecord):
    """Result of :func:`sample_interpretations`.

    ``samples`` are the raw sampled texts (None = unfinished/unparseable), ``interpretations``
    the distinct canonical readings by decreasing count, ``p_lf0``/``p_lf1``/``p_other`` the
    estimated probabilities of the gold readings (NaN without golds; ``null`` in JSON).  The probabilities of
    ``interpretations`` plus ``p_unparseable`` sum to 1.
    """

    samples: tuple[str | None, ...]
    interpretations: tuple[Interpretation, ...]
    n: int
    temperature: float
    seed: int
    mode: str
    fmt: str = DEFAULT_FORMAT
    p_unparseable: float = 0.0
    p_lf0: NanAsNull = math.nan
    p_lf1: NanAsNull = math.nan
    p_other: NanAsNull = math.nan
    method: str = "sampling"
    distribution: dict[str, float] = field(default_factory=dict)

    @property
    def topk(self) -> list[str]:
        """Representative LF texts by decreasing estimated probability (input of ``zm_k``)."""
        return [i.text for i in self.interpretations]


# --------------------------------------------------------------------------- pure parts


def distinct_from_beams(beams: Any, k: int, mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT) -> list[Interpretation]:
    """The first ``k`` beams with distinct canonical forms (unparseable ones dropped), best first.

    ``beams`` are :class:`~amp.parser.core.results.Beam` objects (``text``, ``score``) or strings.
    """
    seen: dict[str, int] = {}
    out: list[Interpretation] = []
    for beam in beams:
        text = beam if isinstance(beam, str) else beam.text
        score = 0.0 if isinstance(beam, str) else float(beam.score)
        key = prediction_key(text, mode, fmt)
        if key is None:
            continue
        if key in seen:
            i = seen[key]
            out[i] = Interpretation(out[i].text, key, out[i].score, out[i].count + 1)
            continue
        seen[key] = len(out)
        out.append(Interpretation(text=text, canonical=key, score=score))
    return out[:k]


def distribution_from_samples(
    samples: list[str | None], *, lf0: str | None = None, lf1: str | None = None,
    mode: str = DEFAULT_MODE, fmt: str = DEFAULT_FORMAT,
) -> dict[str, Any]:
    """Counts / n over canonical interpretations, and P(LF0)/P(LF1)/P(other) (pure)."""
    n = len(samples)
    keys = [prediction_key(s, mode, fmt) for s in samples]
    counts = Counter(k for k in keys if k is not None)
    first_text: dict[str, str] = {}
    for s, key in zip(samples, keys, strict=True):
        if key is not None and s is not None:
            first_text.setdefault(key, s)
    order = sorted(counts, key=lambda c: (-counts[c], list(first_text).index(c)))
    interpretations = tuple(Interpretation(first_text[c], c, counts[c] / n, counts[c]) for c in order) if n else ()
    distribution = {c: counts[c] / n for c in order} if n else {}
    unparseable = (n - sum(counts.values())) / n if n else 0.0
    p0 = p1 = other = math.nan
    if n and lf0 is not None and lf1 is not None:
        g0, g1 = gold_key(lf0, mode, fmt), gold_key(lf1, mode, fmt)
        p0 = counts.get(g0, 0) / n
        p1 = counts.get(g1, 0) / n if g1 != g0 else p0
        other = 1.0 - p0 - (p1 if g1 != g0 else 0.0)
    return {"interpretations": interpretations, "distribution": distribution, "p_unparseable": unparseable,
            "p_lf0": p0, "p_lf1": p1, "p_other": other}


def _check(mode: str, k: int | None = None) -> None:
    check_mode(mode, InterpretationError)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InterpretationError(f"k must be a whole number >= 1, not {k!r}")


# --------------------------------------------------------------------------- distinct top-k


def distinct_topk(
    parser: Parser,
    prompt: str,
    k: int = 5,
    width: int = 20,
    mode: str = DEFAULT_MODE,
    *,
    fmt: str = DEFAULT_FORMAT,
    alpha: float = DEFAULT_SEARCH.alpha,
    max_new_tokens: int | None = None,
) -> DistinctTopK:
    """The top ``k`` beams with distinct canonical LFs from a constrained beam of ``width``.

    ``parser`` is an :class:`amp.parser.Parser` (any backend; its ``parse`` is cached, keyed by
    the model identity and every decoding setting, so a rerun decodes nothing).  ``width`` < ``k``
    is raised to ``k``.
    """
    _check(mode, k)
    width = max(int(width), k)
    result = parser.parse(prompt, fmt=fmt, beams=width, alpha=alpha, constrained=True,
                          max_new_tokens=max_new_tokens)
    beams = list(result.beams)
    kept = distinct_from_beams(beams, k, mode, fmt)
    unparseable = sum(1 for b in beams if prediction_key(b.text, mode, fmt) is None)
    return DistinctTopK(tuple(kept), k=k, width=width, mode=mode, fmt=fmt, n_beams=len(beams),
                        n_unparseable=unparseable)


# --------------------------------------------------------------------------- sampling


def sample_interpretations(
    parser: Parser,
    prompt: str,
    n: int = 20,
    temperature: float = 1.0,
    seed: int = 0,
    fmt: str = DEFAULT_FORMAT,
    *,
    lf0: str | None = None,
    lf1: str | None = None,
    mode: str = DEFAULT_MODE,
    max_new_tokens: int | None = None,
) -> SampledInterpretations:
    """Grammar-constrained sampling: an estimated distribution over canonical interpretations.

    ``n`` samples at ``temperature`` (no top-k/top-p truncation) after ``torch.manual_seed(seed)``
    — the same seed, model and settings give the same samples — through ``parser`` (any backend,
    :meth:`amp.parser.Parser.sample`), so they are cached under a key holding every setting, the
    model, tokenizer, device, dtype and grammar; the distribution is recomputed from them (so
    ``mode``/golds can change without sampling again).
    """
    _check(mode, n)
    if not temperature > 0:
        raise InterpretationError(f"temperature must be > 0, not {temperature!r}")
    samples = parser.sample(prompt, n=n, temperature=temperature, seed=seed, fmt=fmt, max_new_tokens=max_new_tokens)
    dist = distribution_from_samples(samples, lf0=lf0, lf1=lf1, mode=mode, fmt=fmt)
    return SampledInterpretations(samples=tuple(samples), n=n, temperature=float(temperature), seed=int(seed),
                                  mode=mode, fmt=fmt, **dist)


#: The name research code used before the backend seam; the same function.
sample_with_parser = sample_interpretations


def samples_cached(parser: Parser, prompt: str, n: int = 20, temperature: float = 1.0, seed: int = 0,
                   fmt: str = DEFAULT_FORMAT, max_new_tokens: int | None = None) -> bool:
    """Whether :func:`sample_interpretations` with these settings would be answered from the cache."""
    return parser.cached("sample", prompt=prompt, fmt=fmt, n=n, temperature=float(temperature), seed=int(seed),
                         max_new_tokens=max_new_tokens, top_k=0, top_p=1.0)
