"""The ``k`` largest entries of long rows, as :func:`torch.topk` gives them, in a fraction of its time.

A step's token alternatives (:func:`amp.parser.search.scoring.steps_from_logprobs`) and the compact
rows a search keeps (:func:`amp.parser.search.cell_search.compact_row`) read the top few entries of
rows over the whole vocabulary (262,144 for the embedded Gemma), and :func:`torch.topk` spends
about 0.9 ms on one such row on this project's 2-core machine: a tenth of the time of a llama.cpp
search step's row (issue #42 point 5).  :func:`top_k` finds the same entries from the rows' blocks:
every entry among a row's ``k`` largest lies in a block whose largest entry is at least the ``k``-th
largest of the blocks' maxima, so only those blocks (``k`` of them, more on ties) are searched.
"""

from __future__ import annotations

import torch

#: Entries per block.
BLOCK = 512
#: Rows shorter than this go to :func:`torch.topk` as they are (blocks would not pay).
LONG_ROW = 16 * BLOCK


def top_k(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(values, indices)`` of the ``k`` largest entries along the last dimension of ``x`` (1-D
    or 2-D), largest first: the values of :func:`torch.topk` exactly; among equal values an index
    :func:`torch.topk` may also choose.  Rows holding a NaN, short rows, tensors on another device
    or that need gradients go to :func:`torch.topk`."""
    width = int(x.shape[-1])
    if (k <= 0 or width < LONG_ROW or width % BLOCK or k * BLOCK * 4 > width or x.dim() not in (1, 2)
            or x.device.type != "cpu" or x.requires_grad):
        return x.topk(min(k, width), dim=-1)
    rows = x.reshape(-1, width)
    blocks = rows.view(rows.shape[0], width // BLOCK, BLOCK)
    maxima = blocks.amax(dim=-1)  # (rows, blocks)
    kth = maxima.topk(k, dim=-1).values[:, -1]
    values = torch.empty(rows.shape[0], k, dtype=x.dtype)
    indices = torch.empty(rows.shape[0], k, dtype=torch.long)
    for r in range(rows.shape[0]):
        if bool(torch.isnan(maxima[r]).any()):
            values[r], indices[r] = rows[r].topk(k)
            continue
        chosen = torch.nonzero(maxima[r] >= kth[r]).squeeze(1)  # (ascending: entries keep their order)
        v, j = blocks[r].index_select(0, chosen).reshape(-1).topk(k)
        values[r] = v
        indices[r] = chosen[j // BLOCK] * BLOCK + j % BLOCK
    if x.dim() == 1:
        return values[0], indices[0]
    return values, indices
