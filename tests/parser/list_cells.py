"""A stand-in for llama.cpp's KV cells over a transformers causal LM (:class:`ListCells`): the cell
search and its decoder run on the tiny test model in seconds."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import torch


class ListCells:
    """The :class:`~amp.parser.search.cell_search.Cells` of a transformers causal LM: a sequence
    is the token ids fed to it, a decode runs the model over them again (no cache)."""

    def __init__(self, model: Any, n_seq: int = 16, state_window: int | None = None) -> None:
        self.model = model
        self.n_seq = n_seq
        self.state_window = state_window
        self.seqs: dict[int, list[int]] = {}
        self.fed = 0  # prompt tokens fed

    def copy(self, src: int, dst: int) -> None:
        self.seqs[dst] = list(self.seqs.get(src, []))

    def free(self, seq: int) -> None:
        self.seqs.pop(seq, None)

    def truncate(self, seq: int, keep: int) -> bool:
        self.seqs[seq] = self.seqs.get(seq, [])[:keep]
        return True

    def decode(self, feeds: Sequence[tuple[int, int, Sequence[int], bool]]) -> list[torch.Tensor | None]:
        raise NotImplementedError("the cell search feeds through decode_last")

    def decode_last(self, feeds: Sequence[tuple[int, int, Sequence[int]]]) -> list[torch.Tensor]:
        out = []
        for seq, pos, toks in feeds:
            held = self.seqs.get(seq, [])
            assert len(held) >= pos, (seq, pos, len(held))  # a feed continues what the sequence holds
            held = held[:pos] + [int(t) for t in toks]
            self.seqs[seq] = held
            with torch.no_grad():
                logits = self.model(torch.tensor([held])).logits[0, pos:pos + len(toks)]
            out.append(torch.log_softmax(logits.float(), dim=-1))
        return out

    def feed_prompt(self, seq: int, start: int, tokens: Sequence[int]) -> torch.Tensor:
        self.fed += len(tokens)
        return self.decode_last([(seq, start, tokens)])[0][-1]

    def release_padding(self) -> None:
        pass

    def clear(self) -> None:
        self.seqs.clear()

    def save_state(self, seq: int) -> bytearray | None:
        held = self.seqs.get(seq, [])
        if not held or (self.state_window is not None and len(held) > self.state_window):
            return None
        return bytearray(array("l", held).tobytes())

    def load_state(self, seq: int, data: bytearray) -> bool:
        assert not any(self.seqs.values()), "a state goes back into an empty cache"
        self.seqs[seq] = array("l", bytes(data)).tolist()
        return True
