"""Plain result records of the parser: beams, forced scores, pair scores, divergences.

Frozen dataclasses with ``to_dict()``/``from_dict()``.  ``to_dict`` output is JSON-safe (only
str/int/float/bool/None, lists and dicts).  JSON has no NaN or infinities, so **non-finite floats
are written as the strings ``"nan"``, ``"inf"`` and ``"-inf"``** and read back as floats by
``from_dict`` (a round trip is exact: ``R.from_dict(json.loads(json.dumps(r.to_dict()))) == r``
except that NaN never equals itself).  Probabilities are plain (not log) floats in [0, 1];
log-probabilities are natural logs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


def enc_float(x: float | None) -> float | str | None:
    """A float as JSON allows it: finite floats as is, NaN/±inf as ``"nan"``/``"inf"``/``"-inf"``."""
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    if math.isnan(x):
        return "nan"
    return "inf" if x > 0 else "-inf"


def dec_float(x: float | str | None) -> float | None:
    """Inverse of :func:`enc_float`."""
    if x is None:
        return None
    return float(x)


def dec_req(x: float | str | None) -> float:
    """Inverse of :func:`enc_float` for a value that must be present: ``None`` raises
    ``TypeError`` (a cache reader treats the entry as corrupt)."""
    if x is None:
        raise TypeError("a required number is missing (null)")
    return float(x)


def _log(p: float) -> float:
    if math.isnan(p):
        return math.nan
    return math.log(p) if p > 0 else -math.inf


@dataclass(frozen=True)
class TokenAlternative:
    """One candidate token at a position (for hover tooltips): its text, id and probability."""

    token: str
    token_id: int
    prob: float

    def to_dict(self) -> dict[str, Any]:
        return {"token": self.token, "token_id": self.token_id, "prob": enc_float(self.prob)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TokenAlternative:
        return cls(token=d["token"], token_id=int(d["token_id"]), prob=dec_req(d["prob"]))


@dataclass(frozen=True)
class TokenStep:
    """One output token with its probability, raw and renormalised over the grammar mask.

    ``prob`` is softmax over the whole vocabulary; ``prob_grammar`` is softmax over the tokens
    the grammar allows at that position (so ``prob_grammar >= prob``; NaN where the token is
    outside the grammar, which only happens for unconstrained beams).  ``alternatives`` are the
    top-n tokens at the position (raw); ``alternatives_grammar`` the top-n under the mask.
    """

    token: str
    token_id: int
    prob: float
    prob_grammar: float
    alternatives: tuple[TokenAlternative, ...] = ()
    alternatives_grammar: tuple[TokenAlternative, ...] = ()

    @property
    def logprob(self) -> float:
        return _log(self.prob)

    @property
    def logprob_grammar(self) -> float:
        return _log(self.prob_grammar)

    def to_dict(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "token_id": self.token_id,
            "prob": enc_float(self.prob),
            "prob_grammar": enc_float(self.prob_grammar),
            "alternatives": [a.to_dict() for a in self.alternatives],
            "alternatives_grammar": [a.to_dict() for a in self.alternatives_grammar],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TokenStep:
        return cls(
            token=d["token"],
            token_id=int(d["token_id"]),
            prob=dec_req(d["prob"]),
            prob_grammar=dec_req(d["prob_grammar"]),
            alternatives=tuple(TokenAlternative.from_dict(a) for a in d.get("alternatives", ())),
            alternatives_grammar=tuple(
                TokenAlternative.from_dict(a) for a in d.get("alternatives_grammar", ())
            ),
        )


@dataclass(frozen=True)
class Beam:
    """One beam of a (constrained) beam search (reference §12).

    ``raw_text`` is the generated text as produced (with the grammar's leading space and final
    newline; for an unconstrained beam cut after its first newline); ``text`` is the LF without
    them.  ``logprob`` is the summed raw log-probability of ``token_ids`` (``-inf`` for a filler
    beam that beam search returned without content); in a constrained beam the token that ends
    the LF counts with the total probability of every token ending it the same way (``"\n"``,
    ``"\n\n"``, …; :func:`amp.parser.processors.merge_end_groups`), exactly as
    :func:`amp.parser.scoring.forced_score` scores it.  ``score`` is the GNMT length-penalised score
    (:func:`amp.parser.decode.gnmt_score`).  ``finished`` means the beam ended at the
    grammar's final newline (constrained) or at a newline (unconstrained); a beam cut off by the
    length limit has ``finished=False`` and is never a valid LF.  ``parses`` says whether
    ``" " + text + "\\n"`` is in the decoding grammar.  ``steps`` (per-token probabilities and
    alternatives) may be empty; fill them with :func:`amp.parser.decode.beam_steps`.
    """

    rank: int
    text: str
    raw_text: str
    token_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    logprob: float
    score: float
    finished: bool
    parses: bool
    steps: tuple[TokenStep, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "text": self.text,
            "raw_text": self.raw_text,
            "token_ids": list(self.token_ids),
            "tokens": list(self.tokens),
            "logprob": enc_float(self.logprob),
            "score": enc_float(self.score),
            "finished": self.finished,
            "parses": self.parses,
            "steps": [s.to_dict() for s in self.steps],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Beam:
        return cls(
            rank=int(d["rank"]),
            text=d["text"],
            raw_text=d["raw_text"],
            token_ids=tuple(int(i) for i in d["token_ids"]),
            tokens=tuple(d["tokens"]),
            logprob=dec_req(d["logprob"]),
            score=dec_req(d["score"]),
            finished=bool(d["finished"]),
            parses=bool(d["parses"]),
            steps=tuple(TokenStep.from_dict(s) for s in d.get("steps", ())),
        )


@dataclass(frozen=True)
class ParseResult:
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "beams": [b.to_dict() for b in self.beams],
            "constrained": self.constrained,
            "fmt": self.fmt,
            "settings": dict(self.settings),
            "prompt_tokens": self.prompt_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ParseResult:
        return cls(
            beams=tuple(Beam.from_dict(b) for b in d["beams"]),
            constrained=bool(d["constrained"]),
            fmt=d["fmt"],
            settings=dict(d.get("settings", {})),
            prompt_tokens=int(d.get("prompt_tokens", 0)),
        )


@dataclass(frozen=True)
class ForcedScore:
    """Forced decoding of one LF after a prompt (reference §12, "Forced decode").

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
    sum_logprob: float
    mean_logprob: float
    sum_logprob_grammar: float
    min_prob: float
    min_prob_grammar: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "lf": self.lf,
            "token_ids": list(self.token_ids),
            "tokens": list(self.tokens),
            "steps": [s.to_dict() for s in self.steps],
            "sum_logprob": enc_float(self.sum_logprob),
            "mean_logprob": enc_float(self.mean_logprob),
            "sum_logprob_grammar": enc_float(self.sum_logprob_grammar),
            "min_prob": enc_float(self.min_prob),
            "min_prob_grammar": enc_float(self.min_prob_grammar),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ForcedScore:
        return cls(
            lf=d["lf"],
            token_ids=tuple(int(i) for i in d["token_ids"]),
            tokens=tuple(d["tokens"]),
            steps=tuple(TokenStep.from_dict(s) for s in d["steps"]),
            sum_logprob=dec_req(d["sum_logprob"]),
            mean_logprob=dec_req(d["mean_logprob"]),
            sum_logprob_grammar=dec_req(d["sum_logprob_grammar"]),
            min_prob=dec_req(d["min_prob"]),
            min_prob_grammar=dec_req(d["min_prob_grammar"]),
        )


@dataclass(frozen=True)
class PairScore:
    """P(LF0) of an ambiguous sentence from forced decoding of both LFs (paper §2, reference §12).

    ``p_lf0 = m0 / (m0 + m1)`` over the minimum token probabilities (the paper's definition,
    used by FIM and the few-shot plots; NaN if both minima are 0).  ``p_lf0_total`` normalises
    the *total* sequence probabilities instead, ``exp(s0) / (exp(s0) + exp(s1))`` — what the
    zero-shot notebooks behind the paper's Fig. 3 and Fig. 5 (right) plotted (reference §12).
    """

    lf0: ForcedScore
    lf1: ForcedScore
    p_lf0: float
    p_lf0_total: float

    @property
    def p_lf1(self) -> float:
        return 1.0 - self.p_lf0

    def to_dict(self) -> dict[str, Any]:
        return {
            "lf0": self.lf0.to_dict(),
            "lf1": self.lf1.to_dict(),
            "p_lf0": enc_float(self.p_lf0),
            "p_lf0_total": enc_float(self.p_lf0_total),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PairScore:
        return cls(
            lf0=ForcedScore.from_dict(d["lf0"]),
            lf1=ForcedScore.from_dict(d["lf1"]),
            p_lf0=dec_req(d["p_lf0"]),
            p_lf0_total=dec_req(d["p_lf0_total"]),
        )


@dataclass(frozen=True)
class Divergence:
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
    prob_a: float | None
    prob_b: float | None
    prob_a_grammar: float | None
    prob_b_grammar: float | None
    window_a: tuple[float, ...] = ()
    window_b: tuple[float, ...] = ()
    window_start: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "char_offset": self.char_offset,
            "token_a": self.token_a,
            "token_b": self.token_b,
            "prob_a": enc_float(self.prob_a),
            "prob_b": enc_float(self.prob_b),
            "prob_a_grammar": enc_float(self.prob_a_grammar),
            "prob_b_grammar": enc_float(self.prob_b_grammar),
            "window_a": [enc_float(p) for p in self.window_a],
            "window_b": [enc_float(p) for p in self.window_b],
            "window_start": self.window_start,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Divergence:
        return cls(
            index=d["index"],
            char_offset=d["char_offset"],
            token_a=d["token_a"],
            token_b=d["token_b"],
            prob_a=dec_float(d["prob_a"]),
            prob_b=dec_float(d["prob_b"]),
            prob_a_grammar=dec_float(d["prob_a_grammar"]),
            prob_b_grammar=dec_float(d["prob_b_grammar"]),
            window_a=tuple(dec_req(p) for p in d.get("window_a", ())),
            window_b=tuple(dec_req(p) for p in d.get("window_b", ())),
            window_start=int(d.get("window_start", 0)),
        )
