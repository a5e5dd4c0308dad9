"""Saved prompt prefixes (issue #42 point 3): an LRU of prefixes' cells bounded in bytes
(:class:`amp.parser.search.prefix_states.PrefixStates`), and the cell decoder putting back the one
that shares the most with a new prompt — checked here on the tiny model through the list stand-in
for llama.cpp's cells (the exactness of llama.cpp's own states: ``test_llama_prompts.py``)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from list_cells import ListCells

from amp.errors import SettingError
from amp.parser.search.cell_decoder import CellDecoder
from amp.parser.search.prefix_states import PrefixStates, shared_prefix


def _state(n: int) -> bytearray:
    return bytearray(n)


def test_the_least_recently_used_prefix_goes_first_and_the_bytes_stay_bounded() -> None:
    states = PrefixStates(max_bytes=100)
    assert states.put((1, 2, 3), _state(40)) and states.put((4, 5), _state(40))
    assert states.get((1, 2, 3)) is not None  # (1, 2, 3) used again: (4, 5) is now the oldest
    assert states.put((6,), _state(30))
    assert states.keys() == [(1, 2, 3), (6,)] and states.nbytes == 70
    assert not states.put((7,), _state(101))  # larger than the bound alone: not kept, nothing evicted
    assert states.keys() == [(1, 2, 3), (6,)] and states.nbytes == 70
    assert states.put((6,), _state(10)) and states.nbytes == 50  # a key saved again replaces its bytes
    assert states.put((8,), _state(100)) and states.keys() == [(8,)] and states.nbytes == 100


def test_the_best_prefix_shares_the_most_leading_tokens_up_to_the_limit() -> None:
    states = PrefixStates(max_bytes=1000)
    states.put((1, 2, 3, 4), _state(1))
    states.put((1, 2, 9), _state(1))
    states.put((5, 6), _state(1))
    assert states.best([1, 2, 3, 4, 7], limit=4) == ((1, 2, 3, 4), 4)
    assert states.best([1, 2, 3, 4], limit=3) == ((1, 2, 3, 4), 3)  # the last token is always fed
    assert states.best([1, 2, 9, 9], limit=3) == ((1, 2, 9), 3)
    assert states.best([7, 1, 2], limit=2) is None
    assert shared_prefix([1, 2, 3], [1, 2]) == 2 and shared_prefix([], [1]) == 0


@pytest.mark.parametrize("bad", [-1, 1.5, "64", True, None])
def test_the_bound_is_checked_where_it_is_set(bad: Any) -> None:
    with pytest.raises(SettingError, match="saved prompt prefixes"):
        PrefixStates(max_bytes=bad)


def _prompt(header: int, sentence: str) -> list[int]:
    # token ids of the tiny model's vocabulary: a header of `header` ids shared by a family, then a sentence
    return [10 + (k % 50) for k in range(header)] + [ord(c) % 90 + 100 for c in sentence]


def test_the_decoder_puts_back_the_saved_prefix_that_shares_the_most(tiny_lm: Any) -> None:
    """Two families alternate: each one's saved prefix (its first ``state_window`` tokens) is put
    back when its turn comes; the tokens fed are counted by hand; the first rows are a fresh
    decoder's; with no room for states (0 bytes) every family is fed again."""
    cells = ListCells(tiny_lm.model, state_window=80)
    decoder = CellDecoder(cells, tiny_lm.tokenizer, [0], context=1024, prefixes=PrefixStates(max_bytes=10**6))
    a1, b1, a2, b2 = (_prompt(100, "the dog saw the cat"), [7] * 5 + _prompt(60, "a bird"),
                      _prompt(100, "the cat met the cow"), [7] * 5 + _prompt(60, "a fish"))
    firsts = [decoder.prompt(ids) for ids in (a1, b1, a2, b2)]
    assert decoder.prefixes_restored == 2
    # a1 whole; b1 whole (it shares nothing with a1); a2 after a1's first 80 tokens; b2 after what it shares with b1
    assert cells.fed == len(a1) + len(b1) + len(a2) - 80 + len(b2) - shared_prefix(b1, b2)
    assert len(b1) == len(b2) == 71 and shared_prefix(a1, a2) > 80
    assert sorted(len(k) for k in decoder.prefixes.keys()) == [71, 71, 80]  # the b's shorter than the window: whole
    for ids, first in zip((a1, b1, a2, b2), firsts, strict=True):
        fresh = CellDecoder(ListCells(tiny_lm.model), tiny_lm.tokenizer, [0], context=1024)
        assert torch.allclose(fresh.prompt(ids), first, atol=1e-5)
    none = ListCells(tiny_lm.model, state_window=80)
    plain = CellDecoder(none, tiny_lm.tokenizer, [0], context=1024, prefixes=PrefixStates(max_bytes=0))
    for ids in (a1, b1, a2, b2):
        plain.prompt(ids)
    assert plain.prefixes_restored == 0 and len(plain.prefixes) == 0
    assert none.fed == len(a1) + len(b1) + len(a2) + len(b2)  # (neighbours share nothing)
