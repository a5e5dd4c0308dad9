"""The model-backend seam: one declared interface for "the thing that parses and scores".

:class:`amp.parser.Parser` is the cached facade every caller uses (pages, CLI, experiments,
research, teaching, interpretation-level sampling).  Underneath it sits a :class:`Backend`,
which does the actual model work and says what it computes with (:class:`Runtime`, part of
every result-cache key).  These backends exist:

* :class:`amp.parser.backends.local.InProcessBackend` — the ``transformers`` engine: a model loaded
  in this process through transformers (any model, GPUs, the exact float32 path, gradients);
* :class:`amp.parser.backends.llama.LlamaBackend` — the ``llama.cpp`` engine: a GGUF run by
  llama.cpp in this process (the default for a GGUF on the CPU, :func:`amp.parser.engines.default_engine`);
* :class:`amp.parser.backends.remote.RemoteBackend` — a client of the parser service
  (``python -m amp serve``, :mod:`amp.serve`), JSON over HTTP;
* :class:`amp.parser.backends.api.ApiBackend` — a model behind an OpenAI-compatible endpoint
  (vLLM, llama.cpp's server, ollama, hosted APIs) asked with the paper's GPT-3.5 protocol.

Each says what it can do with :meth:`Backend.capabilities` (one
:class:`~amp.parser.core.capabilities.Capabilities` record: gradients, forced scoring, the search
without the grammar, its batch size, devices, model kinds and precisions), and every caller asks
that record, never the backend's class.  A further engine is one new module implementing
:class:`Backend` and one :func:`amp.parser.engines.register_engine` call; the facade, its cache and
every caller stay as they are.  A backend that can also run whole sweeps
as server-side jobs exposes them as :attr:`Backend.jobs` (see :mod:`amp.parser.jobs`);
:func:`amp.parser.batch.run_batch` then submits a job instead of looping in this process.

Every method takes plain values and returns the plain result records of
:mod:`amp.parser.core.results`, so any backend can be tested against another for equality.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.capabilities import Capabilities
from amp.parser.core.results import (
    BatchItem,
    Beam,
    ForcedScore,
    JobResult,
    JobStatus,
    PairScore,
    ParseResult,
    Runtime,
    TokenStep,
)
from amp.parser.search.settings import Ask, SearchSettings


@runtime_checkable
class Backend(Protocol):
    """What :class:`amp.parser.Parser` needs from a model backend.

    ``kind`` names it for people ("in-process", "remote").  ``spec`` is the model spec it runs.
    ``runtime()`` must not load a model.  ``loaded`` says whether a call would start without
    loading first; ``load()`` loads now (raising :class:`~amp.parser.core.errors.ModelLoadError`).
    ``jobs`` is ``None`` unless the backend runs sweeps itself.  ``device``/``dtype`` say where
    and in what the model runs (or will run).  ``capabilities()`` says what it can do (it loads
    nothing; a model behind an API may ask its endpoint once whether it gives log-probs).
    """

    kind: str

    @property
    def spec(self) -> str: ...

    @property
    def loaded(self) -> bool: ...

    @property
    def jobs(self) -> JobClient | None: ...

    @property
    def device(self) -> str: ...

    @property
    def dtype(self) -> str: ...

    def runtime(self) -> Runtime: ...

    def capabilities(self) -> Capabilities: ...

    def describe(self) -> str: ...

    def load(self) -> None: ...

    def parse(self, prompts: Sequence[str], *, fmt: str, top_n: int,
              search: SearchSettings, words: OwnWords = NO_WORDS) -> list[ParseResult]: ...

    def parse_and_score(self, asks: Sequence[Ask], *, fmt: str, top_n: int,
                        search: SearchSettings, words: OwnWords = NO_WORDS) -> list[tuple[ParseResult, PairScore | None]]: ...

    def forced(self, prompt: str, lfs: Sequence[str], *, fmt: str, top_n: int,
               words: OwnWords = NO_WORDS) -> list[ForcedScore]: ...

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str, top_n: int,
                    words: OwnWords = NO_WORDS) -> list[PairScore]: ...

    def beam_steps(self, prompt: str, beam: Beam, *, fmt: str, top_n: int,
                   constrained: bool, words: OwnWords = NO_WORDS) -> tuple[TokenStep, ...]: ...

    def sample(self, prompt: str, *, n: int, temperature: float, seed: int, fmt: str,
               max_new_tokens: int | None, words: OwnWords = NO_WORDS) -> list[str | None]: ...

    def close(self) -> None: ...


class JobClient(Protocol):
    """What a backend that runs sweeps offers (see :class:`amp.parser.backends.remote.RemoteJobs`)."""

    def submit(self, items: Sequence[BatchItem], search: SearchSettings, *, top_n: int, batch_size: int,
               label: str = "", meta: dict[str, Any] | None = None) -> JobStatus: ...

    def status(self, job_id: str) -> JobStatus: ...

    def list(self) -> list[JobStatus]: ...

    def results(self, job_id: str, start: int = 0) -> builtins.list[JobResult]: ...

    def cancel(self, job_id: str) -> JobStatus: ...
