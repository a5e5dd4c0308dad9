"""Interpretation-level views of a model's output: distinct top-k and sampled distributions.

Beam search returns *strings*; several beams are often the same interpretation written
differently (variable names, conjunct order).  Two complements, both grammar-constrained:

* :func:`distinct_topk` — a wider beam (``width``) whose beams are deduplicated by their
  canonical form (:func:`amp.logic.canonical.canonical` in ``mode``); unparseable beams are
  dropped; the first ``k`` distinct interpretations are kept, best first.
* :func:`sample_interpretations` — ``n`` grammar-constrained samples (``do_sample=True``,
  ``num_return_sequences=n``, the same :class:`~amp.parser.processors.GrammarLogitsProcessor`
  and :class:`~amp.parser.processors.GrammarStoppingCriteria` as beam search), seeded with
  ``torch.manual_seed``; the estimated distribution over canonical interpretations is
  count / n, with P(LF0), P(LF1) and P(other) (unparseable/unfinished samples count as other).

Both return plain, JSON-serialisable results labelled with their ``method`` and cached in the
:class:`amp.cache.ResultCache` (keys include the model identity and every setting).  The
``topk`` list of either result is a ranked list of LF strings, so
:func:`amp.metrics.zm_k` can be computed on it exactly as on beams.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from amp.errors import AmpError
from amp.metrics import gold_key, prediction_key

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
]

#: Ways of turning a prompt into a ranked list of LFs (what ``--method`` chooses).
METHODS: tuple[str, ...] = ("beam", "distinct", "sampling")


class InterpretationError(AmpError, ValueError):
    """Bad settings for an interpretation-level call."""


@dataclass(frozen=True)
class Interpretation:
    """One distinct interpretation: a representative LF text, its canonical key and its weight.

    ``score`` is the GNMT score of the best beam with this reading (distinct top-k) or the
    estimated probability count / n (sampling); ``count`` how many beams/samples had it.
    """

    text: str
    canonical: str
    score: float
    count: int = 1

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Interpretation:
        return cls(text=d["text"], canonical=d["canonical"], score=float(d["score"]), count=int(d["count"]))


@dataclass(frozen=True)
class DistinctTopK:
    """Result of :func:`distinct_topk`: up to ``k`` interpretations, best first."""

    interpretations: tuple[Interpretation, ...]
    k: int
    width: int
    mode: str
    fmt: str = "fol"
    n_beams: int = 0
    n_unparseable: int = 0
    method: str = "distinct"

    @property
    def topk(self) -> list[str]:
        """The representative LF texts, best first (input of ``zm_k``)."""
        return [i.text for i in self.interpretations]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DistinctTopK:
        return cls(**{**d, "interpretations": tuple(Interpretation.from_dict(i) for i in d["interpretations"])})


@dataclass(frozen=True)
class SampledInterpretations:
    """Result of :func:`sample_interpretations`.

    ``samples`` are the raw sampled texts (None = unfinished/unparseable), ``interpretations``
    the distinct canonical readings by decreasing count, ``p_lf0``/``p_lf1``/``p_other`` the
    estimated probabilities of the gold readings (NaN without golds).  The probabilities of
    ``interpretations`` plus ``p_unparseable`` sum to 1.
    """

    samples: tuple[str | None, ...]
    interpretations: tuple[Interpretation, ...]
    n: int
    temperature: float
    seed: int
    mode: str
    fmt: str = "fol"
    p_unparseable: float = 0.0
    p_lf0: float = math.nan
    p_lf1: float = math.nan
    p_other: float = math.nan
    method: str = "sampling"
    distribution: dict[str, float] = field(default_factory=dict)

    @property
    def topk(self) -> list[str]:
        """Representative LF texts by decreasing estimated probability (input of ``zm_k``)."""
        return [i.text for i in self.interpretations]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("p_lf0", "p_lf1", "p_other"):  # strict JSON: no NaN
            if isinstance(d[key], float) and math.isnan(d[key]):
                d[key] = None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SampledInterpretations:
        d = dict(d)
        for key in ("p_lf0", "p_lf1", "p_other"):
            d[key] = math.nan if d.get(key) is None else float(d[key])
        d["samples"] = tuple(d["samples"])
        d["interpretations"] = tuple(Interpretation.from_dict(i) for i in d["interpretations"])
        return cls(**d)


# --------------------------------------------------------------------------- pure parts


def distinct_from_beams(beams: Any, k: int, mode: str = "logical", fmt: str = "fol") -> list[Interpretation]:
    """The first ``k`` beams with distinct canonical forms (unparseable ones dropped), best first.

    ``beams`` are :class:`~amp.parser.results.Beam` objects (``text``, ``score``) or strings.
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
    mode: str = "logical", fmt: str = "fol",
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
    if mode not in ("logical", "paper"):
        raise InterpretationError(f"mode must be 'logical' or 'paper', not {mode!r}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InterpretationError(f"k must be a whole number >= 1, not {k!r}")


# --------------------------------------------------------------------------- distinct top-k


def distinct_topk(
    parser: Any,
    prompt: str,
    k: int = 5,
    width: int = 20,
    mode: str = "logical",
    *,
    fmt: str = "fol",
    alpha: float = 0.7,
    max_new_tokens: int | None = None,
) -> DistinctTopK:
    """The top ``k`` beams with distinct canonical LFs from a constrained beam of ``width``.

    ``parser`` is an :class:`amp.parser.Parser` (its ``parse`` is cached in the result cache,
    keyed by the model identity and every decoding setting, so a rerun decodes nothing) or a
    loaded model with ``.model``/``.tokenizer`` (uncached).  ``width`` < ``k`` is raised to ``k``.
    """
    _check(mode, k)
    width = max(int(width), k)
    if hasattr(parser, "parse"):
        result = parser.parse(prompt, fmt=fmt, beams=width, alpha=alpha, constrained=True,
                              max_new_tokens=max_new_tokens)
    else:
        from amp.parser.decode import beam_search

        result = beam_search(parser.model, parser.tokenizer, prompt, fmt=fmt, beams=width, alpha=alpha,
                             constrained=True, max_new_tokens=max_new_tokens, steps_for=0)
    beams = list(result.beams)
    kept = distinct_from_beams(beams, k, mode, fmt)
    unparseable = sum(1 for b in beams if prediction_key(b.text, mode, fmt) is None)
    return DistinctTopK(tuple(kept), k=k, width=width, mode=mode, fmt=fmt, n_beams=len(beams),
                        n_unparseable=unparseable)


# --------------------------------------------------------------------------- sampling


def _sample_texts(model: Any, tokenizer: Any, prompt: str, *, n: int, temperature: float, seed: int,
                  fmt: str, max_new_tokens: int | None) -> list[str | None]:
    import torch
    from transformers import LogitsProcessorList, StoppingCriteriaList

    from amp.parser.decode import _eos_ids, _make_beam, default_max_new_tokens
    from amp.parser.processors import GrammarLogitsProcessor, GrammarStoppingCriteria
    from amp.parser.vocab import encode_prompt, get_masker

    masker = get_masker(tokenizer, fmt)
    vocab = masker.vocab
    ids = encode_prompt(tokenizer, prompt)
    eos = _eos_ids(model, tokenizer)
    pad_id = vocab.pad_id if vocab.pad_id is not None else (eos[0] if eos else 0)
    processor = GrammarLogitsProcessor(masker, len(ids), eos, batch_size=1)
    stop = GrammarStoppingCriteria(processor)
    device = getattr(model, "device", torch.device("cpu"))
    torch.manual_seed(seed)
    with torch.inference_mode():
        out = model.generate(
            input_ids=torch.tensor([ids], dtype=torch.long, device=device),
            attention_mask=torch.ones((1, len(ids)), dtype=torch.long, device=device),
            do_sample=True, num_beams=1, num_return_sequences=n, temperature=float(temperature),
            top_k=0, top_p=1.0,
            max_new_tokens=max_new_tokens or default_max_new_tokens(tokenizer, prompt),
            logits_processor=LogitsProcessorList([processor]), stopping_criteria=StoppingCriteriaList([stop]),
            pad_token_id=pad_id, eos_token_id=eos or None,
        )
    texts: list[str | None] = []
    for row in out[:, len(ids):].tolist():
        beam = _make_beam(vocab, masker, row, processor.tracker, 0, constrained=True, fmt=fmt, alpha=0.7)
        texts.append(beam.text if beam.finished and beam.parses else None)
    return texts


def _sample_key(identity: str, prompt: str, n: int, temperature: float, seed: int, fmt: str,
                max_new_tokens: int | None) -> str:
    from amp.cache import ResultCache
    from amp.parser.parser import _grammar, _versions

    return ResultCache.key("sample", model=identity, prompt=prompt, n=int(n), temperature=float(temperature),
                           seed=int(seed), fmt=fmt, max_new_tokens=max_new_tokens, grammar=_grammar(fmt),
                           versions=_versions(), top_k=0, top_p=1.0)


def sample_interpretations(
    model: Any,
    tokenizer: Any,
    prompt: str,
    n: int = 20,
    temperature: float = 1.0,
    seed: int = 0,
    fmt: str = "fol",
    *,
    lf0: str | None = None,
    lf1: str | None = None,
    mode: str = "logical",
    max_new_tokens: int | None = None,
    cache: Any = None,
    identity: str | None = None,
) -> SampledInterpretations:
    """Grammar-constrained sampling: an estimated distribution over canonical interpretations.

    ``n`` samples (``num_return_sequences``) at ``temperature`` (no top-k/top-p truncation),
    after ``torch.manual_seed(seed)`` — the same seed, model and settings give the same samples.
    With ``cache`` (a :class:`~amp.cache.ResultCache`) and ``identity`` (the model identity)
    the samples are stored under a key holding every setting; the distribution is recomputed
    from them (so ``mode``/golds can change without sampling again).
    """
    _check(mode, n)
    if not temperature > 0:
        raise InterpretationError(f"temperature must be > 0, not {temperature!r}")
    key = None
    samples: list[str | None] | None = None
    if cache is not None and identity is not None:
        key = _sample_key(identity, prompt, n, temperature, seed, fmt, max_new_tokens)
        hit = cache.get(key)
        if hit is not None and isinstance(hit.get("samples"), list) and len(hit["samples"]) == n:
            samples = hit["samples"]
    if samples is None:
        if model is None:
            raise InterpretationError("no model given and the samples are not in the cache")
        samples = _sample_texts(model, tokenizer, prompt, n=n, temperature=temperature, seed=seed, fmt=fmt,
                                max_new_tokens=max_new_tokens)
        if key is not None:
            cache.set(key, {"samples": samples}, model=identity)
    dist = distribution_from_samples(samples, lf0=lf0, lf1=lf1, mode=mode, fmt=fmt)
    return SampledInterpretations(samples=tuple(samples), n=n, temperature=float(temperature), seed=int(seed),
                                  mode=mode, fmt=fmt, **dist)


def sample_with_parser(parser: Any, prompt: str, n: int = 20, temperature: float = 1.0, seed: int = 0,
                       fmt: str = "fol", **kwargs: Any) -> SampledInterpretations:
    """:func:`sample_interpretations` with a :class:`~amp.parser.Parser`'s model and cache.

    The model loads only on a cache miss (the key uses ``parser.identity``).
    """
    cache = parser.cache
    identity = parser.identity
    if cache is not None:
        full = _sample_key(identity, prompt, n, temperature, seed, fmt, kwargs.get("max_new_tokens"))
        if full in cache:
            return sample_interpretations(None, None, prompt, n, temperature, seed, fmt, cache=cache,
                                          identity=identity, **kwargs)
    lm = parser.load()
    with lm.lock:
        return sample_interpretations(lm.model, lm.tokenizer, prompt, n, temperature, seed, fmt, cache=cache,
                                      identity=identity, **kwargs)
