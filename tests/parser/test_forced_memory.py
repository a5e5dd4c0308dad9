"""A forced pass holds one chunk of full-vocabulary rows at a time (issue #44).

:func:`amp.parser.search.prefix.prefixed_logprobs` hands each request's ``(len, V)`` log-probs to
its caller's ``reduce`` inside the chunk loop.  Checked through the real consumers (forced scoring,
a parse's forced pass): their results equal the old keep-everything-then-reduce results exactly,
and no more than one chunk's tensors are alive at any ``reduce`` call (weak references).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
import torch
from parser_lm_helpers import TinyLM, simple_prompt

from amp.parser.core.errors import DecodingError
from amp.parser.models.quantize import output_rows
from amp.parser.search import decode, prefix, scoring
from amp.parser.search.decode import parse_and_score_batch
from amp.parser.search.prefix import prefill, prefixed_logprobs
from amp.parser.search.scoring import forced_score, forced_score_ids, score_pairs
from amp.parser.search.vocab import encode_output, encode_prompt, frame_lf
from tests.scoring_passes import count_scoring_passes

PER_CHUNK = 2
SHORT = "exists x . man(x)"
MIDDLE = "exists x . man(x) AND walked(x)"
LONG = ("exists x . exists a . exists e . telescope(x) AND saw(a) AND agent(a, Galileo) AND "
        "patient(a, Mary) AND have(e) AND agent(e, Mary) AND patient(e, x)")
OTHER = "exists x . exists a . man(x) AND saw(a) AND agent(a, Mary) AND patient(a, x)"
LFS = [SHORT, LONG, MIDDLE, OTHER, SHORT, LONG, MIDDLE]  # 7 requests: 4 chunks of at most 2
SENTENCES = ["Galileo saw Mary with the telescope", "the man walked", "Mary saw a man"]

Reduce = Callable[[int, torch.Tensor], Any]
Pass = Callable[..., list[Any]]


def _per_chunk(monkeypatch: pytest.MonkeyPatch, model: Any, requests: Sequence[tuple[int, Sequence[int]]]) -> None:
    """Set ``CHUNK_BYTES`` so that one chunk holds ``PER_CHUNK`` of these requests."""
    longest = max(len(s) for _r, s in requests)
    monkeypatch.setattr(prefix, "CHUNK_BYTES", PER_CHUNK * longest * output_rows(model) * 4)


def _old_pass(original: Pass) -> Pass:
    """The behaviour before issue #44: every request's rows kept until the pass ends, then reduced."""
    def run(model: Any, pre: Any, requests: Sequence[tuple[int, Sequence[int]]], reduce: Reduce) -> list[Any]:
        rows: list[torch.Tensor] = original(model, pre, requests, lambda _i, lp: lp)
        return [reduce(i, lp) for i, lp in enumerate(rows)]
    return run


@contextmanager
def _forced_passes(monkeypatch: pytest.MonkeyPatch, *, old: bool = False) -> Iterator[list[list[int]]]:
    """Route the forced passes of scoring and decode through ``PER_CHUNK`` requests a chunk (the
    old keep-everything path when ``old``); yields, per pass, the number of the reduced tensors
    still alive at each ``reduce`` call (weak references)."""
    original: Pass = prefixed_logprobs
    inner = _old_pass(original) if old else original
    alive: list[list[int]] = []

    def watched(model: Any, pre: Any, requests: Sequence[tuple[int, Sequence[int]]],
                reduce: Reduce | None = None) -> list[Any]:
        assert reduce is not None, "a forced pass kept every request's full rows"
        _per_chunk(monkeypatch, model, requests)
        given: list[weakref.ref[torch.Tensor]] = []
        counts: list[int] = []
        alive.append(counts)

        def watch(i: int, lp: torch.Tensor) -> Any:
            given.append(weakref.ref(lp))
            counts.append(sum(ref() is not None for ref in given))
            return reduce(i, lp)

        return inner(model, pre, requests, watch)

    with monkeypatch.context() as m:
        m.setattr(scoring, "prefixed_logprobs", watched)
        m.setattr(decode, "prefixed_logprobs", watched)
        yield alive


def _scorings(lm: TinyLM) -> list[Any]:
    """Forced scores of LFs of different lengths after several prompts, beams' ids outside the
    grammar (NaN grammar probabilities), pairs grouped by prompt, and a parse's forced pass."""
    prompts = [simple_prompt(s) for s in SENTENCES]
    out: list[Any] = [forced_score(lm.model, lm.tokenizer, p, LFS) for p in prompts[:2]]
    ids = [encode_output(lm.tokenizer, frame_lf(lf)) for lf in LFS[:5]]
    out.append(forced_score_ids(lm.model, lm.tokenizer, prompts[2], [s[::-1] for s in ids], merge_end=False))
    out.append(score_pairs(lm.model, lm.tokenizer, [(prompts[0], LONG, SHORT), (prompts[0], MIDDLE, OTHER),
                                                     (prompts[1], SHORT, MIDDLE), (prompts[0], OTHER, LONG)]))
    items = [(prompts[0], LONG, OTHER), (prompts[1], None, None), (prompts[2], MIDDLE, SHORT)]
    out.append(parse_and_score_batch(lm.model, lm.tokenizer, items, beams=3, steps_for=3, top_n=4,
                                     max_new_tokens=40))
    return out


def test_reduced_scores_equal_the_old_full_rows_exactly(tiny_lm: TinyLM, monkeypatch: pytest.MonkeyPatch) -> None:
    with _forced_passes(monkeypatch, old=True):
        old = _scorings(tiny_lm)
    with _forced_passes(monkeypatch) as alive:
        new = _scorings(tiny_lm)
    assert max(len(counts) for counts in alive) > 2 * PER_CHUNK  # more requests than one chunk
    assert any(any(s.prob_grammar != s.prob_grammar for s in fs.steps) for fs in new[2])  # NaNs compared too
    for a, b in zip(old, new, strict=True):
        assert repr(a) == repr(b)  # every float, bit for bit (repr round-trips; NaN equals NaN)


def test_no_more_than_one_chunk_of_rows_is_alive_at_a_reduce(tiny_lm: TinyLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted check: with the old keep-everything pass (``old=True``) the counts reach 7."""
    scoring_passes = count_scoring_passes(monkeypatch)
    with _forced_passes(monkeypatch) as alive:
        _scorings(tiny_lm)
    assert 1 < PER_CHUNK < max(len(counts) for counts in alive)
    assert max(scoring_passes) == PER_CHUNK and scoring_passes.count(PER_CHUNK) >= 3  # chunks of 2
    for counts in alive:
        assert counts and max(counts) <= PER_CHUNK, counts


def test_unreduced_rows_are_refused_beyond_one_chunk(tiny_lm: TinyLM, monkeypatch: pytest.MonkeyPatch) -> None:
    pre = prefill(tiny_lm.model, [encode_prompt(tiny_lm.tokenizer, simple_prompt("the man walked"))], pad_id=0)
    seq = encode_output(tiny_lm.tokenizer, frame_lf(MIDDLE))
    requests = [(0, seq)] * 3
    _per_chunk(monkeypatch, tiny_lm.model, requests)  # two sequences fit, three do not
    assert len(prefixed_logprobs(tiny_lm.model, pre, requests[:2])) == 2
    with pytest.raises(DecodingError, match="pass a reduce function"):
        prefixed_logprobs(tiny_lm.model, pre, requests)
    reduced = prefixed_logprobs(tiny_lm.model, pre, requests, lambda i, lp: (i, float(lp[0].logsumexp(-1))))
    assert [i for i, _s in reduced] == [0, 1, 2] and all(abs(s) < 1e-4 for _i, s in reduced)
