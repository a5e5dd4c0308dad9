"""Grammar-constrained beam search on the tiny model (and one slow check on the real model)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import torch
from parser_lm_helpers import HEADER, simple_prompt

from amp.logic.grammar import lark_parser
from amp.parser.core.results import ParseResult
from amp.parser.search.decode import (
    MAX_NEW_TOKENS,
    MIN_NEW_TOKENS,
    beam_search,
    beam_search_batch,
    beam_steps,
    default_max_new_tokens,
    gnmt_score,
)
from amp.parser.search.processors import GrammarLogitsProcessor, GrammarStoppingCriteria
from amp.parser.search.scoring import forced_score_ids
from amp.parser.search.vocab import encode_output, encode_prompt, frame_lf, get_masker

SENTENCES = ["the boy moved", "Galileo saw Mary with the telescope", "every cat held a cup", "the dog ate"]


def parses(text: str) -> bool:
    try:
        lark_parser("fol", "decoding").parse(frame_lf(text))
    except Exception:  # noqa: BLE001
        return False
    return True


@pytest.fixture(scope="module")
def results(tiny_lm: Any) -> list[ParseResult]:
    return [beam_search(tiny_lm.model, tiny_lm.tokenizer, simple_prompt(s), steps_for=5) for s in SENTENCES]


def test_every_constrained_beam_is_finished_and_parses(results: list[ParseResult]) -> None:
    for result in results:
        assert result.constrained and len(result.beams) == 5
        for rank, beam in enumerate(result.beams):
            assert beam.rank == rank
            assert beam.finished and beam.parses and parses(beam.text)
            assert beam.raw_text == frame_lf(beam.text)
            assert math.isfinite(beam.logprob) and beam.logprob < 0
        scores = [b.score for b in result.beams]
        assert scores == sorted(scores, reverse=True)
        assert len({b.token_ids for b in result.beams}) == 5


def test_beam_logprob_equals_forced_sum(tiny_lm: Any, results: list[ParseResult]) -> None:
    for sentence, result in zip(SENTENCES, results, strict=True):
        forced = forced_score_ids(
            tiny_lm.model, tiny_lm.tokenizer, simple_prompt(sentence), [b.token_ids for b in result.beams]
        )
        for beam, fs in zip(result.beams, forced, strict=True):
            assert beam.logprob == pytest.approx(fs.sum_logprob, abs=1e-4)
            assert sum(s.logprob for s in beam.steps) == pytest.approx(beam.logprob, abs=1e-4)
            assert [s.token_id for s in beam.steps] == list(beam.token_ids)


def test_gnmt_score_and_alpha_zero(tiny_lm: Any, results: list[ParseResult]) -> None:
    beam = results[0].beams[0]
    n = len(beam.token_ids)
    assert beam.score == pytest.approx(beam.logprob / (((5 + n) ** 0.7) / (6**0.7)))
    assert gnmt_score(-3.0, 10, 0.0) == -3.0
    flat = beam_search(tiny_lm.model, tiny_lm.tokenizer, simple_prompt(SENTENCES[0]), alpha=0.0, steps_for=0)
    assert all(b.score == b.logprob for b in flat.beams)
    assert all(not b.steps for b in flat.beams)


def test_beams_end_on_newline_carrying_tokens(tiny_lm: Any, results: list[ParseResult]) -> None:
    """The tiny vocabulary has ')\\n'; beams must stop right after it (docs/decoding-notes.md §5 item 6)."""
    vocab = get_masker(tiny_lm.tokenizer, "fol").vocab
    assert ")Ċ" in tiny_lm.tokenizer.get_vocab()
    last = {vocab.texts[b.token_ids[-1]] for r in results for b in r.beams}
    assert ")\n" in last


def test_stopping_criterion_on_merged_newline_token(tiny_lm: Any) -> None:
    tok = tiny_lm.tokenizer
    masker = get_masker(tok, "fol")
    prompt = encode_prompt(tok, simple_prompt("the man napped"))
    body = encode_output(tok, " exists x . man(x")
    close = tok.get_vocab()[")Ċ"]
    close2 = tok.get_vocab()[")ĊĊ"]
    proc = GrammarLogitsProcessor(masker, len(prompt), [tok.eos_token_id])
    stop = GrammarStoppingCriteria(proc)
    rows = torch.tensor([prompt + body + [close], prompt + body + [close2], prompt + body + [body[0]]])
    assert stop(rows, None).tolist() == [True, True, False]


def test_processor_is_keyed_by_prefix_and_handles_dead_rows(tiny_lm: Any) -> None:
    """Rows are regathered every step (beam reordering): masks follow the prefix, not the row.
    An ungrammatical (filler) row or an EOS row allows only EOS and never raises."""
    tok = tiny_lm.tokenizer
    masker = get_masker(tok, "fol")
    eos = tok.eos_token_id
    prompt = encode_prompt(tok, simple_prompt("the man napped"))
    good = encode_output(tok, " exists x . man(x")[:3]
    other = encode_output(tok, " forall y . dog(y")[:3]
    seqs = {
        "good": good,
        "other": other,
        "bad": good[:2] + [tok.get_vocab()["Human"]],
        "eos": good[:2] + [eos],
    }
    names = list(seqs)
    proc = GrammarLogitsProcessor(masker, len(prompt), [eos])
    base = torch.log_softmax(torch.randn(1, len(tok), generator=torch.Generator().manual_seed(0)), dim=-1)
    o1 = proc(torch.tensor([prompt + seqs[n] for n in names]), base.repeat(4, 1))
    o2 = proc(torch.tensor([prompt + seqs[n] for n in reversed(names)]), base.repeat(4, 1))
    for i, name in enumerate(names):
        assert torch.equal(o1[i], o2[len(names) - 1 - i]), name
        assert torch.isfinite(o1[i]).any(), name
    for name in ("bad", "eos"):
        assert torch.isfinite(o1[names.index(name)]).nonzero().flatten().tolist() == [eos]
    state = masker.automaton.advance(masker.automaton.initial, masker.vocab.text_of(good))
    allowed = torch.isfinite(o1[0]).nonzero().flatten()
    assert allowed.tolist() == masker.allowed_ids(state).tolist()


def test_truncated_beams_are_flagged(tiny_lm: Any) -> None:
    result = beam_search(tiny_lm.model, tiny_lm.tokenizer, simple_prompt("Galileo saw Mary"), max_new_tokens=6)
    assert result.settings["max_new_tokens"] == 6
    assert all(not b.finished and not b.parses for b in result.beams)
    assert all(len(b.token_ids) == 6 for b in result.beams)
    assert result.valid_texts == []


def test_unfinished_beams_rank_after_finished(tiny_lm: Any) -> None:
    for budget in (8, 10, 12, 14, 16):
        result = beam_search(tiny_lm.model, tiny_lm.tokenizer, simple_prompt("the dog ate"),
                             max_new_tokens=budget, steps_for=0)
        flags = [b.finished for b in result.beams]
        assert flags == sorted(flags, reverse=True)


def test_unconstrained_search_stops_at_the_first_newline(tiny_lm: Any) -> None:
    result = beam_search(tiny_lm.model, tiny_lm.tokenizer, simple_prompt("the dog ate"), constrained=False)
    assert not result.constrained
    vocab = get_masker(tiny_lm.tokenizer, "fol").vocab
    for beam in result.beams:
        if beam.finished:
            assert "\n" in vocab.texts[beam.token_ids[-1]]
            assert all("\n" not in vocab.texts[t] for t in beam.token_ids[:-1])
            assert beam.raw_text.endswith("\n") and beam.raw_text.count("\n") == 1
        assert beam.parses == (beam.finished and parses(beam.text))
    top = result.beams[0]
    forced = forced_score_ids(tiny_lm.model, tiny_lm.tokenizer, simple_prompt("the dog ate"), [top.token_ids],
                              merge_end=False)[0]
    assert top.logprob == pytest.approx(forced.sum_logprob, abs=1e-4)


def test_batch_equals_single(tiny_lm: Any, results: list[ParseResult]) -> None:
    prompts = [simple_prompt(s) for s in SENTENCES]
    batch = beam_search_batch(tiny_lm.model, tiny_lm.tokenizer, prompts, steps_for=0)
    for single, batched in zip(results, batch, strict=True):
        assert [b.text for b in batched.beams] == [b.text for b in single.beams]
        for x, y in zip(single.beams, batched.beams, strict=True):
            assert x.logprob == pytest.approx(y.logprob, abs=1e-4)
        assert batched.prompt_tokens == single.prompt_tokens


def test_beam_steps_match_the_beam(tiny_lm: Any, results: list[ParseResult]) -> None:
    beam = results[1].beams[2]
    steps = beam_steps(tiny_lm.model, tiny_lm.tokenizer, simple_prompt(SENTENCES[1]), beam, "fol", top_n=3)
    assert [s.token_id for s in steps] == list(beam.token_ids)
    assert all(len(s.alternatives) == 3 and len(s.alternatives_grammar) <= 3 for s in steps)
    assert all(s.prob_grammar >= s.prob for s in steps)
    for mine, theirs in zip(steps, beam.steps, strict=True):
        assert mine.prob == pytest.approx(theirs.prob, rel=1e-5)


def test_parse_result_json_round_trip(results: list[ParseResult]) -> None:
    result = results[0]
    back = ParseResult.from_dict(json.loads(json.dumps(result.to_dict(), allow_nan=False)))
    assert back == result


def test_default_max_new_tokens(tiny_lm: Any) -> None:
    tok = tiny_lm.tokenizer
    assert default_max_new_tokens(tok, simple_prompt("x")) == MAX_NEW_TOKENS
    short = HEADER + "\n\nHuman: a\nComputer: exists x . man(x)\n\nHuman: b\nComputer:"
    assert default_max_new_tokens(tok, short) == MIN_NEW_TOKENS
    long_lf = " AND ".join(["agent(a, x)"] * 30)
    prompt = f"Human: a\nComputer: exists a . {long_lf}\n\nHuman: b\nComputer:"
    n = len(encode_output(tok, frame_lf(f"exists a . {long_lf}")))
    assert default_max_new_tokens(tok, prompt) == min(MAX_NEW_TOKENS, 3 * n)


APPENDIX_EXAMPLES = [
    ("Galileo saw Mary", "exists a . saw(a) AND agent(a, Galileo) AND patient(a, Mary)"),
    ("Galileo saw with the camera",
     "exists x . exists a . camera(x) AND saw(a) AND agent(a, Galileo) AND instrument(a, x)"),
    ("Mary with the camera",
     "exists x . exists a . camera(x) AND have(a) AND agent(a, Mary) AND patient(a, x)"),
]


def appendix_pp_prompt() -> str:
    """The paper's appendix PP zero-shot prompt, in the docs/paper-notes.md §10 layout."""
    blocks = [f"Human: {u}\nComputer: {lf}\n" for u, lf in APPENDIX_EXAMPLES]
    blocks.append("Human: Galileo saw Mary with the camera\nComputer:")
    return HEADER + "\n\n" + "\n".join(blocks)


@pytest.mark.slow
def test_default_model_gives_five_distinct_parseable_lfs(gemma: Any) -> None:
    prompt = appendix_pp_prompt()
    result = beam_search(gemma.model, gemma.tokenizer, prompt, beams=5)
    assert len(result.beams) == 5
    assert all(b.finished and b.parses for b in result.beams)
    assert len({b.text for b in result.beams}) == 5
    from amp.logic.ast import free_variables
    from amp.logic.reader import parse_lf

    for beam in result.beams:  # bound-variable automaton: no free variables (docs/decoding-notes.md §5 item 11)
        assert not free_variables(parse_lf(beam.text)), beam.text
    forced = forced_score_ids(gemma.model, gemma.tokenizer, prompt, [b.token_ids for b in result.beams])
    for beam, fs in zip(result.beams, forced, strict=True):
        assert beam.logprob == pytest.approx(fs.sum_logprob, abs=1e-3)
    assert len(result.beams[0].steps) == len(result.beams[0].token_ids)
