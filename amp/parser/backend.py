"""The model-backend seam: one declared interface for "the thing that parses and scores".

:class:`amp.parser.Parser` is the cached facade every caller uses (pages, CLI, experiments,
research, teaching, interpretation-level sampling).  Underneath it sits a :class:`Backend`,
which does the actual model work and says what it computes with (:class:`Runtime`, part of
every result-cache key).  Two backends exist:

* :class:`amp.parser.local.InProcessBackend` — a model loaded in this process through
  transformers (the default);
* :class:`amp.parser.remote.RemoteBackend` — a client of the parser service
  (``python -m amp serve``, :mod:`amp.serve`), JSON over HTTP.

A third backend (vLLM, llama.cpp, …) is one new module implementing :class:`Backend`; the
facade, its cache and every caller stay as they are.  A backend that can also run whole sweeps
as server-side jobs exposes them as :attr:`Backend.jobs` (see :mod:`amp.parser.jobs`);
:func:`amp.parser.batch.run_batch` then submits a job instead of looping in this process.

Every method takes plain values and returns the plain result records of
:mod:`amp.parser.results`, so any backend can be tested against another for equality.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, Unpack, runtime_checkable

from amp.errors import AmpError
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.records import JsonRecord, StrObject

if TYPE_CHECKING:
    from amp.parser.jobs import JobClient
    from amp.parser.results import Beam, ForcedScore, PairScore, ParseResult, TokenStep

#: ``(prompt, lf0, lf1)`` of a joint parse-and-score; ``lf0``/``lf1`` None for a parse only.
Ask = tuple[str, "str | None", "str | None"]

#: The largest number of alternatives recorded per token (``top_n``) any backend accepts.
MAX_TOP_N = 20
#: Alternatives recorded per token unless a caller asks for another number.
DEFAULT_TOP_N = 5


class BackendError(AmpError):
    """A backend could not answer: unreachable, refused, wrong token, version mismatch, bad reply.

    ``status`` is the HTTP status of a remote refusal (None for other failures); ``kind`` a short
    machine-readable word (``"unreachable"``, ``"unauthorized"``, ``"version"``, ``"refused"``,
    ``"server"``, ``"protocol"``).
    """

    def __init__(self, message: str, *, kind: str = "refused", status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


class SearchKeywords(TypedDict, total=False):
    """The fields of :class:`SearchSettings` as keywords (a call may name some of them)."""

    beams: int
    alpha: float
    constrained: bool
    max_new_tokens: int | None


@dataclass(frozen=True)
class SearchSettings:
    """The beam-search settings that are part of a parse's cache key (and of its call).

    The one declaration of their defaults (beam 5 and the GNMT α = 0.7 of reference §12),
    validated once, here, wherever they come from (UI, CLI, service, sweeps).  Callers pass the
    record; :meth:`of` builds it from a record and/or keywords.
    """

    beams: int = 5
    alpha: float = 0.7
    constrained: bool = True
    max_new_tokens: int | None = None

    def __post_init__(self) -> None:
        from amp.parser import limits  # the bounds every front end shares

        limits.check_beams(self.beams)
        object.__setattr__(self, "alpha", limits.check_alpha(self.alpha))
        object.__setattr__(self, "constrained", bool(self.constrained))
        limits.check_max_new_tokens(self.max_new_tokens)

    @classmethod
    def of(cls, search: SearchSettings | None = None, **changes: Unpack[SearchKeywords]) -> SearchSettings:
        """``search`` (the defaults when None) with ``changes`` applied, validated."""
        base = cls() if search is None else search
        return replace(base, **changes) if changes else base

    def as_dict(self) -> dict[str, Any]:
        """The settings as cache-key parts and call keywords."""
        return asdict(self)


#: The default search: every default a front end or sweep shows is read from here.
DEFAULT_SEARCH = SearchSettings()


@dataclass(frozen=True)
class Runtime(JsonRecord):
    """What a backend computes with: everything besides the call's own inputs that a result depends on.

    ``model``/``tokenizer`` are identities (:func:`amp.parser.model_spec.identities`), ``device`` a
    device *kind* as requested (``cpu``, ``cuda``, ``mps``, ``auto`` stays ``auto``), ``dtype``
    the weights dtype, ``versions`` the library versions that compute (torch, transformers,
    tokenizers).  A remote backend reports the *server's* runtime, so a result cached on the
    client is keyed exactly as the server keyed it.
    """

    model: str
    tokenizer: str
    device: str
    dtype: str
    versions: StrObject = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """What :class:`amp.parser.Parser` needs from a model backend.

    ``kind`` names it for people ("in-process", "remote").  ``spec`` is the model spec it runs.
    ``runtime()`` must not load a model.  ``loaded`` says whether a call would start without
    loading first; ``load()`` loads now (raising :class:`~amp.errors.ModelLoadError`).
    ``jobs`` is ``None`` unless the backend runs sweeps itself.  ``device``/``dtype`` say where
    and in what the model runs (or will run).
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
