"""JSON bodies of the parser service, validated and bounded with pydantic (FastAPI's OpenAPI).

Bounds come from :mod:`amp.parser.core.limits`, the same ones the library applies.  Result records
travel as the ``to_dict()`` JSON of :mod:`amp.parser.core.results` (non-finite floats as strings).
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model, model_validator

from amp.logic.own_words import MAX_OWN_WORDS, MAX_WORD_CHARS
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.logic.vocabulary import Format as Fmt
from amp.parser.core import json_bounds, limits
from amp.parser.core.results import BatchItem
from amp.parser.search.settings import DEFAULT_SEARCH as _DEFAULT
from amp.parser.search.settings import DEFAULT_TOP_N, MAX_TOP_N

Prompt = Annotated[str, Field(min_length=1, max_length=limits.MAX_PROMPT_CHARS)]
LF = Annotated[str, Field(min_length=1, max_length=limits.MAX_LF_CHARS)]
TopN = Annotated[int, Field(ge=0, le=MAX_TOP_N)]
#: A free-form JSON object nested at most :data:`~amp.parser.core.limits.MAX_JSON_DEPTH` levels
#: (a 422 naming the bound, before anything is stored or sent on).
JsonDict = Annotated[dict[str, Any], AfterValidator(lambda v: json_bounds.check_json_depth(v, "the object"))]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Word = Annotated[str, Field(min_length=1, max_length=MAX_WORD_CHARS)]


class Words(Strict):
    """A teacher's own words (:class:`amp.logic.own_words.OwnWords`): they extend the decoding
    grammar of this request; shapes and clashes are checked by the record itself (a 400)."""

    unary: list[Word] = Field(default_factory=list, max_length=MAX_OWN_WORDS)
    binary: list[Word] = Field(default_factory=list, max_length=MAX_OWN_WORDS)
    constants: list[Word] = Field(default_factory=list, max_length=MAX_OWN_WORDS)


class Search(Strict):
    """Beam-search settings: the fields of :class:`amp.parser.search.settings.SearchSettings`, its defaults."""

    beams: int = Field(_DEFAULT.beams, ge=1, le=limits.MAX_BEAMS)
    alpha: float = Field(_DEFAULT.alpha, ge=0.0, le=limits.MAX_ALPHA, allow_inf_nan=False)
    constrained: bool = _DEFAULT.constrained
    max_new_tokens: int | None = Field(_DEFAULT.max_new_tokens, ge=1, le=limits.MAX_NEW_TOKENS)
    # (its cost is checked by the request that holds it, with that request's count of prompts)


def _within(check: Any, *args: Any) -> None:
    """A cost check of :mod:`~amp.parser.core.limits` (``RequestTooLarge``) as the ValueError that
    pydantic turns into a 422 carrying its message (the ingress drops pydantic's own wording)."""
    try:
        check(*args)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


def _within_cost(prompts: int, search: Search) -> None:
    """prompts × beams × tokens within :data:`~amp.parser.core.limits.MAX_SEARCH_COST` (a 422 naming it)."""
    _within(limits.check_search_cost, prompts, search.beams, search.max_new_tokens)


class ParseRequest(Strict):
    """Constrained beam search after each prompt."""

    prompts: list[Prompt] = Field(min_length=1, max_length=limits.MAX_BATCH_ITEMS)
    fmt: Fmt = DEFAULT_FORMAT
    words: Words | None = None
    top_n: TopN = DEFAULT_TOP_N
    search: Search = Search()

    @model_validator(mode="after")
    def _within_cost(self) -> ParseRequest:
        _within_cost(len(self.prompts), self.search)
        return self


class JointRequest(Strict):
    """Beam search and, where both LFs are given, P(LF0) — one prompt pass per item."""

    items: list[tuple[Prompt, LF | None, LF | None]] = Field(min_length=1, max_length=limits.MAX_BATCH_ITEMS)
    fmt: Fmt = DEFAULT_FORMAT
    words: Words | None = None
    top_n: TopN = DEFAULT_TOP_N
    search: Search = Search()

    @model_validator(mode="after")
    def _within_cost(self) -> JointRequest:
        _within_cost(len(self.items), self.search)
        return self


class ForcedRequest(Strict):
    """Forced decoding of each LF after one prompt."""

    prompt: Prompt
    lfs: list[LF] = Field(min_length=1, max_length=limits.MAX_FORCED_LFS)
    fmt: Fmt = DEFAULT_FORMAT
    words: Words | None = None
    top_n: TopN = DEFAULT_TOP_N

    @model_validator(mode="after")
    def _within_cost(self) -> ForcedRequest:
        _within(limits.check_scoring_cost, self.lfs, "the LFs to score")
        return self


class PairsRequest(Strict):
    """P(LF0) of each ``(prompt, lf0, lf1)``."""

    items: list[tuple[Prompt, LF, LF]] = Field(min_length=1, max_length=limits.MAX_BATCH_ITEMS)
    fmt: Fmt = DEFAULT_FORMAT
    words: Words | None = None
    top_n: TopN = DEFAULT_TOP_N

    @model_validator(mode="after")
    def _within_cost(self) -> PairsRequest:
        _within(limits.check_scoring_cost, [lf for _p, lf0, lf1 in self.items for lf in (lf0, lf1)],
                f"{len(self.items)} pair(s)")
        return self


class StepsRequest(Strict):
    """Per-token detail of one beam (a :class:`~amp.parser.core.results.Beam` as JSON)."""

    prompt: Prompt
    beam: JsonDict
    fmt: Fmt = DEFAULT_FORMAT
    words: Words | None = None
    top_n: TopN = DEFAULT_TOP_N
    constrained: bool = True

    @model_validator(mode="after")
    def _within_cost(self) -> StepsRequest:
        ids = self.beam.get("token_ids")
        if isinstance(ids, list) and len(ids) > limits.MAX_NEW_TOKENS:  # (its shape is the Beam's to check: 400)
            raise ValueError(f"the beam has {len(ids):,} token ids, over the limit of {limits.MAX_NEW_TOKENS:,} "
                             "(MAX_NEW_TOKENS: no search makes a longer one)")
        return self


class SampleRequest(Strict):
    """Grammar-constrained samples."""

    prompt: Prompt
    n: int = Field(20, ge=1, le=limits.MAX_SAMPLES)
    temperature: float = Field(1.0, ge=limits.MIN_TEMPERATURE, le=limits.MAX_TEMPERATURE, allow_inf_nan=False)
    seed: int = Field(0, ge=0, le=limits.MAX_SEED)
    fmt: Fmt = DEFAULT_FORMAT
    words: Words | None = None
    max_new_tokens: int | None = Field(None, ge=1, le=limits.MAX_NEW_TOKENS)

    @model_validator(mode="after")
    def _within_cost(self) -> SampleRequest:
        _within(limits.check_sampling_cost, self.n, self.max_new_tokens)
        return self


def wire_model(record: type, bounds: dict[str, Any], doc: str, *, name: str) -> type[Strict]:
    """The request model of a record: the record's fields, in order, with its defaults, each typed
    by the wire's bounded type in ``bounds`` where it has one (its own type elsewhere), unknown
    keys refused (a 422).  The record declares what an item is; the wire adds only its bounds."""
    hints = get_type_hints(record)
    fields: dict[str, Any] = {f.name: (bounds.get(f.name, hints[f.name]), _default(f))
                              for f in dataclasses.fields(record)}
    unknown = set(bounds) - set(fields)
    if unknown:
        raise TypeError(f"bounds for fields that {record.__name__} does not have: {sorted(unknown)}")
    model: type[Strict] = create_model(name, __base__=Strict, __doc__=doc, __module__=__name__, **fields)
    return model


def _default(f: dataclasses.Field[Any]) -> Any:
    """A record field's default as pydantic takes it (``...``: required)."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return Field(default_factory=f.default_factory)
    return ...


#: The wire's bound on each field of a :class:`~amp.parser.core.results.BatchItem` that has one.
JOB_ITEM_BOUNDS: dict[str, Any] = {
    "id": Annotated[str, Field(min_length=1, max_length=limits.MAX_ID_CHARS)],
    "prompt": Prompt,
    "lf0": LF | None,
    "lf1": LF | None,
    "fmt": Fmt,
}

if TYPE_CHECKING:  # what mypy needs to know; the fields come from the record at run time
    JobItem = Strict
else:
    JobItem = wire_model(BatchItem, JOB_ITEM_BOUNDS, "One sweep item (:class:`amp.parser.core.results.BatchItem`).",
                         name="JobItem")


class JobRequest(Strict):
    """A sweep to run as a job."""

    items: list[JobItem] = Field(min_length=1, max_length=limits.MAX_JOB_ITEMS)
    search: Search = Search()
    top_n: TopN = DEFAULT_TOP_N
    batch_size: int = Field(8, ge=1, le=limits.MAX_JOB_BATCH)
    label: str = Field("", max_length=limits.MAX_ID_CHARS)
    meta: JsonDict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _each_search_within_cost(self) -> JobRequest:
        _within_cost(1, self.search)  # (each item's search; a chunk takes as many as the bound allows)
        return self

    @model_validator(mode="after")
    def _meta_within_bound(self) -> JobRequest:
        size = len(json.dumps(self.meta, ensure_ascii=False).encode("utf-8"))
        if size > limits.MAX_JOB_META_BYTES:
            raise ValueError(f"meta is {size:,} bytes as JSON, over the limit of {limits.MAX_JOB_META_BYTES:,} "
                             "(MAX_JOB_META_BYTES)")
        return self
