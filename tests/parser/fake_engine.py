"""A third engine for the tests: ``fake``, a backend that answers every call from fixed data.

It satisfies :class:`amp.parser.backend.Backend` and nothing more: no weights, no tokenizer, no
grammar.  Every parse has the same two beams (:data:`BEAMS`), every LF the same per-word token
probabilities, so a test can tell that a result came from this engine and not from another one.
:data:`ENTRY` is its registry entry (``register_engine(ENTRY)`` adds it, ``unregister_engine(NAME)``
removes it); it runs every kind of model on the CPU, in one precision of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.backend import Backend
from amp.parser.core.capabilities import MODEL_KINDS, Capabilities
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, Runtime, TokenStep
from amp.parser.engines import EngineEntry, ModelRequest
from amp.parser.search.settings import Ask, SearchSettings

NAME = "fake"
#: What it can do: no gradients, no search without the grammar, three sweep items per call.
CAPABILITIES = Capabilities(engine=NAME, gradients=False, scores=True, unconstrained=False, batch_size=3,
                            devices=("cpu",), formats=MODEL_KINDS, precisions=())
#: The LFs of its two beams, best first (the first is the one a test looks for).
BEAMS = ("exists x . fake(x)", "exists x . fake(x) AND fake(x)")
#: The probability of every token of a forced LF (P(LF0) is then 0.5 for any pair).
PROB = 0.5


def _steps(lf: str) -> tuple[TokenStep, ...]:
    return tuple(TokenStep(token=f" {w}", token_id=i, prob=PROB, prob_grammar=PROB)
                 for i, w in enumerate(lf.split()))


def _beam(rank: int, lf: str) -> Beam:
    steps = _steps(lf)
    logprob = sum(s.logprob for s in steps)
    return Beam(rank=rank, text=lf, raw_text=f" {lf}\n", token_ids=tuple(s.token_id for s in steps),
                tokens=tuple(s.token for s in steps), logprob=logprob, score=logprob, finished=True, parses=True)


def _forced(lf: str) -> ForcedScore:
    steps = _steps(lf)
    total = sum(s.logprob for s in steps)
    return ForcedScore(lf=lf, token_ids=tuple(s.token_id for s in steps), tokens=tuple(s.token for s in steps),
                       steps=steps, sum_logprob=total, mean_logprob=total / max(1, len(steps)),
                       sum_logprob_grammar=total, min_prob=PROB, min_prob_grammar=PROB)


def _pair(lf0: str, lf1: str) -> PairScore:
    return PairScore(lf0=_forced(lf0), lf1=_forced(lf1), p_lf0=0.5, p_lf0_total=0.5)


class FakeBackend:
    """The ``fake`` engine's backend for ``spec`` (see the module docstring)."""

    kind = "in-process"

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.calls: list[str] = []

    @property
    def loaded(self) -> bool:
        return True

    @property
    def jobs(self) -> None:
        return None

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def dtype(self) -> str:
        return NAME

    def runtime(self) -> Runtime:
        return Runtime(model=f"{NAME}:{self.spec}", tokenizer=f"{NAME}:{self.spec};tokenizer", device="cpu",
                       dtype=NAME, versions={"engine": NAME})

    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def describe(self) -> str:
        return f"cpu · {NAME} engine"

    def load(self) -> None:
        """Nothing to load."""

    def parse(self, prompts: Sequence[str], *, fmt: str, top_n: int, search: SearchSettings,
              words: OwnWords = NO_WORDS) -> list[ParseResult]:
        self.calls.append("parse")
        beams = tuple(_beam(i, lf) for i, lf in enumerate(BEAMS[:search.beams]))
        return [ParseResult(beams=beams, constrained=True, fmt=fmt, settings={**search.as_dict(), "top_n": top_n})
                for _ in prompts]

    def parse_and_score(self, asks: Sequence[Ask], *, fmt: str, top_n: int, search: SearchSettings,
                        words: OwnWords = NO_WORDS) -> list[tuple[ParseResult, PairScore | None]]:
        parses = self.parse([p for p, _a, _b in asks], fmt=fmt, top_n=top_n, search=search, words=words)
        return [(parse, _pair(a, b) if a is not None and b is not None else None)
                for parse, (_p, a, b) in zip(parses, asks, strict=True)]

    def forced(self, prompt: str, lfs: Sequence[str], *, fmt: str, top_n: int,
               words: OwnWords = NO_WORDS) -> list[ForcedScore]:
        self.calls.append("forced")
        return [_forced(lf) for lf in lfs]

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str, top_n: int,
                    words: OwnWords = NO_WORDS) -> list[PairScore]:
        self.calls.append("pairs")
        return [_pair(a, b) for _p, a, b in items]

    def beam_steps(self, prompt: str, beam: Beam, *, fmt: str, top_n: int, constrained: bool,
                   words: OwnWords = NO_WORDS) -> tuple[TokenStep, ...]:
        return _steps(beam.text)

    def sample(self, prompt: str, *, n: int, temperature: float, seed: int, fmt: str,
               max_new_tokens: int | None, words: OwnWords = NO_WORDS) -> list[str | None]:
        return [BEAMS[0]] * n

    def close(self) -> None:
        """Nothing to release."""


def build(request: ModelRequest) -> Backend:
    """The registry's factory: a :class:`FakeBackend` of the requested spec."""
    return FakeBackend(request.spec)


#: The registry entry (a test registers it and removes it again).
ENTRY = EngineEntry(CAPABILITIES, build, "fixed answers, for the tests", models="any model")
