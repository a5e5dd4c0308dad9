"""Token texts for both tokenizer families, and trie masks equal to a brute-force check."""

from __future__ import annotations

import random
from typing import Any

import pytest
from parser_lm_helpers import amp_examples, simple_prompt
from tokenizers import Tokenizer, normalizers
from transformers import PreTrainedTokenizerFast

from amp.parser.core.errors import DecodingError
from amp.parser.search.automaton import DEAD, GrammarAutomaton, State, get_automaton
from amp.parser.search.vocab import (
    VocabMasker,
    detect_family,
    encode_output,
    encode_prompt,
    frame_lf,
    get_masker,
    get_vocabulary,
)

LFS = [lf for _s, lf in amp_examples(12, seed=7)]
LISP = ["( exists x ( exists a ( AND ( man x ) ( saw a ) ( agent a x ) ( patient a Mary ) ) ) )"]


def sample_states(automaton: GrammarAutomaton, lfs: list[str], k: int, seed: int = 0) -> list[State]:
    """Distinct states along the character prefixes of ``lfs`` (plus the initial and dead state)."""
    seen: dict[State, None] = {automaton.initial: None, DEAD: None}
    for lf in lfs:
        state = automaton.initial
        for ch in frame_lf(lf):
            state = automaton.step(state, ch)
            seen.setdefault(state, None)
    states = list(seen)
    rng = random.Random(seed)
    return states[:3] + rng.sample(states[3:], min(k, len(states) - 3))


TOKENIZERS = ["tiny", "bpe_noregex", "sp_tokenizer"]


def _tokenizer(request: pytest.FixtureRequest, name: str) -> Any:
    if name == "tiny":
        return request.getfixturevalue("tiny_lm").tokenizer
    return request.getfixturevalue(name)


@pytest.mark.parametrize("name", TOKENIZERS)
def test_masks_equal_brute_force(request: pytest.FixtureRequest, name: str) -> None:
    tok = _tokenizer(request, name)
    automaton = get_automaton("fol")
    masker = VocabMasker(automaton, tok)
    for state in sample_states(automaton, LFS, 60):
        assert masker.allowed_ids(state).tolist() == masker.brute_force_ids(state)


def test_lisp_masks_equal_brute_force(bpe_noregex: Any) -> None:
    automaton = get_automaton("lisp")
    masker = VocabMasker(automaton, bpe_noregex)
    for state in sample_states(automaton, LISP, 30):
        assert masker.allowed_ids(state).tolist() == masker.brute_force_ids(state)


@pytest.mark.parametrize("name,family", [("tiny", "byte_level"), ("bpe_noregex", "byte_level"),
                                         ("sp_tokenizer", "sentencepiece")])
def test_family_and_texts_round_trip(request: pytest.FixtureRequest, name: str, family: str) -> None:
    tok = _tokenizer(request, name)
    assert detect_family(tok) == family
    vocab = get_vocabulary(tok)
    for text in [frame_lf(lf) for lf in LFS] + ["Human: Mary saw é and ü\nComputer:", " \t x  \n\n"]:
        ids = tok(text, add_special_tokens=False).input_ids
        assert "".join(vocab.texts[i] for i in ids) == text.encode("utf-8").decode("latin-1")
        assert vocab.text_of(ids) == text


@pytest.mark.parametrize("name", TOKENIZERS)
def test_special_tokens_have_no_text_and_are_never_allowed(request: pytest.FixtureRequest, name: str) -> None:
    tok = _tokenizer(request, name)
    vocab = get_vocabulary(tok)
    masker = get_masker(tok, "fol")
    for sid in tok.all_special_ids:
        assert vocab.texts[sid] is None
        assert vocab.token_display(sid) == tok.convert_ids_to_tokens(sid)
    allowed = set()
    for state in sample_states(masker.automaton, LFS[:3], 20):
        allowed |= set(masker.allowed_ids(state).tolist())
    assert not allowed & set(tok.all_special_ids)


@pytest.mark.parametrize("name", TOKENIZERS)
def test_prompt_output_boundary(request: pytest.FixtureRequest, name: str) -> None:
    """The prompt ends at ``Computer:``; the grammar's leading space starts the first output token."""
    tok = _tokenizer(request, name)
    vocab = get_vocabulary(tok)
    prompt_ids = encode_prompt(tok, simple_prompt("the man saw Mary"))
    assert vocab.text_of(prompt_ids).endswith("Computer:")
    out = encode_output(tok, frame_lf(LFS[0]))
    assert vocab.texts[out[0]].startswith(" ")
    assert vocab.text_of(out) == frame_lf(LFS[0])


def test_dummy_prefix_tokenizer_is_rejected(sp_tokenizer: Any) -> None:
    """A Llama-2-style normalizer (prepend ``▁``, then spaces → ``▁``) doubles the leading space."""
    backend = Tokenizer.from_str(sp_tokenizer.backend_tokenizer.to_str())
    backend.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>")
    assert detect_family(tok) == "sentencepiece"
    with pytest.raises(DecodingError, match="dummy-prefix"):
        encode_output(tok, " exists x . man(x)\n")


def test_end_groups_merge_newline_runs(tiny_lm: Any) -> None:
    tok = tiny_lm.tokenizer
    masker = get_masker(tok, "fol")
    vocab = masker.vocab
    state = masker.automaton.advance(masker.automaton.initial, " exists x . man(x")
    groups = masker.end_groups(state)
    assert len(groups) == 1
    canon, members = groups[0]
    assert vocab.texts[canon] == ")\n"
    assert {vocab.texts[i] for i in members.tolist()} >= {")\n", ")\n\n"}
    assert set(members.tolist()) <= set(masker.allowed_ids(state).tolist())
    assert masker.end_groups(masker.automaton.advance(masker.automaton.initial, " exists x")) == ()


def test_dense_mask_and_cache(bpe_noregex: Any) -> None:
    masker = VocabMasker(get_automaton("fol"), bpe_noregex)
    state = masker.automaton.advance(masker.automaton.initial, " exists x . ")
    ids = masker.allowed_ids(state)
    dense = masker.mask(state)
    assert dense.dtype.is_floating_point is False and dense.shape == (len(bpe_noregex),)
    assert dense.nonzero().flatten().tolist() == ids.tolist()
    misses = masker.misses
    masker.allowed_ids(state)
    assert masker.misses == misses and masker.hits >= 1
    assert get_masker(bpe_noregex, "fol") is get_masker(bpe_noregex, "fol")
    assert get_masker(bpe_noregex, "fol") is not get_masker(bpe_noregex, "lisp")


@pytest.mark.slow
def test_gemma_sentencepiece_masks(gemma: Any) -> None:
    tok = gemma.tokenizer
    assert detect_family(tok) == "sentencepiece"
    vocab = get_vocabulary(tok)
    prompt_ids = encode_prompt(tok, simple_prompt("Galileo saw Mary"))
    assert prompt_ids[0] == tok.bos_token_id  # Gemma needs <bos>
    out = encode_output(tok, frame_lf(LFS[0]))
    assert vocab.display[out[0]].startswith(" ")  # '▁exists': the leading space is in the token
    masker = get_masker(tok, "fol")
    automaton = masker.automaton
    for state in sample_states(automaton, LFS[:2], 3, seed=1):
        assert masker.allowed_ids(state).tolist() == masker.brute_force_ids(state)
    before_end = automaton.advance(automaton.initial, " exists x . man(x)")
    assert masker.allowed_ids(before_end).tolist() == masker.brute_force_ids(before_end)
    (canon, members), = masker.end_groups(before_end)
    assert vocab.texts[canon] == "\n"
    assert "\n\n" in {vocab.texts[i] for i in members.tolist()}
