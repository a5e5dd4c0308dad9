"""The llama.cpp backend: a GGUF file run as it is, on the CPU, with the project's constrained search.

Implements :class:`amp.parser.backend.Backend` with :class:`amp.parser.search.cell_decoder.CellDecoder`
over a llama.cpp context (:class:`amp.parser.models.gguf_cells.SeqCells`): the prompt is evaluated
once and its KV cells shared by every beam, LF and sample of the item (sequence copies), beams
advance together in one batch per step, finished beams' cells are freed; the grammar automaton,
the beam bookkeeping, the early exit and the GNMT re-ranking are the fast search's
(:mod:`amp.parser.search.fastsearch`), on llama.cpp's log-probs.  The model is any ``.gguf``
(``--model file.gguf``) or, for ``default``, the embedded model's GGUF as shipped
(:func:`amp.parser.models.embedded.default_gguf`); it loads lazily, and every call holds its lock.
Every call runs on the cores free at that moment (:mod:`amp.parser.backends.llama_threads`), unless
``threads``/``$AMP_LLAMA_THREADS`` fixes the count.

What it computes with (:meth:`LlamaBackend.runtime`, part of every cache key): the GGUF's
identity, device ``cpu``, dtype ``llama.cpp-<build>`` (:func:`engine_tag`) and the engine's name
and build among the versions, so its results are cached apart from the
transformers engine's and its sweeps get their own run names.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.backends.llama_threads import THREADS_ENV, LoadGauge, thread_override
from amp.parser.core.capabilities import Capabilities
from amp.parser.core.errors import ModelLoadError
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, Runtime, TokenStep
from amp.parser.models.embedded import default_gguf
from amp.parser.models.spec import DEFAULT_SPEC, identities, resolve_spec
from amp.parser.search.prefix_states import PrefixStates
from amp.parser.search.settings import Ask, SearchSettings

if TYPE_CHECKING:
    from amp.parser.models.gguf_cells import GgufModel
    from amp.parser.search.cell_decoder import CellDecoder

T = TypeVar("T")

#: The engine's name (its key in :mod:`amp.parser.engines`, the ``engine`` of its runtime's versions).
ENGINE = "llama.cpp"
#: What it can do: the constrained search and forced scoring of a GGUF (the embedded model's, or a
#: ``.gguf`` file) on the CPU, in the GGUF's own precision; no gradients, no unconstrained search.
CAPABILITIES = Capabilities(engine=ENGINE, gradients=False, scores=True, unconstrained=False, batch_size=8,
                            devices=("cpu",), formats=("default", "gguf"), precisions=(), own_precision=True,
                            shares_prefixes=True)

#: Cells of the first context (grown when a request needs more).
FIRST_CELLS = 4096
#: Sequences of a context: the prompt's, up to 64 beams, and room for the forced LFs.
SEQUENCES = 68

_MODELS: dict[Path, GgufModel] = {}
_MODELS_LOCK = threading.Lock()


def llama_cpp_installed() -> bool:
    """Whether ``llama-cpp-python`` can be imported (without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


def engine_tag(build: str) -> str:
    """The precision label of results this engine computes with ``build``: ``llama.cpp-<build>``
    (the runtime's dtype, part of every cache key and run name of its results)."""
    return f"{ENGINE}-{build}"


@lru_cache(maxsize=1)
def llama_version() -> str:
    """The installed llama-cpp-python version (``none`` when missing): the engine's build, part of
    every cache key and run name of its results."""
    try:
        return metadata.version("llama_cpp_python")
    except metadata.PackageNotFoundError:
        return "none"


def shared_gguf(path: Path) -> GgufModel:
    """The loaded GGUF of ``path``, shared by every backend of this process (one at a time)."""
    from amp.parser.models.gguf_cells import load_gguf  # late: start-up cost (torch)

    with _MODELS_LOCK:
        gm = _MODELS.get(path)
        if gm is None:
            for old in list(_MODELS):
                _MODELS.pop(old).close()
            gm = _MODELS[path] = load_gguf(path)
        return gm


def gguf_path(spec: str, gguf_file: str | None = None) -> Path:
    """The GGUF file ``spec`` names for the llama.cpp engine (:class:`ModelLoadError` otherwise)."""
    src = resolve_spec(spec, gguf_file)
    if src.kind == "default":
        return default_gguf()
    if src.kind == "gguf" and src.path is not None:
        return src.path
    raise ModelLoadError(
        f"the llama.cpp engine runs a .gguf file, and {spec!r} is a "
        f"{'Hugging Face model' if src.kind == 'hub' else 'transformers model folder'}: pass a .gguf file "
        "with --model, or use --engine transformers"
    )


class LlamaBackend:
    """A GGUF model of this process run by llama.cpp.

    Threads: ``threads`` (else ``$AMP_LLAMA_THREADS``) fixes the count, checked here once
    (:func:`~amp.parser.backends.llama_threads.thread_override`); without one, every call runs on
    the cores free at that moment (``gauge``, :class:`~amp.parser.backends.llama_threads.LoadGauge`),
    set on the live context (``llama_set_n_threads``: the model and its cells stay)."""

    kind = "in-process"

    def __init__(self, spec: str = DEFAULT_SPEC, *, gguf_file: str | None = None, threads: int | None = None,
                 gauge: LoadGauge | None = None) -> None:
        self.spec = spec or DEFAULT_SPEC
        self.gguf_file = gguf_file
        self._override = thread_override(threads)
        self._gauge = gauge if gauge is not None else LoadGauge()
        self._threads_now: int | None = None  # the count of this backend's context, as last set
        self._gm: GgufModel | None = None
        self._decoder: CellDecoder | None = None
        self._prefixes: PrefixStates | None = None  # saved prompt prefixes, kept when the context grows
        self._load_lock = threading.Lock()
        self._ids: tuple[str, str] | None = None

    @property
    def threads(self) -> int | None:
        """The fixed thread count, or ``None`` when the count adapts to the free cores."""
        return self._override

    @threads.setter
    def threads(self, threads: int | None) -> None:
        self._override = None if threads is None else thread_override(threads)

    @property
    def threads_now(self) -> int | None:
        """The thread count the last call ran on (``None`` before the first)."""
        return self._threads_now

    # -- what it computes with ----------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._gm is not None and self._gm.model is not None

    @property
    def jobs(self) -> None:
        return None  # sweeps run in this process (amp.parser.batch.run_batch)

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def dtype(self) -> str:
        return engine_tag(llama_version())

    def runtime(self) -> Runtime:
        if self._ids is None:
            self._ids = identities(self.spec, self.gguf_file)
        model_id, tok_id = self._ids
        return Runtime(model=model_id, tokenizer=tok_id, device="cpu", dtype=self.dtype,
                       versions={"engine": ENGINE, "llama_cpp_python": llama_version()})

    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def describe(self) -> str:
        threads = f"{self._override} threads" if self._override is not None else "threads: the free cores"
        return f"cpu · llama.cpp {llama_version()} · GGUF as shipped · {threads}"

    def load(self) -> None:
        self._model()

    def _model(self) -> GgufModel:
        gm = self._gm
        if gm is None or gm.model is None:
            with self._load_lock:
                gm = self._gm
                if gm is None or gm.model is None:
                    gm = shared_gguf(gguf_path(self.spec, self.gguf_file))
                    self._gm, self._decoder, self._prefixes = gm, None, None  # (states are a model's own)
        return gm

    def _run(self, need: int, fn: Callable[[CellDecoder], T]) -> T:
        """``fn`` on this backend's decoder, its context holding at least ``need`` cells."""
        from amp.parser.models.gguf_cells import llama_cpp_module  # late: start-up cost (torch)
        from amp.parser.search.cell_decoder import CellDecoder  # late: start-up cost (torch, transformers)

        gm = self._model()
        with gm.lock:
            threads = self._gauge.threads(self._override)  # measured again at every call
            decoder = self._decoder
            if decoder is None or decoder.cells.n_ctx < need:  # type: ignore[attr-defined]
                cells = FIRST_CELLS
                while cells < need:
                    cells *= 2
                if decoder is not None:
                    decoder.cells.close()  # type: ignore[attr-defined]
                seq = gm.cells(n_ctx=cells, n_seq=SEQUENCES, threads=threads)
                if self._prefixes is None:
                    self._prefixes = PrefixStates()
                decoder = self._decoder = CellDecoder(seq, gm.tokenizer, gm.eos, context=gm.n_ctx_train,
                                                      prefixes=self._prefixes)
            elif threads != self._threads_now:  # the live context: no reload, its cells stay
                ctx = decoder.cells.ctx  # type: ignore[attr-defined]
                llama_cpp_module().llama_set_n_threads(ctx, threads, threads)
            self._threads_now = threads
            return fn(decoder)

    @staticmethod
    def _cells(beams: int, budget: int | None) -> int:
        """Cells a search may need: a long prompt plus, per step, every live sequence's token (the
        beams and two riders) and the padding rows of its calls (:class:`SeqCells`)."""
        from amp.parser.models.gguf_cells import SeqCells  # late: start-up cost (torch)

        return 2048 + SeqCells.step_cells(max(beams, 3) + 3) * (budget or 256)

    # -- the work ---------------------------------------------------------------------------------------

    def parse(self, prompts: Sequence[str], *, fmt: str, top_n: int, search: SearchSettings,
              words: OwnWords = NO_WORDS) -> list[ParseResult]:
        asks: list[Ask] = [(p, None, None) for p in prompts]
        return [parse for parse, _pair in self.parse_and_score(asks, fmt=fmt, top_n=top_n, search=search,
                                                               words=words)]

    def parse_and_score(self, asks: Sequence[Ask], *, fmt: str, top_n: int,
                        search: SearchSettings, words: OwnWords = NO_WORDS) -> list[tuple[ParseResult, PairScore | None]]:
        return self._run(self._cells(search.beams, search.max_new_tokens),
                         lambda d: d.parse_and_score(asks, search, fmt=fmt, top_n=top_n, words=words))

    def forced(self, prompt: str, lfs: Sequence[str], *, fmt: str, top_n: int,
               words: OwnWords = NO_WORDS) -> list[ForcedScore]:
        return self._run(self._cells(len(lfs), None),
                         lambda d: d.forced(prompt, lfs, fmt=fmt, top_n=top_n, words=words))

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str, top_n: int,
                    words: OwnWords = NO_WORDS) -> list[PairScore]:
        return self._run(self._cells(2 * len(items), None),
                         lambda d: d.score_pairs(items, fmt=fmt, top_n=top_n, words=words))

    def beam_steps(self, prompt: str, beam: Beam, *, fmt: str, top_n: int, constrained: bool,
                   words: OwnWords = NO_WORDS) -> tuple[TokenStep, ...]:
        return self._run(self._cells(1, None),
                         lambda d: d.beam_steps(prompt, beam, fmt=fmt, top_n=top_n, constrained=constrained,
                                                words=words))

    def sample(self, prompt: str, *, n: int, temperature: float, seed: int, fmt: str,
               max_new_tokens: int | None, words: OwnWords = NO_WORDS) -> list[str | None]:
        return self._run(self._cells(min(n, SEQUENCES - 1), max_new_tokens),
                         lambda d: d.sample(prompt, n=n, temperature=temperature, seed=seed, fmt=fmt,
                                            max_new_tokens=max_new_tokens, words=words))

    def close(self) -> None:
        """Free this backend's context (the model stays shared in the process)."""
        if self._decoder is not None:
            self._decoder.cells.close()  # type: ignore[attr-defined]
            self._decoder = None
            self._threads_now = None

    def __repr__(self) -> str:
        return f"LlamaBackend({self.spec!r}, {'loaded' if self.loaded else 'not loaded'})"


__all__ = ["CAPABILITIES", "ENGINE", "THREADS_ENV", "LlamaBackend", "engine_tag", "gguf_path", "llama_cpp_installed",
           "shared_gguf"]
