"""Shared prompt prefixes on the llama.cpp engine (issue #42 point 3): a prompt's cells are the same
however it is cut into calls, so a prompt that shares its first tokens with the previous one keeps
their cells and feeds only the rest — and every number equals a fresh context's, to the bit."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from amp.parser.core.errors import ModelLoadError
from amp.parser.search.settings import SearchSettings

pytest.importorskip("llama_cpp")

VERBS = ("chased", "saw", "observed", "heard", "watched", "spotted", "noticed", "followed", "liked", "held",
         "pushed", "called", "found", "met", "helped", "greeted", "fed", "washed", "carried", "drew")


def _gguf() -> Path:
    from amp.parser.models.embedded import default_gguf

    try:
        return default_gguf()
    except ModelLoadError as exc:
        pytest.skip(f"the embedded GGUF is not available: {exc}")


def _header(n: int) -> str:
    return "".join(f"Human: the cat {v} the dog\nComputer: exists x . exists y . cat(x) AND dog(y) AND {v}(x, y)\n"
                   for v in VERBS[:n])


def test_a_prompts_cells_do_not_depend_on_how_it_is_cut() -> None:
    """Fed whole or cut in two or three (cuts before and past 64 tokens, around the 512-token call,
    a last part of one token), a prompt's last row is the same to the bit: its cells are."""
    from amp.parser.backends.llama import shared_gguf

    gm = shared_gguf(_gguf())
    cells = gm.cells(n_ctx=2048, n_seq=4, threads=2)
    try:
        for text in (_header(20) + "Human: the dog chased the cat\nComputer:", "Human: the dog chased the cat\nComputer:"):
            ids = gm.tokenizer.encode(text)
            n = len(ids)
            cells.clear()
            whole = cells.feed_prompt(1, 0, ids).clone()
            cuts = [(c,) for c in (1, 8, 40, 63, 64, 100, 300, 512, 513, n - 64, n - 63, n - 8, n - 1)]
            for cut in [*cuts, (30, 60), (100, 512)]:
                if not all(0 < c < n for c in cut):
                    continue
                cells.clear()
                start = 0
                for end in (*cut, n):
                    last = cells.feed_prompt(1, start, ids[start:end])
                    cells.release_padding()
                    start = end
                assert torch.equal(last, whole), f"a prompt of {n} tokens cut at {cut} moved its last row"
    finally:
        cells.close()


@pytest.mark.slow
def test_prompts_sharing_a_prefix_give_the_numbers_of_a_fresh_context() -> None:
    """One call of four prompts sharing a long header (and one sharing nothing, and one a prefix of
    another): each prompt's beams, scores and LF0/LF1 pair equal those of a fresh context that parsed
    it alone, in the callers' order; the shared tokens were fed once."""
    from amp.parser.backends.llama import LlamaBackend

    _gguf()
    header = _header(14)
    asks = [(header + "Human: the dog saw the cat\nComputer:", "exists x . exists y . dog(x) AND cat(y) AND saw(x, y)",
             "exists x . exists y . cat(x) AND dog(y) AND saw(y, x)"),
            ("Human: the bird followed the fish\nComputer:", "exists x . exists y . bird(x) AND fish(y) AND followed(x, y)",
             "exists x . exists y . fish(x) AND bird(y) AND followed(y, x)"),
            (header + "Human: the cat called the bird\nComputer:", "exists x . exists y . cat(x) AND bird(y) AND called(x, y)",
             "exists x . exists y . bird(x) AND cat(y) AND called(y, x)"),
            (header + "Human: the dog saw the cat\nComputer:", "exists x . exists y . dog(x) AND cat(y) AND saw(x, y)",
             "exists x . exists y . dog(x) AND cat(y) AND saw(y, x)")]
    search = SearchSettings(beams=3, max_new_tokens=24)
    shared = LlamaBackend("default")
    together = shared.parse_and_score(asks, fmt="fol", top_n=3, search=search)
    fed = shared._decoder.prompt_tokens_fed  # type: ignore[union-attr]
    tok = shared._decoder.tokenizer  # type: ignore[union-attr]
    lengths = [len(tok.encode(p)) for p, _a, _b in asks]
    assert fed < sum(lengths[:3]) - len(tok.encode(header)) + 20  # the header was fed once
    shared.close()
    for ask, got in zip(asks, together, strict=True):
        fresh = LlamaBackend("default")
        try:
            alone = fresh.parse_and_score([ask], fmt="fol", top_n=3, search=search)[0]
        finally:
            fresh.close()
        assert got == alone, ask[0][-40:]


def _shared_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.mark.slow
def test_a_sweep_hands_the_engine_its_items_in_the_order_of_their_prompts(tmp_path: Path) -> None:
    """run_batch gives the llama.cpp engine (which shares prefixes) the items it computes in the
    order of their prompts, whatever the input order: the tokens fed are those of that order, by hand
    — each prompt less what it shares with the one before (at least its last token fed) — fewer than
    in the input order; every item is answered, under its own id."""
    from amp.cache import ResultCache
    from amp.parser import Parser
    from amp.parser.batch import run_batch
    from amp.parser.core.results import BatchItem

    _gguf()
    short, long = _header(3), _header(12)
    prompts = [long + "Human: the dog chased the cat\nComputer:", short + "Human: the fish followed the cow\nComputer:",
               long + "Human: the bird called the fish\nComputer:", short + "Human: the cat heard the dog\nComputer:"]
    parser = Parser("default", engine="llama.cpp", cache=ResultCache(tmp_path))
    items = [BatchItem(id=f"item{k}", prompt=p, score=False) for k, p in enumerate(prompts)]
    done = list(run_batch(parser, items, beams=2, max_new_tokens=6, batch_size=2))
    assert sorted(r.id for r in done) == [f"item{k}" for k in range(4)] and all(r.parse for r in done)
    tok = parser.backend._decoder.tokenizer  # type: ignore[attr-defined]
    ids = [tok.encode(p) for p in sorted(prompts)]
    expected = len(ids[0]) + sum(len(b) - min(_shared_prefix(a, b), len(b) - 1) for a, b in zip(ids, ids[1:]))
    in_input_order = [tok.encode(p) for p in prompts]
    unsorted = len(in_input_order[0]) + sum(len(b) - min(_shared_prefix(a, b), len(b) - 1)
                                            for a, b in zip(in_input_order, in_input_order[1:]))
    assert parser.backend._decoder.prompt_tokens_fed == expected < unsorted  # type: ignore[attr-defined]


def test_a_saved_prefix_put_back_gives_the_numbers_of_a_fresh_context() -> None:
    """Prompts of two families alternate (a header of 20 examples, ~700 tokens, and another of 6,
    ~200): each family's saved prefix is put back when its turn comes (the first 512 tokens of the
    long one: llama.cpp keeps a sliding-window layer's last 512 positions only; all of the short
    one, cut where the new prompt parts from it), only the rest is fed (counted by hand), and the
    first row and a step after it equal a fresh context's to the bit."""
    from amp.parser.backends.llama import shared_gguf
    from amp.parser.search.cell_decoder import CellDecoder
    from amp.parser.search.cell_search import PROMPT_SEQ

    gm = shared_gguf(_gguf())
    long, short = _header(20), _header(6).replace("the cat", "a bird")
    texts = [long + "Human: the dog saw the cat\nComputer:", short + "Human: the bird fed the fish\nComputer:",
             long + "Human: the cat called the bird\nComputer:", short + "Human: the fish met the cow\nComputer:",
             short[: len(short) // 2]]
    prompts = [gm.tokenizer.encode(t) for t in texts]
    assert len(prompts[0]) > 600 and 150 < len(prompts[1]) < 512 < _shared_prefix(prompts[0], prompts[2])

    def after(decoder: CellDecoder, ids: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        first = decoder.prompt(ids).clone()
        cells = decoder.cells
        cells.copy(PROMPT_SEQ, 1)
        step = cells.decode_last([(1, len(ids), [int(first.argmax())])])[0][-1].clone()
        cells.free(1)
        cells.release_padding()
        return first, step

    cells = gm.cells(n_ctx=4096, n_seq=4, threads=2)
    try:
        decoder = CellDecoder(cells, gm.tokenizer, gm.eos, context=gm.n_ctx_train)
        got = [after(decoder, ids) for ids in prompts]
        fed, restored = decoder.prompt_tokens_fed, decoder.prefixes_restored
        n = [len(ids) for ids in prompts]
        expected = (n[0] + n[1] - _shared_prefix(prompts[0], prompts[1])  # the long one, then the short one
                    + n[2] - 512  # the long family's 512 tokens put back
                    + n[3] - _shared_prefix(prompts[1], prompts[3])  # the short family's, cut where they part
                    + 1)  # a prefix of the prompt held: its last token
        assert (fed, restored) == (expected, 2)
        for ids, (first, step) in zip(prompts, got, strict=True):
            cells.clear()
            fresh = CellDecoder(cells, gm.tokenizer, gm.eos, context=gm.n_ctx_train)
            want = after(fresh, ids)
            assert torch.equal(first, want[0]) and torch.equal(step, want[1]), f"a prompt of {len(ids)} tokens moved"
    finally:
        cells.close()


@pytest.mark.slow
def test_saved_prefixes_outlive_a_context_grown_for_a_longer_search() -> None:
    """A request whose budget needs a larger context gets a new one; the backend's saved prefixes go
    with it: a prompt of the first family is put back there (only its last tokens fed), and its
    beams, scores and pair equal a fresh backend's."""
    from amp.parser.backends.llama import LlamaBackend

    _gguf()
    header = _header(8)
    first = (header + "Human: the dog saw the cat\nComputer:", "exists x . exists y . dog(x) AND cat(y) AND saw(x, y)",
             "exists x . exists y . cat(x) AND dog(y) AND saw(y, x)")
    again = (header + "Human: the cow saw the cat\nComputer:", "exists x . exists y . cow(x) AND cat(y) AND saw(x, y)",
             "exists x . exists y . cat(x) AND cow(y) AND saw(y, x)")
    short, long = SearchSettings(beams=2, max_new_tokens=24), SearchSettings(beams=2, max_new_tokens=400)
    backend = LlamaBackend("default")
    try:
        backend.parse_and_score([first], fmt="fol", top_n=3, search=short)
        backend.parse_and_score([("Human: the bird met the fish\nComputer:", None, None)], fmt="fol", top_n=3,
                                search=short)
        small = backend._decoder.cells.n_ctx  # type: ignore[union-attr]
        got = backend.parse_and_score([again], fmt="fol", top_n=3, search=long)
        decoder = backend._decoder
        assert decoder is not None and decoder.cells.n_ctx > small  # type: ignore[attr-defined]
        tok = decoder.tokenizer
        assert decoder.prefixes_restored == 1  # (a new decoder: its counts are this request's)
        assert decoder.prompt_tokens_fed == len(tok.encode(again[0])) - _shared_prefix(tok.encode(first[0]),
                                                                                       tok.encode(again[0]))
    finally:
        backend.close()
    fresh = LlamaBackend("default")
    try:
        assert got == fresh.parse_and_score([again], fmt="fol", top_n=3, search=long)
    finally:
        fresh.close()


def test_a_prompt_after_a_feed_that_failed_half_way_gets_a_clean_sequence() -> None:
    """A prompt too long for the context fails part-way (its first call fed, the next finds no
    cells): a clear DecodingError, and the next prompt — with no saved prefix to put back, which
    would clear the cache — starts on a clean sequence: its first row is a fresh context's."""
    from amp.parser.backends.llama import shared_gguf
    from amp.parser.core.errors import DecodingError
    from amp.parser.search.cell_decoder import CellDecoder
    from amp.parser.search.prefix_states import PrefixStates

    gm = shared_gguf(_gguf())
    too_long = gm.tokenizer.encode(_header(20) * 2 + "Human: the dog saw the cat\nComputer:")
    short = gm.tokenizer.encode("Human: the bird fed the fish\nComputer:")
    assert len(too_long) > 1200
    cells = gm.cells(n_ctx=600, n_seq=4, threads=2)
    try:
        decoder = CellDecoder(cells, gm.tokenizer, gm.eos, context=gm.n_ctx_train, prefixes=PrefixStates(max_bytes=0))
        with pytest.raises(DecodingError, match="no free cells"):
            decoder.prompt(too_long)
        got = decoder.prompt(short).clone()
        cells.clear()
        want = CellDecoder(cells, gm.tokenizer, gm.eos, context=gm.n_ctx_train).prompt(short)
        assert torch.equal(got, want)
    finally:
        cells.close()
