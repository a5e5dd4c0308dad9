"""The fast top-k of long rows (issue #42 point 5, :func:`amp.parser.search.top_k.top_k`): the values
of :func:`torch.topk` exactly, and its indices where the values differ — on rows shaped like the
embedded model's log-probs, with ties, ``-inf`` masks, NaN and short rows."""

from __future__ import annotations

import pytest
import torch

from amp.parser.search.top_k import BLOCK, top_k

V = 262_144  # the embedded Gemma's vocabulary


def _check(x: torch.Tensor, k: int) -> None:
    want_v, want_i = x.topk(k, dim=-1)
    got_v, got_i = top_k(x, k)
    assert got_v.shape == want_v.shape and got_i.shape == want_i.shape
    assert torch.equal(got_v, want_v)
    assert torch.equal(torch.gather(x, -1, got_i), want_v)  # every index holds its value
    rows_i = got_i.reshape(-1, k)
    assert all(len(set(r.tolist())) == k for r in rows_i)  # no index twice


@pytest.mark.parametrize("k", [1, 5, 10, 40])
def test_the_k_largest_of_log_prob_rows(k: int) -> None:
    gen = torch.Generator().manual_seed(k)
    rows = torch.log_softmax(torch.randn(6, V, generator=gen) * 4, dim=-1)
    _check(rows, k)
    _check(rows[3], k)
    assert torch.equal(top_k(rows, k)[1], rows.topk(k, dim=-1).indices)  # distinct values: the same indices


def test_the_largest_entries_crowded_in_one_block_and_ties_across_blocks() -> None:
    """All ten largest in one block (the other blocks' maxima are below them), and a row whose
    top values repeat in several blocks: the values are torch's, each index holds its value."""
    row = torch.full((V,), -50.0)
    row[BLOCK * 7 : BLOCK * 7 + 10] = torch.arange(10, dtype=torch.float32)
    row[BLOCK * 100] = -1.0
    _check(row, 10)
    assert sorted(top_k(row, 10)[1].tolist()) == list(range(BLOCK * 7, BLOCK * 7 + 10))
    tied = torch.full((V,), -30.0)
    tied[torch.arange(0, V, 4096)] = -2.0  # 64 equal maxima in 64 blocks
    _check(tied, 5)
    _check(torch.stack([row, tied]), 3)


def test_masked_rows_nan_and_short_rows_give_torchs_answer() -> None:
    masked = torch.full((V,), -torch.inf)
    masked[[5, 70_000, 200_000]] = torch.tensor([-3.0, -1.0, -2.0])
    _check(masked, 2)
    assert top_k(masked, 3)[1].tolist() == [70_000, 200_000, 5]
    nan = torch.log_softmax(torch.randn(V), dim=-1)
    nan[123_456] = torch.nan
    assert top_k(nan, 3)[1][0] == nan.topk(3).indices[0] == 123_456  # (torch counts NaN as the largest)
    short = torch.randn(300)
    assert torch.equal(top_k(short, 4)[1], short.topk(4).indices)
    assert top_k(short, 0)[0].numel() == 0
