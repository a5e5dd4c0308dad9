"""The search's settings, declared once: what a constrained beam search is asked to do.

:class:`SearchSettings` is the record of the settings that change a parse (and so are part of
its cache key): beams, the GNMT length-penalty α, whether the grammar constrains the search,
and the token budget.  ``top_n`` (alternatives recorded per token) and the shape of a joint
parse-and-score request (:data:`Ask`) sit beside it.  :class:`SearchAlgorithm` names *how* the
constrained search runs (the fast loop, the same loop one token per pass, or transformers'
``generate``): all three give the same beams, so the algorithm is not part of any cache key.

In this project "search" means these settings; the algorithm is always called the algorithm.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any, TypedDict, Unpack

from amp.parser.core import limits
from amp.parser.core.errors import DecodingError

#: ``(prompt, lf0, lf1)`` of a joint parse-and-score; ``lf0``/``lf1`` None for a parse only.
Ask = tuple[str, "str | None", "str | None"]

#: The largest number of alternatives recorded per token (``top_n``) any backend accepts.
MAX_TOP_N = 20
#: Alternatives recorded per token unless a caller asks for another number.
DEFAULT_TOP_N = 5



class SearchKeywords(TypedDict, total=False):
    """The fields of :class:`SearchSettings` as keywords (a call may name some of them)."""

    beams: int
    alpha: float
    constrained: bool
    max_new_tokens: int | None


@dataclass(frozen=True)
class SearchSettings:
    """The beam-search settings that are part of a parse's cache key (and of its call).

    The one declaration of their defaults (beam 5 and the GNMT α = 0.7 of docs/paper-notes.md §12),
    validated once, here, wherever they come from (UI, CLI, service, sweeps).  Callers pass the
    record; :meth:`of` builds it from a record and/or keywords.
    """

    beams: int = 5
    alpha: float = 0.7
    constrained: bool = True
    max_new_tokens: int | None = None

    def __post_init__(self) -> None:
        limits.check_beams(self.beams)
        object.__setattr__(self, "alpha", limits.check_alpha(self.alpha))
        object.__setattr__(self, "constrained", bool(self.constrained))
        limits.check_max_new_tokens(self.max_new_tokens)
        limits.check_search_cost(1, self.beams, self.max_new_tokens)

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


class SearchAlgorithm(StrEnum):
    """How the constrained search runs; every algorithm gives the same beams and sums.

    ``fast``: the project's own loop with grammar-forced text fed ahead and early exits
    (:mod:`amp.parser.search.fastsearch`); ``stepwise``: the same loop, one token per pass;
    ``generate``: transformers' ``generate`` with the grammar processor, the reference.
    """

    FAST = "fast"
    STEPWISE = "stepwise"
    GENERATE = "generate"


#: Environment variable choosing the constrained search algorithm (default ``fast``).
ALGORITHM_ENV = "AMP_SEARCH"


def search_algorithm(algorithm: str | None = None) -> SearchAlgorithm:
    """The algorithm to run: ``algorithm`` if given, else ``$AMP_SEARCH``, else ``fast``."""
    chosen = (algorithm or os.environ.get(ALGORITHM_ENV, "") or SearchAlgorithm.FAST).strip().lower()
    try:
        return SearchAlgorithm(chosen)
    except ValueError:
        names = ", ".join(a.value for a in SearchAlgorithm)
        raise DecodingError(f"unknown search algorithm {chosen!r}; use one of {names}") from None
