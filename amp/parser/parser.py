"""The parser facade: one object that loads a model lazily and answers through the result cache.

``Parser("default").parse(prompt)`` runs grammar-constrained beam search
(:func:`amp.parser.decode.beam_search`), ``score``/``score_pair`` run forced decoding
(:mod:`amp.parser.scoring`); :func:`amp.evaluation.inspection.inspect` puts both together with
the first token where the predicted parse and the other reading diverge (paper Fig. 4).

Every result goes through :class:`amp.cache.ResultCache` as JSON, keyed by everything it
depends on: model and tokenizer identity, the decoding grammar's text, the prompt, the LF(s),
every decoding setting, device kind, dtype and library versions.  The model is loaded only on
the first cache *miss*; a warm call needs neither the model nor a model import (identities are
computed from the spec and file hashes).  Calls that use the model hold the model's lock, so
one ``Parser`` can be shared between threads and Streamlit sessions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from amp.cache import CacheWarning, ResultCache
from amp.errors import AmpError, CacheError
from amp.parser import limits, models
from amp.parser.backend import (
    MAX_TOP_N,
    Ask,
    Backend,
    BackendError,
    Runtime,
    SearchSettings,
)
from amp.parser.results import (
    Beam,
    ForcedScore,
    PairScore,
    ParseResult,
    TokenStep,
)

T = TypeVar("T")

class Parser:
    """Cached access to one language model for parsing and scoring, through a :class:`Backend`.

    ``spec``/``device``/``dtype``/``trust_remote_code``/``gguf_file`` build the default
    :class:`~amp.parser.local.InProcessBackend` (as in :func:`amp.parser.models.load_model`);
    ``backend`` replaces it (e.g. :class:`~amp.parser.remote.RemoteBackend`, see
    :meth:`Parser.remote`).  ``cache``: ``True`` for the default :class:`ResultCache`
    (``cache/results``), a ``ResultCache`` to share one, or ``None``/``False`` for none.  If the
    default cache cannot be opened, a :class:`~amp.cache.CacheWarning` is emitted and the parser
    runs uncached.  ``top_n`` is the number of alternative tokens recorded per position.

    Every result is looked up in the cache first (keys from :meth:`cache_key`: the call's parts
    plus the backend's :class:`~amp.parser.backend.Runtime`), so a warm call needs no model and
    no server.
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
        backend: Backend | None = None,
    ) -> None:
        if isinstance(top_n, bool) or not isinstance(top_n, int) or not 0 <= top_n <= MAX_TOP_N:
            raise AmpError(f"top_n must be a whole number from 0 to {MAX_TOP_N}, not {top_n!r}")
        if backend is None:
            from amp.parser.local import InProcessBackend

            backend = InProcessBackend(spec, device=device, dtype=dtype, trust_remote_code=trust_remote_code,
                                       gguf_file=gguf_file)
        self.backend: Backend = backend
        self.spec = backend.spec
        self.top_n = top_n
        self._runtime: Runtime | None = None
        if cache is True:
            try:
                self.cache: ResultCache | None = ResultCache()
            except CacheError as exc:
                warnings.warn(f"running without the result cache: {exc}", CacheWarning, stacklevel=2)
                self.cache = None
        else:  # (an empty ResultCache is falsy: it has __len__)
            self.cache = cache if isinstance(cache, ResultCache) else None

    @classmethod
    def remote(cls, url: str, *, token: str | None = None, cache: ResultCache | None | bool = True,
               timeout_s: float | None = None) -> Parser:
        """A parser whose model runs in the parser service at ``url`` (``python -m amp serve``).

        Contacts the server once to learn its model and runtime (:class:`BackendError` if it is
        unreachable, refuses the token or runs another version); ``top_n`` is the server's.
        """
        from amp.parser.remote import RemoteBackend

        if cache is True:
            try:
                cache = ResultCache()
            except CacheError as exc:
                warnings.warn(f"running without the result cache: {exc}", CacheWarning, stacklevel=2)
                cache = None
        backend = RemoteBackend(url, token=token, timeout_s=timeout_s,
                                info_cache=cache if isinstance(cache, ResultCache) else None)
        return cls(backend=backend, cache=cache, top_n=backend.info().top_n)

    # -- what the model is, without loading it ------------------------------------------------------

    @property
    def loaded(self) -> bool:
        """Whether the model is ready without loading (only loads on a cache miss)."""
        return self.backend.loaded

    def runtime(self) -> Runtime:
        """What results are computed with (identities, device kind, dtype, versions); no load."""
        if self.backend.loaded or self._runtime is None:
            self._runtime = self.backend.runtime()  # the exact identity may be known after loading
        return self._runtime

    @property
    def identity(self) -> str:
        """The model identity used in cache keys (see :func:`amp.parser.models.identities`)."""
        return self.runtime().model

    @property
    def tokenizer_identity(self) -> str:
        return self.runtime().tokenizer

    @property
    def device(self) -> str:
        """The device the model runs (or will run) on."""
        return str(getattr(self.backend, "device", self.runtime().device))

    @property
    def dtype(self) -> str:
        """The dtype the model runs (or will run) in."""
        return str(getattr(self.backend, "dtype", self.runtime().dtype))

    def describe(self) -> str:
        """Where the model runs, for people: ``"cpu · float32"``, ``"server http://… · cuda · bfloat16"``."""
        return self.backend.describe()

    def load(self) -> models.LoadedModel | None:
        """Make the model ready now (raises :class:`ModelLoadError` / :class:`BackendError`).

        Returns the :class:`~amp.parser.models.LoadedModel` of an in-process backend, else None.
        """
        self.backend.load()
        loaded_model = getattr(self.backend, "loaded_model", None)
        return loaded_model() if callable(loaded_model) else None

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
        return self.parse_many([prompt], fmt=fmt, beams=beams, alpha=alpha, constrained=constrained,
                               max_new_tokens=max_new_tokens)[0]

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
        search = SearchSettings(beams, alpha, constrained, max_new_tokens)
        _check_asks([(p, None, None) for p in prompts])
        return self._cached_many(
            "parse", ParseResult.from_dict, ParseResult.to_dict,
            lambda todo: self.backend.parse(todo, fmt=fmt, top_n=self.top_n, search=search),
            [{"prompt": p, "fmt": fmt, **search.as_dict()} for p in prompts], list(prompts),
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
        search = SearchSettings(beams, alpha, constrained, max_new_tokens)
        items = [(p, a, b) if a is not None and b is not None else (p, None, None) for p, a, b in items]
        _check_asks(items)

        def parse_parts(i: int) -> dict[str, Any]:
            return {"prompt": items[i][0], "fmt": fmt, **search.as_dict()}

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
            asks: list[Ask] = [(items[i][0], items[i][1], items[i][2]) if pairs[i] is None else (items[i][0], None, None)
                               for i in todo]
            values = self.backend.parse_and_score(asks, fmt=fmt, top_n=self.top_n, search=search)
            if len(values) != len(todo):
                raise BackendError(f"parse_and_score: expected {len(todo)} results, got {len(values)}",
                                   kind="protocol")
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
        limits.check_items(lfs, "list of LFs to score", limits.MAX_FORCED_LFS)
        _check_asks([(prompt, lf, None) for lf in lfs], batch=False)
        return self._cached_many(
            "forced", ForcedScore.from_dict, ForcedScore.to_dict,
            lambda todo: self.backend.forced(prompt, todo, fmt=fmt, top_n=self.top_n),
            [{"prompt": prompt, "fmt": fmt, "lf": lf} for lf in lfs], lfs,
        )

    def score_pair(self, prompt: str, lf0: str, lf1: str, *, fmt: str = "fol") -> PairScore:
        """P(LF0) and both forced scores (paper §2); cached."""
        return self.score_pairs([(prompt, lf0, lf1)], fmt=fmt)[0]

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str = "fol") -> list[PairScore]:
        """``score_pair`` for several ``(prompt, lf0, lf1)``; the uncached ones in one call."""
        _check_asks(items)
        return self._cached_many(
            "pair", PairScore.from_dict, PairScore.to_dict,
            lambda todo: self.backend.score_pairs(todo, fmt=fmt, top_n=self.top_n),
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
        limits.check_prompt(prompt)
        return self._cached_many(
            "steps", lambda d: tuple(TokenStep.from_dict(s) for s in d["steps"]),
            lambda steps: {"steps": [s.to_dict() for s in steps]},
            lambda todo: [self.backend.beam_steps(prompt, todo[0], fmt=fmt, top_n=self.top_n,
                                                  constrained=constrained)],
            [{"prompt": prompt, "fmt": fmt, "token_ids": list(beam.token_ids), "constrained": constrained}], [beam],
        )[0]

    def sample(self, prompt: str, *, n: int = 20, temperature: float = 1.0, seed: int = 0, fmt: str = "fol",
               max_new_tokens: int | None = None) -> list[str | None]:
        """``n`` grammar-constrained samples after ``prompt`` (None = unfinished); cached.

        The key holds every setting and, like every key here, the model, tokenizer, device,
        dtype, grammar and library versions (:mod:`amp.evaluation.interpretations` builds distributions
        from these samples).
        """
        limits.check_samples(n, "the number of samples")
        temperature = limits.check_temperature(temperature)
        limits.check_seed(int(seed))
        limits.check_max_new_tokens(max_new_tokens)
        limits.check_prompt(prompt)

        def decode(d: dict[str, Any]) -> list[str | None]:
            samples = d["samples"]
            if not isinstance(samples, list) or len(samples) != n or \
                    not all(s is None or isinstance(s, str) for s in samples):
                raise ValueError("not a list of samples")
            return samples

        return self._cached_many(
            "sample", decode, lambda samples: {"samples": list(samples)},
            lambda todo: [self.backend.sample(prompt, n=n, temperature=temperature, seed=int(seed), fmt=fmt,
                                              max_new_tokens=max_new_tokens)],
            [{"prompt": prompt, "fmt": fmt, "n": n, "temperature": temperature, "seed": int(seed),
              "max_new_tokens": max_new_tokens, "top_k": 0, "top_p": 1.0}], [prompt],
        )[0]

    # -- cache plumbing --------------------------------------------------------------------------------

    def cache_key(self, kind: str, **parts: Any) -> str:
        """The result-cache key of a call: ``parts`` plus the backend's runtime and the grammar."""
        rt = self.runtime()
        fmt = parts.get("fmt", "fol")
        return ResultCache.key(
            kind,
            model=rt.model,
            tokenizer=rt.tokenizer,
            grammar=_grammar(fmt),
            device=rt.device,
            dtype=rt.dtype,
            top_n=self.top_n,
            versions=rt.versions,
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

    def _cached_many(
        self, kind: str, decode: Callable[[dict], T], encode: Callable[[T], dict],
        compute: Callable[[list[Any]], list[T]],
        parts: list[dict[str, Any]], inputs: list[Any],
    ) -> list[T]:
        out: list[T | None] = [self._lookup(self.cache_key(kind, **p), decode) for p in parts]
        todo = [i for i, v in enumerate(out) if v is None]
        if todo:
            values = compute([inputs[i] for i in todo])
            if len(values) != len(todo):
                raise BackendError(f"{kind}: expected {len(todo)} results, got {len(values)}", kind="protocol")
            for i, value in zip(todo, values, strict=True):
                out[i] = value
                self._store(self.cache_key(kind, **parts[i]), value, encode)  # identity may be exact now
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
        search = SearchSettings(beams, alpha, constrained, max_new_tokens)
        return self._lookup(self.cache_key("parse", prompt=prompt, fmt=fmt, **search.as_dict()),
                            ParseResult.from_dict)

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
        a set of sentences exports (:mod:`amp.teaching.demo_pack`).
        """
        if self.cache is None:
            return []
        search = SearchSettings(beams, alpha, constrained, max_new_tokens)
        keys = [self.cache_key("parse", prompt=prompt, fmt=fmt, **search.as_dict())]
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
        return f"Parser({self.spec!r}, {self.backend.kind}, {state})"


# -- helpers ------------------------------------------------------------------------------------------


def _check_asks(items: Sequence[tuple[str, str | None, str | None]], *, batch: bool = True) -> None:
    """The request bounds of :mod:`amp.parser.limits`, before any tokenising or model work."""
    if batch:
        limits.check_items(items)
    for prompt, lf0, lf1 in items:
        limits.check_prompt(prompt)
        for lf in (lf0, lf1):
            if lf is not None:
                limits.check_lf(lf)


@lru_cache(maxsize=8)
def _grammar(fmt: str) -> str:
    from amp.logic.grammar import grammar_text

    return grammar_text(fmt, "decoding")  # type: ignore[arg-type]
