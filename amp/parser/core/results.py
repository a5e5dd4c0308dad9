"""Plain result records of the parser: beams, forced scores, pair scores, divergences.

Frozen dataclasses whose fields are their JSON schema (:class:`amp.records.JsonRecord`:
``to_dict()``/``from_dict()`` and the cache's and demo packs' validation come from one
pydantic schema).  ``to_dict`` output is JSON-safe; non-finite floats are written as ``"nan"``,
``"inf"`` and ``"-inf"`` (:data:`amp.records.JsonFloat`) and read back as floats.
Probabilities are plain (not log) floats in [0, 1]; log-probabilities are natural logs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.records import JsonFloat, JsonObject, JsonRecord, OptJsonFloat, StrObject


def _log(p: float) -> float:
    if math.isnan(p):
        return math.nan
    return math.log(p) if p > 0 else -math.inf


@dataclass(frozen=True)
class TokenAlternative(JsonRecord):
    """One candidate token at a position (for hover tooltips): its text, id and probability."""

    token: str
    token_id: int
    prob: JsonFloat


@dataclass(frozen=True)
class TokenStep(JsonRecord):
    """One output token with its probability, raw and renormalised over the grammar mask.

    ``prob`` is softmax over the whole vocabulary; ``prob_grammar`` is softmax over the tokens
    the grammar allows at that position (so ``prob_grammar >= prob``; NaN where the token is
    outside the grammar, which only happens for unconstrained beams).  ``alternatives`` are the
    top-n tokens at the position (raw); ``alternatives_grammar`` the top-n under the mask.
    """

    token: str
    token_id: int
    prob: JsonFloat
    prob_grammar: JsonFloat
    alternatives: tuple[TokenAlternative, ...] = ()
    alternatives_grammar: tuple[TokenAlternative, ...] = ()

    @property
    def logprob(self) -> float:
        return _log(self.prob)

    @property
    def logprob_grammar(self) -> float:
        return _log(self.prob_grammar)


@dataclass(frozen=True)
class Beam(JsonRecord):
    """One beam of a (constrained) beam search (docs/paper-notes.md §12).

    ``raw_text`` is the generated text as produced (with the grammar's leading space and final
    newline; for an unconstrained beam cut after its first newline); ``text`` is the LF without
    them.  ``logprob`` is the summed raw log-probability of ``token_ids`` (``-inf`` for a filler
    beam that beam search returned without content); in a constrained beam the token that ends
    the LF counts with the total probability of every token ending it the same way (``"\n"``,
    ``"\n\n"``, …; :func:`amp.parser.search.processors.merge_end_groups`), exactly as
    :func:`amp.parser.search.scoring.forced_score` scores it.  ``score`` is the GNMT length-penalised score
    (:func:`amp.parser.search.decode.gnmt_score`).  ``finished`` means the beam ended at the
    grammar's final newline (constrained) or at a newline (unconstrained); a beam cut off by the
    length limit has ``finished=False`` and is never a valid LF.  ``parses`` says whether
    ``" " + text + "\\n"`` is in the decoding grammar.  ``steps`` (per-token probabilities and
    alternatives) may be empty; fill them with :func:`amp.parser.search.decode.beam_steps`.
    """

    rank: int
    text: str
    raw_text: str
    token_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    logprob: JsonFloat
    score: JsonFloat
    finished: bool
    parses: bool
    steps: tuple[TokenStep, ...] = ()


@dataclass(frozen=True)
class ParseResult(JsonRecord):
    """All beams of one prompt, ranked (finished beams first, each group by GNMT score).

    ``settings`` holds what determined the result (beams, alpha, max_new_tokens, top_n, …);
    ``prompt_tokens`` is the prompt's token count (with BOS where the tokenizer adds one).
    """

    beams: tuple[Beam, ...]
    constrained: bool
    fmt: str
    settings: dict[str, Any] = field(default_factory=dict, hash=False)
    prompt_tokens: int = 0

    @property
    def texts(self) -> list[str]:
        """The beam LFs in rank order (including unfinished/unparseable ones: check flags)."""
        return [b.text for b in self.beams]

    @property
    def valid_texts(self) -> list[str]:
        """The LFs of finished, parseable beams in rank order."""
        return [b.text for b in self.beams if b.finished and b.parses]


@dataclass(frozen=True)
class ForcedScore(JsonRecord):
    """Forced decoding of one LF after a prompt (docs/paper-notes.md §12, "Forced decode").

    Sums are over every token of ``" " + lf + "\\n"``, **including the token that carries the
    final newline** (the LF's end marker in our framing; the original scored an EOS and its
    metric dropped it).  That token's probability is the total probability of *ending the LF
    there*: every token that completes the LF the same way and then carries only more newlines
    counts (Gemma strongly prefers ``"\n\n"``, the §10 layout's blank line, over ``"\n"``), so
    the layout choice does not masquerade as low confidence.  ``min_prob`` is the paper's confidence: the minimum raw token
    probability (§2); ``min_prob_grammar`` the same under the grammar-renormalised
    probabilities.  ``mean_logprob`` = ``sum_logprob / len(token_ids)``.
    """

    lf: str
    token_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    steps: tuple[TokenStep, ...]
    sum_logprob: JsonFloat
    mean_logprob: JsonFloat
    sum_logprob_grammar: JsonFloat
    min_prob: JsonFloat
    min_prob_grammar: JsonFloat


def min_prob_ratio(m0: float, m1: float) -> float:
    """``m0 / (m0 + m1)``, the paper's P(LF0) from minimum token probabilities (§2); NaN if both 0."""
    total = m0 + m1
    return m0 / total if total > 0 else math.nan


def parting_index(a: Sequence[TokenStep], b: Sequence[TokenStep]) -> int | None:
    """The first position where two forced decodes' tokens differ (docs/paper-notes.md §12).

    Tokens are compared by id and text (an endpoint's steps carry no ids, ``-1``: their text
    decides).  ``None`` for identical sequences; ``len(shorter)`` when one is a strict prefix of the other.
    """
    n = min(len(a), len(b))
    index = next((i for i in range(n) if (a[i].token_id, a[i].token) != (b[i].token_id, b[i].token)), None)
    return n if index is None and len(a) != len(b) else index


def parted_min_probs(a: Sequence[TokenStep], b: Sequence[TokenStep]) -> tuple[float, float] | None:
    """``(m0', m1')``: each reading's minimum raw token probability over the positions from
    :func:`parting_index` to its end, the end token included (docs/paper-notes.md §12).

    ``None`` for identical sequences (one meaning, nothing to compare).  A side with no token
    from there on (a strict prefix of the other) has ``m' = 1``.
    """
    d = parting_index(a, b)
    if d is None:
        return None
    return min((s.prob for s in a[d:]), default=1.0), min((s.prob for s in b[d:]), default=1.0)


def parted_p_lf0(a: Sequence[TokenStep], b: Sequence[TokenStep]) -> float:
    """P(LF0) where the readings part: ``m0' / (m0' + m1')`` over :func:`parted_min_probs`
    (docs/paper-notes.md §12).  0.5 for identical sequences; NaN when both ``m'`` are 0.

    Tokens before the parting position are the same ids after the same prompt and prefix, so
    they have the same probability in both decodes and can never say which reading the model
    prefers; the paper's ``m0 / (m0 + m1)`` is pinned at 0.5 when both minima are such a token.
    """
    minima = parted_min_probs(a, b)
    return 0.5 if minima is None else min_prob_ratio(*minima)


def shared_minimum(a: Sequence[TokenStep], b: Sequence[TokenStep]) -> str | None:
    """The token that pins the paper's P(LF0) at 0.5, or ``None`` when it does not (docs/paper-notes.md §12).

    The paper's measure is *degenerate* when both readings' minimum token probability lies
    before :func:`parting_index` (a token they share, in the same context, so ``m0 == m1``):
    then the text of that token (LF0's least likely shared token, stripped) is returned.
    Identical sequences are not degenerate (they are one reading).
    """
    d = parting_index(a, b)
    if d is None or d == 0:
        return None
    head_a, head_b = a[:d], b[:d]
    lowest = min(range(d), key=lambda i: head_a[i].prob)
    if head_a[lowest].prob <= min((s.prob for s in a[d:]), default=1.0) and \
            min(s.prob for s in head_b) <= min((s.prob for s in b[d:]), default=1.0):
        return head_a[lowest].token.strip() or head_a[lowest].token
    return None


@dataclass(frozen=True)
class PairScore(JsonRecord):
    """P(LF0) of an ambiguous sentence from forced decoding of both LFs (paper §2, docs/paper-notes.md §12).

    ``p_lf0 = m0 / (m0 + m1)`` over the minimum token probabilities (the paper's definition,
    used by FIM and the few-shot plots; NaN if both minima are 0).  ``p_lf0_total`` normalises
    the *total* sequence probabilities instead, ``exp(s0) / (exp(s0) + exp(s1))`` — what the
    zero-shot notebooks behind the paper's Fig. 3 and Fig. 5 (right) plotted (docs/paper-notes.md §12).
    ``p_lf0_parted`` (a property, computed from the steps: nothing more is stored or cached)
    takes the minima only from where the readings' tokens part (:func:`parted_p_lf0`), the
    measure of the explorer's verdicts; ``shared_minimum`` names the shared token when the
    paper's measure is pinned at 0.5 by it.
    """

    lf0: ForcedScore
    lf1: ForcedScore
    p_lf0: JsonFloat
    p_lf0_total: JsonFloat

    @property
    def p_lf1(self) -> float:
        return 1.0 - self.p_lf0

    @property
    def parting_index(self) -> int | None:
        """The first token position where LF0's and LF1's tokens differ (:func:`parting_index`)."""
        return parting_index(self.lf0.steps, self.lf1.steps)

    @property
    def p_lf0_parted(self) -> float:
        """P(LF0) where the readings part (:func:`parted_p_lf0`, docs/paper-notes.md §12)."""
        return parted_p_lf0(self.lf0.steps, self.lf1.steps)

    @property
    def shared_minimum(self) -> str | None:
        """The shared token that pins :attr:`p_lf0` at 0.5 (:func:`shared_minimum`), else ``None``."""
        return shared_minimum(self.lf0.steps, self.lf1.steps)


@dataclass(frozen=True)
class StepsValue(JsonRecord):
    """The cached value of :meth:`amp.parser.Parser.beam_steps`: ``{"steps": [TokenStep, …]}``."""

    steps: tuple[TokenStep, ...]


@dataclass(frozen=True)
class SamplesValue(JsonRecord):
    """The cached value of :meth:`amp.parser.Parser.sample`: ``{"samples": [text | null, …]}``."""

    samples: tuple[str | None, ...]


@dataclass(frozen=True)
class Divergence(JsonRecord):
    """Where two token sequences first differ (the data behind the paper's Figure 4).

    ``index`` is the first token position whose ids differ (``None`` for identical sequences;
    ``len(shorter)`` when one is a prefix of the other, with that side's token/probabilities
    ``None``).  ``char_offset`` is the offset of that token in the LF text (the framed text
    without its leading space).  ``window_a``/``window_b`` are the raw token probabilities of
    positions ``window_start … index + w`` (clipped to each sequence), the model's confidence
    around the divergence.
    """

    index: int | None
    char_offset: int | None
    token_a: str | None
    token_b: str | None
    prob_a: OptJsonFloat
    prob_b: OptJsonFloat
    prob_a_grammar: OptJsonFloat
    prob_b_grammar: OptJsonFloat
    window_a: tuple[JsonFloat, ...] = ()
    window_b: tuple[JsonFloat, ...] = ()
    window_start: int = 0


@dataclass(frozen=True)
class Runtime(JsonRecord):
    """What a backend computes with: everything besides the call's own inputs that a result depends on.

    ``model``/``tokenizer`` are identities (:func:`amp.parser.models.spec.identities`), ``device`` a
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


# -- batch items and sweep jobs (what run_batch, the service and its clients exchange) ------------------


@dataclass(frozen=True)
class BatchItem(JsonRecord):
    """One unit of work: parse ``prompt`` and/or score ``lf0`` against ``lf1`` after it."""

    id: str
    prompt: str
    lf0: str | None = None
    lf1: str | None = None
    fmt: str = DEFAULT_FORMAT
    parse: bool = True
    score: bool = True


@dataclass(frozen=True)
class BatchItemResult(JsonRecord):
    """The outcome of one :class:`BatchItem`; ``cached`` if nothing had to be computed."""

    id: str
    parse: ParseResult | None
    pair: PairScore | None
    cached: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


#: Job states: queued → running → done | cancelled | failed; interrupted = the service restarted
#: mid-run (it resumes such jobs by itself, recomputing nothing already cached).
STATES = ("queued", "running", "done", "cancelled", "failed", "interrupted")
FINAL = frozenset({"done", "cancelled", "failed"})

def _known_state(state: str) -> str:
    if state not in STATES:
        raise ValueError(f"unknown job state {state!r}")
    return state


@dataclass(frozen=True)
class JobStatus(JsonRecord):
    """Where a job stands: ``done`` of ``total`` items (``cached`` answered from the server's
    cache, ``errors`` failed), times in seconds since the epoch, ``eta_s`` the estimated time
    left (None until an item was computed), ``meta`` what the submitter attached (e.g. the
    sweep's settings, so a page can rebuild its plan when it reattaches)."""

    id: str
    label: str
    state: Annotated[str, AfterValidator(_known_state)]
    total: int
    done: int = 0
    cached: int = 0
    errors: int = 0
    created: float = 0.0
    started: float | None = None
    finished: float | None = None
    eta_s: float | None = None
    error: str | None = None
    meta: JsonObject = field(default_factory=dict)
    #: Items whose search has finished inside a running batch, not yet recorded (they are being
    #: scored): a bar shows ``done + searched`` so it moves item by item.  Not written when 0 (nor
    #: ``elapsed_s`` when unknown), so a status from before these fields re-encodes as it was.
    searched: Annotated[int, Field(exclude_if=lambda v: v == 0)] = 0
    #: Seconds the job has run, by the service's clock (to its end once final).
    elapsed_s: Annotated[float | None, Field(exclude_if=lambda v: v is None)] = None

    @property
    def final(self) -> bool:
        return self.state in FINAL



@dataclass(frozen=True)
class JobResult:
    """One finished item of a job: its position, the item, and its result."""

    index: int
    item: BatchItem
    result: BatchItemResult
