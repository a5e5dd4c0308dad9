"""The parser facade: one object that loads a model lazily and answers through the result cache.

``Parser("default").parse(prompt)`` runs grammar-constrained beam search
(:func:`amp.parser.decode.beam_search`), ``score``/``score_pair`` run forced decoding
(:mod:`amp.parser.scoring`), and ``inspect`` puts both together with the first token where the
predicted parse and the other reading diverge (paper Fig. 4).

Every result goes through :class:`amp.cache.ResultCache` as JSON, keyed by everything it
depends on: model and tokenizer identity, the decoding grammar's text, the prompt, the LF(s),
every decoding setting, device kind, dtype and library versions.  The model is loaded only on
the first cache *miss*; a warm call needs neither the model nor a model import (identities are
computed from the spec and file hashes).  Calls that use the model hold the model's lock, so
one ``Parser`` can be shared between threads and Streamlit sessions.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from typing import Any, TypeVar

from amp.cache import CacheWarning, ResultCache
from amp.errors import CacheError
from amp.parser import models
from amp.parser.results import (
    Beam,
    Divergence,
    ForcedScore,
    PairScore,
    ParseResult,
    TokenStep,
)

T = TypeVar("T")

#: Beam labels in an :class:`Inspection`.
LF0, LF1, NEITHER = "lf0", "lf1", "neither"


@dataclass(frozen=True)
class Inspection:
    """A parse, both readings' forced scores, and where the parse and the other reading diverge.

    ``matches[i]`` says whether beam ``i`` is LF0, LF1 or neither (equality of canonical forms
    in ``canonical_mode``; whitespace-normalised string equality if the canonicaliser is not
    available or the beam does not parse).  ``predicted`` is the top beam; ``alternative`` names
    the *other* gold LF (``"lf1"`` when the top beam is LF0 and vice versa; when the top beam is
    neither, the gold LF the model prefers by ``pair.p_lf0``).  ``divergence`` compares the
    predicted beam's token steps with the alternative's forced-decoding steps (``None`` when
    there is no beam).
    """

    prompt: str
    lf0: str
    lf1: str
    fmt: str
    parse: ParseResult
    pair: PairScore
    matches: tuple[str, ...]
    predicted: Beam | None
    predicted_match: str
    predicted_steps: tuple[TokenStep, ...]
    alternative: str
    alternative_lf: str
    alternative_steps: tuple[TokenStep, ...]
    divergence: Divergence | None
    canonical_mode: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "lf0": self.lf0,
            "lf1": self.lf1,
            "fmt": self.fmt,
            "parse": self.parse.to_dict(),
            "pair": self.pair.to_dict(),
            "matches": list(self.matches),
            "predicted": self.predicted.to_dict() if self.predicted else None,
            "predicted_match": self.predicted_match,
            "predicted_steps": [s.to_dict() for s in self.predicted_steps],
            "alternative": self.alternative,
            "alternative_lf": self.alternative_lf,
            "alternative_steps": [s.to_dict() for s in self.alternative_steps],
            "divergence": self.divergence.to_dict() if self.divergence else None,
            "canonical_mode": self.canonical_mode,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Inspection:
        return cls(
            prompt=d["prompt"],
            lf0=d["lf0"],
            lf1=d["lf1"],
            fmt=d["fmt"],
            parse=ParseResult.from_dict(d["parse"]),
            pair=PairScore.from_dict(d["pair"]),
            matches=tuple(d["matches"]),
            predicted=Beam.from_dict(d["predicted"]) if d.get("predicted") else None,
            predicted_match=d["predicted_match"],
            predicted_steps=tuple(TokenStep.from_dict(s) for s in d["predicted_steps"]),
            alternative=d["alternative"],
            alternative_lf=d["alternative_lf"],
            alternative_steps=tuple(TokenStep.from_dict(s) for s in d["alternative_steps"]),
            divergence=Divergence.from_dict(d["divergence"]) if d.get("divergence") else None,
            canonical_mode=d["canonical_mode"],
        )


class Parser:
    """Cached, lazily loaded access to one language model for parsing and scoring.

    ``spec``/``device``/``dtype``/``trust_remote_code``/``gguf_file`` are as in
    :func:`amp.parser.models.load_model`.  ``cache``: ``True`` for the default
    :class:`ResultCache` (``cache/results``), a ``ResultCache`` to share one, or
    ``None``/``False`` for none.  If the default cache cannot be opened, a
    :class:`~amp.cache.CacheWarning` is emitted and the parser runs uncached.  ``top_n`` is the
    number of alternative tokens recorded per position.
    """

    def __init__(
        self,
        spec: str = models.DEFAULT_SPEC,
        *,
        device: str | None = None,
        dtype: str | None = None,
        trust_remote_code: bool = False,
        gguf_file: str | None = None,
        cache: ResultCache | None | bool = True,
        top_n: int = 5,
    ) -> None:
        self.spec = spec or models.DEFAULT_SPEC
        self._device_arg = device
        self._dtype_arg = dtype
        self.trust_remote_code = trust_remote_code
        self.gguf_file = gguf_file
        self.top_n = top_n
        self._lm: models.LoadedModel | None = None
        self._load_lock = threading.Lock()
        self._ids: tuple[str, str] | None = None
        self._resolved: tuple[str, str] | None = None
        if cache is True:
            try:
                self.cache: ResultCache | None = ResultCache()
            except CacheError as exc:
                warnings.warn(f"running without the result cache: {exc}", CacheWarning, stacklevel=2)
                self.cache = None
        else:  # (an empty ResultCache is falsy: it has __len__)
            self.cache = cache if isinstance(cache, ResultCache) else None

    # -- what the model is, without loading it ------------------------------------------------------

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (only happens on a cache miss)."""
        return self._lm is not None

    @property
    def identity(self) -> str:
        """The model identity used in cache keys (see :func:`amp.parser.models.identities`)."""
        return self._identities()[0]

    @property
    def tokenizer_identity(self) -> str:
        return self._identities()[1]

    @property
    def device(self) -> str:
        """The device the model runs (or will run) on."""
        return self._lm.device if self._lm else self._device_dtype()[0]

    @property
    def dtype(self) -> str:
        """The dtype the model runs (or will run) in."""
        return self._lm.dtype if self._lm else self._device_dtype()[1]

    def _identities(self) -> tuple[str, str]:
        if self._lm is not None:
            return self._lm.identity, self._lm.tokenizer_identity
        if self._ids is None:
            self._ids = models.identities(self.spec, self.gguf_file)
        return self._ids

    def _device_dtype(self) -> tuple[str, str]:
        if self._resolved is None:
            dev = models.select_device(self._device_arg)
            self._resolved = (dev, models.select_dtype(dev, self._dtype_arg))
        return self._resolved

    def load(self) -> models.LoadedModel:
        """The loaded model, loading it now if needed (raises :class:`ModelLoadError`)."""
        if self._lm is None:
            with self._load_lock:
                if self._lm is None:
                    dev, dt = self._device_dtype()
                    self._lm = models.load_model(
                        self.spec, device=dev, dtype=dt,
                        trust_remote_code=self.trust_remote_code, gguf_file=self.gguf_file,
                    )
        return self._lm

    # -- public calls ---------------------------------------------------------------------------------

    def parse(
        self,
        prompt: str,
        *,
        fmt: str = "fol",
        beams: int = 5,
        alpha: float = 0.7,
        constrained: bool = True,
        max_new_tokens: int | None = None,
    ) -> ParseResult:
        """Grammar-constrained (or free) beam search after ``prompt``; cached."""
        settings = _beam_settings(beams, alpha, constrained, max_new_tokens)
        return self._cached(
            "parse", ParseResult.from_dict, ParseResult.to_dict,
            lambda lm: _api("beam_search")(
                lm.model, lm.tokenizer, prompt, fmt=fmt, top_n=self.top_n, **settings
            ),
            prompt=prompt, fmt=fmt, **settings,
        )

    def parse_many(
        self,
        prompts: Sequence[str],
        *,
        fmt: str = "fol",
        beams: int = 5,
        alpha: float = 0.7,
        constrained: bool = True,
        max_new_tokens: int | None = None,
    ) -> list[ParseResult]:
        """``parse`` for several prompts; the uncached ones go through one batched decode."""
        settings = _beam_settings(beams, alpha, constrained, max_new_tokens)
        batched = _api_or_none("beam_search_batch")

        def compute(lm: models.LoadedModel, todo: list[str]) -> list[ParseResult]:
            if batched is None or len(todo) == 1:
                fn = _api("beam_search")
                return [fn(lm.model, lm.tokenizer, p, fmt=fmt, top_n=self.top_n, **settings) for p in todo]
            return list(batched(lm.model, lm.tokenizer, list(todo), fmt=fmt, top_n=self.top_n, **settings))

        return self._cached_many(
            "parse", ParseResult.from_dict, ParseResult.to_dict, compute,
            [{"prompt": p, "fmt": fmt, **settings} for p in prompts], list(prompts),
        )

    def parse_and_score_many(
        self,
        items: Sequence[tuple[str, str | None, str | None]],
        *,
        fmt: str = "fol",
        beams: int = 5,
        alpha: float = 0.7,
        constrained: bool = True,
        max_new_tokens: int | None = None,
    ) -> list[tuple[ParseResult, PairScore | None]]:
        """:meth:`parse` of each ``(prompt, lf0, lf1)`` and its :meth:`score_pair` (None without LFs).

        What a sweep item needs, computed with **one prompt pass per item** (the search and the
        forced scoring share it, :func:`amp.parser.decode.parse_and_score_batch`) and the
        uncached items in one batch.  Results are read from and stored under the same cache keys
        as :meth:`parse` and :meth:`score_pair`, so either call finds them later.
        """
        settings = _beam_settings(beams, alpha, constrained, max_new_tokens)
        items = [(p, a, b) if a is not None and b is not None else (p, None, None) for p, a, b in items]

        def parse_parts(i: int) -> dict[str, Any]:
            return {"prompt": items[i][0], "fmt": fmt, **settings}

        def pair_parts(i: int) -> dict[str, Any]:
            return {"prompt": items[i][0], "fmt": fmt, "lf0": items[i][1], "lf1": items[i][2]}

        parses: list[ParseResult | None] = [
            self._lookup(self.cache_key("parse", **parse_parts(i)), ParseResult.from_dict) for i in range(len(items))
        ]
        pairs: list[PairScore | None] = [
            self._lookup(self.cache_key("pair", **pair_parts(i)), PairScore.from_dict) if items[i][1] else None
            for i in range(len(items))
        ]
        todo = [i for i in range(len(items)) if parses[i] is None]
        if todo:
            joint = _api("parse_and_score_batch")
            asks = [(items[i][0], items[i][1], items[i][2]) if pairs[i] is None else (items[i][0], None, None)
                    for i in todo]
            values = self._run(lambda lm: joint(lm.model, lm.tokenizer, asks, fmt=fmt, top_n=self.top_n, **settings))
            for i, (parse, pair) in zip(todo, values, strict=True):
                parses[i] = parse
                self._store(self.cache_key("parse", **parse_parts(i)), parse, ParseResult.to_dict)
                if pair is not None:
                    pairs[i] = pair
                    self._store(self.cache_key("pair", **pair_parts(i)), pair, PairScore.to_dict)
        rest = [i for i in range(len(items)) if items[i][1] is not None and pairs[i] is None]
        if rest:
            for i, pair in zip(rest, self.score_pairs([items[i] for i in rest], fmt=fmt), strict=True):  # type: ignore[misc]
                pairs[i] = pair
        return [(parse, pair) for parse, pair in zip(parses, pairs, strict=True)]  # type: ignore[misc]

    def score(self, prompt: str, lfs: Sequence[str], *, fmt: str = "fol") -> list[ForcedScore]:
        """Forced decoding of each LF after ``prompt``; each LF is cached on its own."""
        lfs = list(lfs)

        def compute(lm: models.LoadedModel, todo: list[str]) -> list[ForcedScore]:
            return list(_api("forced_score")(lm.model, lm.tokenizer, prompt, todo, fmt=fmt, top_n=self.top_n))

        return self._cached_many(
            "forced", ForcedScore.from_dict, ForcedScore.to_dict, compute,
            [{"prompt": prompt, "fmt": fmt, "lf": lf} for lf in lfs], lfs,
        )

    def score_pair(self, prompt: str, lf0: str, lf1: str, *, fmt: str = "fol") -> PairScore:
        """P(LF0) and both forced scores (paper §2); cached."""
        return self._cached(
            "pair", PairScore.from_dict, PairScore.to_dict,
            lambda lm: _api("score_pair")(lm.model, lm.tokenizer, prompt, lf0, lf1, fmt=fmt, top_n=self.top_n),
            prompt=prompt, fmt=fmt, lf0=lf0, lf1=lf1,
        )

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str = "fol") -> list[PairScore]:
        """``score_pair`` for several ``(prompt, lf0, lf1)``; uncached ones batched if possible."""
        batched = _api_or_none("score_pair_batch", "score_pairs", "score_pairs_batch")

        def compute(lm: models.LoadedModel, todo: list[tuple[str, str, str]]) -> list[PairScore]:
            if batched is None or len(todo) == 1:
                fn = _api("score_pair")
                return [fn(lm.model, lm.tokenizer, p, a, b, fmt=fmt, top_n=self.top_n) for p, a, b in todo]
            return list(batched(lm.model, lm.tokenizer, list(todo), fmt=fmt, top_n=self.top_n))

        return self._cached_many(
            "pair", PairScore.from_dict, PairScore.to_dict, compute,
            [{"prompt": p, "fmt": fmt, "lf0": a, "lf1": b} for p, a, b in items], list(items),
        )

    def beam_steps(
        self, prompt: str, beam: Beam, *, fmt: str = "fol", constrained: bool = True
    ) -> tuple[TokenStep, ...]:
        """Per-token probabilities and alternatives of one beam (its own steps if it has them).

        ``constrained``: the ``constrained`` flag of the :class:`ParseResult` the beam came from
        (end-token merging differs for unconstrained beams); part of the cache key.
        """
        if beam.steps:
            return beam.steps
        result = self._cached(
            "steps", lambda d: tuple(TokenStep.from_dict(s) for s in d["steps"]),
            lambda steps: {"steps": [s.to_dict() for s in steps]},
            lambda lm: tuple(
                _api("beam_steps")(
                    lm.model, lm.tokenizer, prompt, beam, fmt, top_n=self.top_n, constrained=constrained
                )
            ),
            prompt=prompt, fmt=fmt, token_ids=list(beam.token_ids), constrained=constrained,
        )
        return result

    def inspect(
        self,
        prompt: str,
        lf0: str,
        lf1: str,
        *,
        fmt: str = "fol",
        beams: int = 5,
        alpha: float = 0.7,
        constrained: bool = True,
        max_new_tokens: int | None = None,
        canonical_mode: str = "logical",
    ) -> Inspection:
        """Parse, score both readings, label the beams and locate the divergence (Fig. 4)."""
        result = self.parse(prompt, fmt=fmt, beams=beams, alpha=alpha, constrained=constrained,
                            max_new_tokens=max_new_tokens)
        pair = self.score_pair(prompt, lf0, lf1, fmt=fmt)
        matches = tuple(match_lf(b.text, lf0, lf1, fmt=fmt, mode=canonical_mode) for b in result.beams)
        top = result.beams[0] if result.beams else None
        top_match = matches[0] if matches else NEITHER
        if top_match == LF0:
            alternative = LF1
        elif top_match == LF1:
            alternative = LF0
        else:
            alternative = LF0 if not pair.p_lf0 < 0.5 else LF1
        alt_score = pair.lf0 if alternative == LF0 else pair.lf1
        top_steps = (
            self.beam_steps(prompt, top, fmt=fmt, constrained=result.constrained) if top is not None else ()
        )
        div = _api("divergence")(top_steps, alt_score.steps) if top is not None else None
        return Inspection(
            prompt=prompt, lf0=lf0, lf1=lf1, fmt=fmt, parse=result, pair=pair, matches=matches,
            predicted=top, predicted_match=top_match, predicted_steps=tuple(top_steps),
            alternative=alternative, alternative_lf=alt_score.lf,
            alternative_steps=tuple(alt_score.steps), divergence=div, canonical_mode=canonical_mode,
        )

    # -- cache plumbing --------------------------------------------------------------------------------

    def cache_key(self, kind: str, **parts: Any) -> str:
        """The result-cache key of a call: ``parts`` plus model, tokenizer, grammar, runtime."""
        model_id, tok_id = self._identities()
        dev, dt = self._device_dtype()  # as requested ("auto" stays "auto"): stable before and after loading
        fmt = parts.get("fmt", "fol")
        return ResultCache.key(
            kind,
            model=model_id,
            tokenizer=tok_id,
            grammar=_grammar(fmt),
            device=dev.split(":", 1)[0],
            dtype=dt,
            top_n=self.top_n,
            versions=_versions(),
            **parts,
        )

    def _lookup(self, key: str, decode: Callable[[dict], T]) -> T | None:
        if self.cache is None:
            return None
        stored = self.cache.get(key)
        if stored is None:
            return None
        try:
            return decode(stored)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            self.cache.discard(key, f"does not rebuild into a result ({type(exc).__name__}: {exc})")
            return None

    def _store(self, key: str, value: Any, encode: Callable[[Any], dict]) -> None:
        if self.cache is None:
            return
        try:
            self.cache.set(key, encode(value), model=self.identity)
        except (CacheError, TypeError, ValueError) as exc:
            warnings.warn(f"result not cached: {exc}", CacheWarning, stacklevel=3)

    def _run(self, fn: Callable[[models.LoadedModel], T]) -> T:
        lm = self.load()
        import torch

        with lm.lock, torch.inference_mode():
            return fn(lm)

    def _cached(
        self, kind: str, decode: Callable[[dict], T], encode: Callable[[T], dict],
        compute: Callable[[models.LoadedModel], T], **parts: Any,
    ) -> T:
        key = self.cache_key(kind, **parts)
        hit = self._lookup(key, decode)
        if hit is not None:
            return hit
        value = self._run(compute)
        self._store(self.cache_key(kind, **parts), value, encode)  # identity may be exact now
        return value

    def _cached_many(
        self, kind: str, decode: Callable[[dict], T], encode: Callable[[T], dict],
        compute: Callable[[models.LoadedModel, list[Any]], list[T]],
        parts: list[dict[str, Any]], inputs: list[Any],
    ) -> list[T]:
        out: list[T | None] = [self._lookup(self.cache_key(kind, **p), decode) for p in parts]
        todo = [i for i, v in enumerate(out) if v is None]
        if todo:
            values = self._run(lambda lm: compute(lm, [inputs[i] for i in todo]))
            if len(values) != len(todo):
                raise RuntimeError(f"{kind}: expected {len(todo)} results, got {len(values)}")
            for i, value in zip(todo, values, strict=True):
                out[i] = value
                self._store(self.cache_key(kind, **parts[i]), value, encode)
        return out  # type: ignore[return-value]

    def cached(self, kind: str, **parts: Any) -> bool:
        """Whether a call with these parts is in the cache (no model load, no decoding)."""
        return self.cache is not None and self.cache_key(kind, **parts) in self.cache

    def cached_parse(
        self,
        prompt: str,
        *,
        fmt: str = "fol",
        beams: int = 5,
        alpha: float = 0.7,
        constrained: bool = True,
        max_new_tokens: int | None = None,
    ) -> ParseResult | None:
        """The cached result of :meth:`parse` with these arguments, or ``None`` (never computes)."""
        settings = _beam_settings(beams, alpha, constrained, max_new_tokens)
        return self._lookup(self.cache_key("parse", prompt=prompt, fmt=fmt, **settings), ParseResult.from_dict)

    def cached_pair(self, prompt: str, lf0: str, lf1: str, *, fmt: str = "fol") -> PairScore | None:
        """The cached result of :meth:`score_pair`, or ``None`` (never computes)."""
        return self._lookup(self.cache_key("pair", prompt=prompt, fmt=fmt, lf0=lf0, lf1=lf1), PairScore.from_dict)

    def result_keys(
        self,
        prompt: str,
        lf0: str | None = None,
        lf1: str | None = None,
        *,
        fmt: str = "fol",
        beams: int = 5,
        alpha: float = 0.7,
        constrained: bool = True,
        max_new_tokens: int | None = None,
    ) -> list[str]:
        """Keys of every cached result behind one prompt (never computes, never loads the model).

        The parse with these settings, the per-token steps of each of its beams (what
        :meth:`inspect` and the heatmaps read), and the forced scores of ``(lf0, lf1)`` when both
        are given.  Only keys present in the cache are returned — this is what a demo pack for
        a set of sentences exports (:mod:`amp.demo_pack`).
        """
        if self.cache is None:
            return []
        settings = _beam_settings(beams, alpha, constrained, max_new_tokens)
        keys = [self.cache_key("parse", prompt=prompt, fmt=fmt, **settings)]
        result = self._lookup(keys[0], ParseResult.from_dict)
        if result is not None:
            keys += [
                self.cache_key("steps", prompt=prompt, fmt=fmt, token_ids=list(b.token_ids),
                               constrained=result.constrained)
                for b in result.beams
            ]
        if lf0 is not None and lf1 is not None:
            keys.append(self.cache_key("pair", prompt=prompt, fmt=fmt, lf0=lf0, lf1=lf1))
        return [k for k in dict.fromkeys(keys) if k in self.cache]

    def __repr__(self) -> str:
        state = "loaded" if self.loaded else "not loaded"
        return f"Parser({self.spec!r}, {state})"


# -- helpers ------------------------------------------------------------------------------------------


def _beam_settings(beams: int, alpha: float, constrained: bool, max_new_tokens: int | None) -> dict[str, Any]:
    """The search settings that are part of a parse's cache key (and of its call)."""
    return {"beams": beams, "alpha": alpha, "constrained": constrained, "max_new_tokens": max_new_tokens}


def match_lf(text: str, lf0: str, lf1: str, *, fmt: str = "fol", mode: str = "logical") -> str:
    """``"lf0"``, ``"lf1"`` or ``"neither"``: which gold LF ``text`` is (canonical equality)."""
    key = _canonical_key(text, fmt, mode)
    if key is None:
        return NEITHER
    if key == _canonical_key(lf0, fmt, mode):
        return LF0
    if key == _canonical_key(lf1, fmt, mode):
        return LF1
    return NEITHER


def _canonical_key(lf: str, fmt: str, mode: str) -> str | None:
    try:
        from amp.logic.canonical import canonical_or_none
    except ImportError:
        return " ".join(lf.split()) or None
    return canonical_or_none(lf, mode, fmt)


@lru_cache(maxsize=8)
def _grammar(fmt: str) -> str:
    from amp.logic.grammar import grammar_text

    return grammar_text(fmt, "decoding")  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def _versions() -> dict[str, str]:
    out = {}
    for dist in ("torch", "transformers", "tokenizers"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "none"
    return out


_API_MODULES = ("amp.parser.decode", "amp.parser.scoring", "amp.parser.divergence")


def _api_or_none(*names: str) -> Callable[..., Any] | None:
    """The first of ``names`` found in the decoding modules (imported lazily: they need torch)."""
    import importlib

    for module_name in _API_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        for name in names:
            fn = getattr(module, name, None)
            if callable(fn):
                return fn
    return None


def _api(name: str) -> Callable[..., Any]:
    fn = _api_or_none(name)
    if fn is None:
        raise NotImplementedError(f"amp.parser has no {name}() yet")
    return fn
