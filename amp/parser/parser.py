"""The parser facade: one object that loads a model lazily and answers through the result cache.

``Parser("default").parse(prompt)`` runs grammar-constrained beam search
(:func:`amp.parser.search.decode.beam_search`), ``score``/``score_pair`` run forced decoding
(:mod:`amp.parser.search.scoring`); :func:`amp.evaluation.inspection.inspect` puts both together with
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
from typing import Any, TypeVar, Unpack

from amp.cache import ResultCache
from amp.errors import CacheError, CacheWarning
from amp.logic.grammar import grammar_text
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.parser.backend import Backend
from amp.parser.backends.local import InProcessBackend
from amp.parser.backends.remote import RemoteBackend
from amp.parser.core import limits
from amp.parser.core.errors import BackendError
from amp.parser.core.results import (
    Beam,
    ForcedScore,
    PairScore,
    ParseResult,
    Runtime,
    SamplesValue,
    StepsValue,
    TokenStep,
)
from amp.parser.engines import local_backend
from amp.parser.models.loading import LoadedModel
from amp.parser.models.spec import DEFAULT_SPEC
from amp.parser.search.settings import DEFAULT_TOP_N, MAX_TOP_N, Ask, SearchKeywords, SearchSettings

T = TypeVar("T")

class Parser:
    """Cached access to one language model for parsing and scoring, through a :class:`Backend`.

    ``spec``/``device``/``dtype``/``trust_remote_code``/``gguf_file`` build the backend of the engine
    ``engine`` (a name of :mod:`amp.parser.engines`; default ``$AMP_ENGINE``, else the default rule:
    :func:`amp.parser.engines.local_backend`) — transformers'
    :class:`~amp.parser.backends.local.InProcessBackend` (as in :func:`amp.parser.models.registry.load_model`)
    or llama.cpp's :class:`~amp.parser.backends.llama.LlamaBackend`;
    ``backend`` replaces it (e.g. :class:`~amp.parser.backends.remote.RemoteBackend`, see
    :meth:`Parser.remote`).  ``cache``: ``True`` for the default :class:`ResultCache`
    (``cache/results``), a ``ResultCache`` to share one, or ``None``/``False`` for none.  If the
    default cache cannot be opened, a :class:`~amp.errors.CacheWarning` is emitted and the parser
    runs uncached.  ``top_n`` is the number of alternative tokens recorded per position.

    Every result is looked up in the cache first (keys from :meth:`cache_key`: the call's parts
    plus the backend's :class:`~amp.parser.core.results.Runtime`), so a warm call needs no model and
    no server.
    """

    def __init__(
        self,
        spec: str = DEFAULT_SPEC,
        *,
        device: str | None = None,
        dtype: str | None = None,
        trust_remote_code: bool = False,
        gguf_file: str | None = None,
        engine: str | None = None,
        cache: ResultCache | None | bool = True,
        top_n: int = DEFAULT_TOP_N,
        backend: Backend | None = None,
    ) -> None:
        limits.check_count(top_n, "top_n", MAX_TOP_N, minimum=0)
        if backend is None:
            backend = local_backend(spec, engine=engine, device=device, dtype=dtype,
                                    trust_remote_code=trust_remote_code, gguf_file=gguf_file)
        self.backend: Backend = backend
        self.spec = backend.spec
        self.top_n = top_n
        self._runtime: Runtime | None = None
        self.cache = _open_cache(cache)

    @classmethod
    def remote(cls, url: str, *, token: str | None = None, cache: ResultCache | None | bool = True,
               timeout_s: float | None = None) -> Parser:
        """A parser whose model runs in the parser service at ``url`` (``python -m amp serve``).

        Contacts the server once to learn its model and runtime (:class:`BackendError` if it is
        unreachable, refuses the token or runs another version); ``top_n`` is the server's.
        """

        opened = _open_cache(cache)
        backend = RemoteBackend(url, token=token, timeout_s=timeout_s, info_cache=opened)
        return cls(backend=backend, cache=opened, top_n=backend.info().top_n)

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
        """The model identity used in cache keys (see :func:`amp.parser.models.spec.identities`)."""
        return self.runtime().model

    @property
    def tokenizer_identity(self) -> str:
        return self.runtime().tokenizer

    @property
    def device(self) -> str:
        """The device the model runs (or will run) on."""
        return self.backend.device

    @property
    def dtype(self) -> str:
        """The dtype the model runs (or will run) in."""
        return self.backend.dtype

    @property
    def scores(self) -> bool:
        """Whether this model can score LFs (P(LF0), forced decoding): its backend's capability
        (:class:`~amp.parser.core.capabilities.Capabilities`): every model whose weights run here or in
        the parser service can; a model behind an API only with log-probs of the prompt."""
        return self.backend.capabilities().scores

    def describe(self) -> str:
        """Where the model runs, for people: ``"cpu · float32"``, ``"server http://… · cuda · bfloat16"``."""
        return self.backend.describe()

    def load(self) -> LoadedModel | None:
        """Make the model ready now (raises :class:`ModelLoadError` / :class:`BackendError`).

        Returns the :class:`~amp.parser.LoadedModel` of an in-process backend, else None.
        """
        self.backend.load()

        return self.backend.loaded_model() if isinstance(self.backend, InProcessBackend) else None

    # -- public calls ---------------------------------------------------------------------------------

    def parse(self, prompt: str, search: SearchSettings | None = None, *, fmt: str = DEFAULT_FORMAT,
              words: OwnWords = NO_WORDS, **settings: Unpack[SearchKeywords]) -> ParseResult:
        """Grammar-constrained (or free) beam search after ``prompt``; cached.

        ``search`` is the record of settings (the defaults when None); keywords override its fields.
        ``words``: a teacher's own words that extend the decoding grammar (:mod:`amp.logic.own_words`);
        they change the grammar text, hence the cache key, of every call that takes them.
        """
        return self.parse_many([prompt], search, fmt=fmt, words=words, **settings)[0]

    def parse_many(self, prompts: Sequence[str], search: SearchSettings | None = None, *, fmt: str = DEFAULT_FORMAT,
                   words: OwnWords = NO_WORDS, **settings: Unpack[SearchKeywords]) -> list[ParseResult]:
        """``parse`` for several prompts; the uncached ones go through one batched decode."""
        search = SearchSettings.of(search, **settings)
        _check_asks([(p, None, None) for p in prompts], search)
        return self._cached_many(
            "parse", ParseResult.from_dict, ParseResult.to_dict,
            lambda todo: self.backend.parse(todo, fmt=fmt, top_n=self.top_n, search=search, words=words),
            [_parse_parts(p, fmt, search, words) for p in prompts], list(prompts),
        )

    def parse_and_score_many(
        self, items: Sequence[tuple[str, str | None, str | None]], search: SearchSettings | None = None, *,
        fmt: str = DEFAULT_FORMAT, words: OwnWords = NO_WORDS, **settings: Unpack[SearchKeywords],
    ) -> list[tuple[ParseResult, PairScore | None]]:
        """:meth:`parse` of each ``(prompt, lf0, lf1)`` and its :meth:`score_pair` (None without LFs).

        What a sweep item needs, computed with **one prompt pass per item** (the search and the
        forced scoring share it, :func:`amp.parser.search.decode.parse_and_score_batch`) and the
        uncached items in one batch.  Results are read from and stored under the same cache keys
        as :meth:`parse` and :meth:`score_pair`, so either call finds them later.
        """
        search = SearchSettings.of(search, **settings)
        items = [(p, a, b) if a is not None and b is not None else (p, None, None) for p, a, b in items]
        _check_asks(items, search)
        parse_keys = [self.cache_key("parse", **_parse_parts(p, fmt, search, words)) for p, _a, _b in items]
        pair_keys = [self.cache_key("pair", **_pair_parts(p, a, b, fmt, words)) if a else None for p, a, b in items]
        parses = [self._lookup(key, ParseResult.from_dict) for key in parse_keys]
        pairs = [self._lookup(key, PairScore.from_dict) if key else None for key in pair_keys]
        todo = [i for i in range(len(items)) if parses[i] is None]
        if todo:
            asks: list[Ask] = [(items[i][0], items[i][1], items[i][2]) if pairs[i] is None else (items[i][0], None, None)
                               for i in todo]
            values = self.backend.parse_and_score(asks, fmt=fmt, top_n=self.top_n, search=search, words=words)
            if len(values) != len(todo):
                raise BackendError(f"parse_and_score: expected {len(todo)} results, got {len(values)}",
                                   kind="protocol")
            for i, (parse, pair) in zip(todo, values, strict=True):
                parses[i] = parse
                self._store(self.cache_key("parse", **_parse_parts(items[i][0], fmt, search, words)), parse,
                            ParseResult.to_dict)  # (the key again: the model identity may be exact now)
                if pair is not None:
                    pairs[i] = pair
                    self._store(self.cache_key("pair", **_pair_parts(*items[i], fmt=fmt, words=words)), pair,
                                PairScore.to_dict)
        rest = [i for i in range(len(items)) if items[i][1] is not None and pairs[i] is None]
        if rest:
            for i, pair in zip(rest, self.score_pairs([items[i] for i in rest], fmt=fmt, words=words),  # type: ignore[misc]
                               strict=True):
                pairs[i] = pair
        return [(parse, pair) for parse, pair in zip(parses, pairs, strict=True)]  # type: ignore[misc]

    def score(self, prompt: str, lfs: Sequence[str], *, fmt: str = DEFAULT_FORMAT,
              words: OwnWords = NO_WORDS) -> list[ForcedScore]:
        """Forced decoding of each LF after ``prompt``; each LF is cached on its own."""
        lfs = list(lfs)
        limits.check_items(lfs, "list of LFs to score", limits.MAX_FORCED_LFS)
        _check_asks([(prompt, lf, None) for lf in lfs], batch=False)
        return self._cached_many(
            "forced", ForcedScore.from_dict, ForcedScore.to_dict,
            lambda todo: self.backend.forced(prompt, todo, fmt=fmt, top_n=self.top_n, words=words),
            [{"prompt": prompt, "fmt": fmt, "lf": lf, "words": words} for lf in lfs], lfs,
        )

    def score_pair(self, prompt: str, lf0: str, lf1: str, *, fmt: str = DEFAULT_FORMAT,
                   words: OwnWords = NO_WORDS) -> PairScore:
        """P(LF0) and both forced scores (paper §2); cached."""
        return self.score_pairs([(prompt, lf0, lf1)], fmt=fmt, words=words)[0]

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str = DEFAULT_FORMAT,
                    words: OwnWords = NO_WORDS) -> list[PairScore]:
        """``score_pair`` for several ``(prompt, lf0, lf1)``; the uncached ones in one call."""
        _check_asks(items)
        return self._cached_many(
            "pair", PairScore.from_dict, PairScore.to_dict,
            lambda todo: self.backend.score_pairs(todo, fmt=fmt, top_n=self.top_n, words=words),
            [_pair_parts(p, a, b, fmt, words) for p, a, b in items], list(items),
        )

    def beam_steps(
        self, prompt: str, beam: Beam, *, fmt: str = DEFAULT_FORMAT, constrained: bool = True,
        words: OwnWords = NO_WORDS,
    ) -> tuple[TokenStep, ...]:
        """Per-token probabilities and alternatives of one beam (its own steps if it has them).

        ``constrained``: the ``constrained`` flag of the :class:`ParseResult` the beam came from
        (end-token merging differs for unconstrained beams); part of the cache key.
        """
        if beam.steps:
            return beam.steps
        limits.check_prompt(prompt)
        return self._cached_many(
            "steps", lambda d: StepsValue.from_dict(d).steps, lambda steps: StepsValue(tuple(steps)).to_dict(),
            lambda todo: [self.backend.beam_steps(prompt, todo[0], fmt=fmt, top_n=self.top_n,
                                                  constrained=constrained, words=words)],
            [{"prompt": prompt, "fmt": fmt, "token_ids": list(beam.token_ids), "constrained": constrained,
              "words": words,
              # a beam without token ids (an API model's) is known by its text; other keys are as they were
              **({} if beam.token_ids else {"text": beam.text})}], [beam],
        )[0]

    def sample(self, prompt: str, *, n: int = 20, temperature: float = 1.0, seed: int = 0, fmt: str = DEFAULT_FORMAT,
               max_new_tokens: int | None = None, words: OwnWords = NO_WORDS) -> list[str | None]:
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
            samples = list(SamplesValue.from_dict(d).samples)
            if len(samples) != n:
                raise ValueError(f"{len(samples)} samples stored, {n} asked for")
            return samples

        return self._cached_many(
            "sample", decode, lambda samples: SamplesValue(tuple(samples)).to_dict(),
            lambda todo: [self.backend.sample(prompt, n=n, temperature=temperature, seed=int(seed), fmt=fmt,
                                              max_new_tokens=max_new_tokens, words=words)],
            [{"prompt": prompt, "fmt": fmt, "n": n, "temperature": temperature, "seed": int(seed),
              "max_new_tokens": max_new_tokens, "top_k": 0, "top_p": 1.0, "words": words}], [prompt],
        )[0]

    # -- cache plumbing --------------------------------------------------------------------------------

    def cache_key(self, kind: str, *, words: OwnWords = NO_WORDS, **parts: Any) -> str:
        """The result-cache key of a call: ``parts`` plus the backend's runtime and the grammar
        (its text holds the own ``words``; with none it is the lexicon grammar, as always)."""
        rt = self.runtime()
        fmt = parts.get("fmt", DEFAULT_FORMAT)
        return ResultCache.key(
            kind,
            model=rt.model,
            tokenizer=rt.tokenizer,
            grammar=_grammar(fmt, words),
            device=rt.device,
            dtype=rt.dtype,
            top_n=self.top_n,
            versions=rt.versions,
            **parts,
        )

    def _parse_key(self, prompt: str, fmt: str, search: SearchSettings, words: OwnWords = NO_WORDS) -> str:
        return self.cache_key("parse", **_parse_parts(prompt, fmt, search, words))

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

    def cached_parse(self, prompt: str, search: SearchSettings | None = None, *, fmt: str = DEFAULT_FORMAT,
                     words: OwnWords = NO_WORDS, **settings: Unpack[SearchKeywords]) -> ParseResult | None:
        """The cached result of :meth:`parse` with these arguments, or ``None`` (never computes)."""
        key = self._parse_key(prompt, fmt, SearchSettings.of(search, **settings), words)
        return self._lookup(key, ParseResult.from_dict)

    def cached_pair(self, prompt: str, lf0: str, lf1: str, *, fmt: str = DEFAULT_FORMAT,
                    words: OwnWords = NO_WORDS) -> PairScore | None:
        """The cached result of :meth:`score_pair`, or ``None`` (never computes)."""
        return self._lookup(self.cache_key("pair", **_pair_parts(prompt, lf0, lf1, fmt, words)), PairScore.from_dict)

    def result_keys(self, prompt: str, lf0: str | None = None, lf1: str | None = None,
                    search: SearchSettings | None = None, *, fmt: str = DEFAULT_FORMAT,
                    words: OwnWords = NO_WORDS, **settings: Unpack[SearchKeywords]) -> list[str]:
        """Keys of every cached result behind one prompt (never computes, never loads the model).

        The parse with these settings, the per-token steps of each of its beams (what
        :meth:`inspect` and the heatmaps read), and the forced scores of ``(lf0, lf1)`` when both
        are given.  Only keys present in the cache are returned — this is what a demo pack for
        a set of sentences exports (:mod:`amp.teaching.demo_pack`).
        """
        if self.cache is None:
            return []
        keys = [self._parse_key(prompt, fmt, SearchSettings.of(search, **settings), words)]
        result = self._lookup(keys[0], ParseResult.from_dict)
        if result is not None:
            keys += [
                self.cache_key("steps", prompt=prompt, fmt=fmt, token_ids=list(b.token_ids),
                               constrained=result.constrained, words=words)
                for b in result.beams
            ]
        if lf0 is not None and lf1 is not None:
            keys.append(self.cache_key("pair", **_pair_parts(prompt, lf0, lf1, fmt, words)))
        return [k for k in dict.fromkeys(keys) if k in self.cache]

    def __repr__(self) -> str:
        state = "loaded" if self.loaded else "not loaded"
        return f"Parser({self.spec!r}, {self.backend.kind}, {state})"


# -- helpers ------------------------------------------------------------------------------------------


def _check_asks(items: Sequence[tuple[str, str | None, str | None]], search: SearchSettings | None = None, *,
                batch: bool = True) -> None:
    """The request bounds of :mod:`amp.parser.core.limits`, before any tokenising or model work.

    The asks of one call (at most :data:`~amp.parser.core.limits.MAX_BATCH_ITEMS`), each prompt and
    LF, and for a search the call's cost: its prompts × the cost of one prompt, which ``search``
    bounds itself (:class:`SearchSettings`), within :data:`~amp.parser.core.limits.MAX_SEARCH_COST`.
    The facade's one check of a call's size: every backend (in-process, llama.cpp, service, API)
    is called behind it, and the service's schema checks the same product for each request.
    """
    if batch:
        limits.check_items(items)
    for prompt, lf0, lf1 in items:
        limits.check_prompt(prompt)
        for lf in (lf0, lf1):
            if lf is not None:
                limits.check_lf(lf)
    if search is not None:
        limits.check_search_cost(len(items), search.beams, search.max_new_tokens)


def _open_cache(cache: ResultCache | None | bool) -> ResultCache | None:
    """``True``: the default cache (None, with a :class:`CacheWarning`, if it cannot open); a
    ``ResultCache`` as given; anything else None.  (An empty ResultCache is falsy: it has __len__.)"""
    if cache is True:
        try:
            return ResultCache()
        except CacheError as exc:
            warnings.warn(f"running without the result cache: {exc}", CacheWarning, stacklevel=3)
            return None
    return cache if isinstance(cache, ResultCache) else None


def _parse_parts(prompt: str, fmt: str, search: SearchSettings, words: OwnWords = NO_WORDS) -> dict[str, Any]:
    """The cache-key parts of a parse (the same names and values as ever: cached results stay valid;
    ``words`` goes into the key through the grammar text, :meth:`Parser.cache_key`)."""
    return {"prompt": prompt, "fmt": fmt, **search.as_dict(), "words": words}


def _pair_parts(prompt: str, lf0: str | None, lf1: str | None, fmt: str, words: OwnWords = NO_WORDS) -> dict[str, Any]:
    """The cache-key parts of a P(LF0) pair."""
    return {"prompt": prompt, "fmt": fmt, "lf0": lf0, "lf1": lf1, "words": words}


@lru_cache(maxsize=32)
def _grammar(fmt: str, words: OwnWords = NO_WORDS) -> str:

    return grammar_text(fmt, "decoding", words=words)  # type: ignore[arg-type]
