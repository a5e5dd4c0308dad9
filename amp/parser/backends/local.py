"""The in-process backend: a model loaded in this process through transformers.

Implements :class:`amp.parser.backend.Backend` with the decoding functions of
:mod:`amp.parser.search.decode`, :mod:`amp.parser.search.scoring` and :mod:`amp.parser.search.sampling`.  The
model loads lazily (:meth:`InProcessBackend.load`, on the facade's first cache miss); every
model call holds the model's lock (or, in the parser service, its turn at the replica's step gate,
:mod:`amp.parser.search.fair_share`) and runs under ``torch.inference_mode``.  Identities come
from the spec and file hashes, so :meth:`runtime` never loads the model.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import metadata
from typing import TypeVar

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.capabilities import MODEL_KINDS, Capabilities
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, Runtime, TokenStep
from amp.parser.models import registry as model_registry
from amp.parser.models.loading import DTYPES, LoadedModel, select_device, select_dtype
from amp.parser.models.quantize import INT8, scheme
from amp.parser.models.spec import DEFAULT_SPEC, identities
from amp.parser.search.fair_share import model_lock
from amp.parser.search.settings import Ask, SearchSettings

T = TypeVar("T")

#: The engine's name (its key in :mod:`amp.parser.engines`).
ENGINE = "transformers"
#: What it can do: any model (the embedded one, a folder, a ``.gguf``, a Hub id) on the CPU or a GPU,
#: in any ``--dtype``, with gradients through the weights and the search with or without the grammar.
CAPABILITIES = Capabilities(engine=ENGINE, gradients=True, scores=True, unconstrained=True, batch_size=8,
                            devices=("cpu", "cuda", "mps"), formats=MODEL_KINDS,
                            precisions=tuple(d for d in DTYPES if d != "auto"))


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """Versions of the libraries that compute results (part of every cache key)."""
    out = {}
    for dist in ("torch", "transformers", "tokenizers"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "none"
    return out


class InProcessBackend:
    """A model of this process: ``spec``/``device``/``dtype``/``trust_remote_code``/``gguf_file``
    as in :func:`amp.parser.models.registry.load_model`."""

    kind = "in-process"

    def __init__(self, spec: str = DEFAULT_SPEC, *, device: str | None = None, dtype: str | None = None,
                 trust_remote_code: bool = False, gguf_file: str | None = None) -> None:
        self.spec = spec or DEFAULT_SPEC
        self._device_arg = device
        self._dtype_arg = dtype
        self.trust_remote_code = bool(trust_remote_code)
        self.gguf_file = gguf_file
        # Weak: the process-wide memo (model_registry.load_model) decides how long a model stays loaded;
        # an evicted model is freed even while this backend lives, and reloaded on its next call.
        self._lm_ref: Callable[[], LoadedModel | None] = lambda: None
        self._adopted: LoadedModel | None = None
        self._load_lock = threading.Lock()
        self._ids: tuple[str, str] | None = None
        self._resolved: tuple[str, str] | None = None

    # -- what it computes with ----------------------------------------------------------------------

    @property
    def _lm(self) -> LoadedModel | None:
        return self._adopted or self._lm_ref()

    @property
    def loaded(self) -> bool:
        return self._lm is not None

    @property
    def jobs(self) -> None:
        return None  # sweeps run in this process (amp.parser.batch.run_batch)

    def device_dtype(self) -> tuple[str, str]:
        """The device and dtype as requested and resolved (``auto`` stays ``auto``); no load."""
        if self._resolved is None:
            dev = select_device(self._device_arg)
            self._resolved = (dev, select_dtype(dev, self._dtype_arg))
        return self._resolved

    def identities(self) -> tuple[str, str]:
        if self._lm is not None:
            return self._lm.identity, self._lm.tokenizer_identity
        if self._ids is None:
            self._ids = identities(self.spec, self.gguf_file)
        return self._ids

    def runtime(self) -> Runtime:
        model_id, tok_id = self.identities()
        dev, dt = self.device_dtype()  # as requested: stable before and after loading
        versions = library_versions()
        if dt == INT8:  # int8 results depend on the scheme and the CPU's int8 kernels
            versions = {**versions, "int8": scheme()}
        return Runtime(model=model_id, tokenizer=tok_id, device=dev.split(":", 1)[0], dtype=dt,
                       versions=versions)

    @property
    def device(self) -> str:
        return self._lm.device if self._lm else self.device_dtype()[0]

    @property
    def dtype(self) -> str:
        return self._lm.dtype if self._lm else self.device_dtype()[1]

    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def describe(self) -> str:
        return f"{self.device} · {self.dtype}"

    def load(self) -> None:
        self.loaded_model()

    def loaded_model(self) -> LoadedModel:
        """The loaded model, loading it now if needed (raises :class:`ModelLoadError`)."""
        lm = self._lm
        if lm is None:
            with self._load_lock:
                lm = self._lm
                if lm is None:
                    dev, dt = self.device_dtype()
                    lm = model_registry.load_model(
                        self.spec, device=dev, dtype=dt,
                        trust_remote_code=self.trust_remote_code, gguf_file=self.gguf_file,
                    )
                    self._lm_ref = weakref.ref(lm)
        return lm

    def adopt(self, lm: LoadedModel) -> None:
        """Use an already loaded model (benchmarks share one between parsers); held strongly."""
        self._adopted = lm

    def _run(self, fn: Callable[[LoadedModel], T]) -> T:
        lm = self.loaded_model()
        import torch  # late: start-up cost (torch)

        with model_lock(lm.lock), torch.inference_mode():  # (a service's step gate serialises instead)
            return fn(lm)

    # -- the work ---------------------------------------------------------------------------------------

    def parse(self, prompts: Sequence[str], *, fmt: str, top_n: int, search: SearchSettings,
              words: OwnWords = NO_WORDS) -> list[ParseResult]:
        from amp.parser.search.decode import beam_search_batch  # late: start-up cost (torch, transformers)

        return self._run(lambda lm: list(beam_search_batch(
            lm.model, lm.tokenizer, list(prompts), search, fmt=fmt, top_n=top_n, words=words)))

    def parse_and_score(self, asks: Sequence[Ask], *, fmt: str, top_n: int,
                        search: SearchSettings, words: OwnWords = NO_WORDS) -> list[tuple[ParseResult, PairScore | None]]:
        from amp.parser.search.decode import parse_and_score_batch  # late: start-up cost (torch, transformers)

        return self._run(lambda lm: list(parse_and_score_batch(
            lm.model, lm.tokenizer, list(asks), search, fmt=fmt, top_n=top_n, words=words)))

    def forced(self, prompt: str, lfs: Sequence[str], *, fmt: str, top_n: int,
               words: OwnWords = NO_WORDS) -> list[ForcedScore]:
        from amp.parser.search.scoring import forced_score  # late: start-up cost (torch, transformers)

        return self._run(lambda lm: list(forced_score(lm.model, lm.tokenizer, prompt, list(lfs), fmt=fmt,
                                                      top_n=top_n, words=words)))

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str, top_n: int,
                    words: OwnWords = NO_WORDS) -> list[PairScore]:
        from amp.parser.search.scoring import score_pairs  # late: start-up cost (torch, transformers)

        return self._run(lambda lm: list(score_pairs(lm.model, lm.tokenizer, list(items), fmt=fmt, top_n=top_n,
                                                     words=words)))

    def beam_steps(self, prompt: str, beam: Beam, *, fmt: str, top_n: int, constrained: bool,
                   words: OwnWords = NO_WORDS) -> tuple[TokenStep, ...]:
        from amp.parser.search.decode import beam_steps  # late: start-up cost (torch, transformers)

        return self._run(lambda lm: tuple(beam_steps(lm.model, lm.tokenizer, prompt, beam, fmt, top_n=top_n,
                                                     constrained=constrained, words=words)))

    def sample(self, prompt: str, *, n: int, temperature: float, seed: int, fmt: str,
               max_new_tokens: int | None, words: OwnWords = NO_WORDS) -> list[str | None]:
        from amp.parser.search.sampling import sample_texts  # late: start-up cost (torch, transformers)

        return self._run(lambda lm: sample_texts(lm.model, lm.tokenizer, prompt, n=n, temperature=temperature,
                                                 seed=seed, fmt=fmt, max_new_tokens=max_new_tokens, words=words))

    def close(self) -> None:
        """Nothing to release: loaded models live in :mod:`amp.parser.models.registry`' process store."""

    def __repr__(self) -> str:
        return f"InProcessBackend({self.spec!r}, {'loaded' if self.loaded else 'not loaded'})"
