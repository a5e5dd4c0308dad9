"""The constrained search, forced scoring and sampling over an engine that keeps KV cells per sequence.

An engine such as llama.cpp keeps the KV cells of numbered *sequences* in one cache
(:class:`Cells`): a prompt evaluated once on sequence :data:`PROMPT_SEQ` is given to any other
sequence by a copy that shares its cells (nothing is recomputed), a sequence advances by a
token per decode, all sequences together in one batch, and a sequence's cells are freed when it
is dropped.  On such an engine the search needs no cache rows, masks or padding
(:mod:`amp.parser.search.beam_rows`): a beam *is* a sequence, a beam that forks is a copy.

The search is the fast search's (:mod:`amp.parser.search.fastsearch`) to the step: the same
grammar automaton and candidate sets (:func:`candidates`: the allowed ids, end groups merged),
the same bookkeeping (:func:`amp.parser.search.beam_step.advance`: top ``2k`` candidates by summed
float32 log-prob, finished ones among the top ``k``, early exit once no live beam can beat the
worst finished one, the budget), the same GNMT re-ranking of the ``k`` returned beams
(:func:`amp.parser.search.decode.make_beam`, docs/paper-notes.md §12) — on the engine's log-probs
(log-softmax over the full vocabulary).  Per step: finished or dropped beams give back their
sequence (their cells stay until the search ends, :class:`_Slots`), a beam's first child
continues on its parent's sequence, the other children get copies, and every live beam's next
token is decoded in one batch.

A parse-and-score decodes nothing twice: LF0 and LF1 ride along in the search's batches (one
token per step, borrowing a beam's row while their prefix is a beam, :class:`_Riders`), and the
top beams' forced scores are rebuilt from the rows the search already computed
(:func:`compact_row`).  Since the engine's rows do not
depend on what else is in a batch (:mod:`amp.parser.models.gguf_cells`), these are the numbers a
separate forced pass gives, to the bit (tested).

:class:`~amp.parser.search.cell_decoder.CellDecoder` puts it together for a backend.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch

from amp.parser.core.errors import DecodingError, SearchCancelled
from amp.parser.search.beam_step import NEG, SearchItem, advance, alive
from amp.parser.search.fastsearch import SearchStats
from amp.parser.search.processors import GrammarLogitsProcessor
from amp.parser.search.top_k import top_k

#: The sequence that holds the current prompt's cells; every other sequence starts as its copy.
PROMPT_SEQ = 0

Dist = tuple[torch.Tensor, torch.Tensor]


class Cells(Protocol):
    """KV cells kept per numbered sequence (:class:`amp.parser.models.gguf_cells.SeqCells`)."""

    n_seq: int
    #: The most positions :meth:`save_state` keeps whole (None: no bound).
    state_window: int | None

    def copy(self, src: int, dst: int) -> None: ...

    def free(self, seq: int) -> None: ...

    def truncate(self, seq: int, keep: int) -> bool: ...

    def decode(self, feeds: Sequence[tuple[int, int, Sequence[int], bool]]) -> list[torch.Tensor | None]: ...

    def decode_last(self, feeds: Sequence[tuple[int, int, Sequence[int]]]) -> list[torch.Tensor]: ...

    def feed_prompt(self, seq: int, start: int, tokens: Sequence[int]) -> torch.Tensor: ...

    def release_padding(self) -> None: ...

    def clear(self) -> None: ...

    def save_state(self, seq: int) -> bytearray | None: ...

    def load_state(self, seq: int, data: bytearray) -> bool: ...


def candidates(processor: GrammarLogitsProcessor, vocab_size: int, state: Any, logp: torch.Tensor) -> Dist:
    """(allowed ids, log-probs) in ``state`` as the grammar processor leaves them: every allowed
    id's raw log-prob, the tokens that end the LF the same way merged into their canonical one
    (:func:`amp.parser.search.processors.merge_end_groups`)."""
    cols = processor.allowed(state)
    if cols.numel() and int(cols[-1]) >= vocab_size:
        cols = cols[cols < vocab_size]
    vals = logp[cols].clone()
    if state:
        for canon, members in processor.masker.end_groups(state):
            inside = torch.isin(members, cols)
            member_vals = torch.where(inside, logp[members], torch.full_like(logp[members], -math.inf))
            total = torch.logsumexp(member_vals, dim=0)
            vals[torch.isin(cols, members)] = -math.inf
            vals[cols == canon] = total
    return cols, vals.float()


class _Slots:
    """Which sequence holds which hypothesis; free sequence ids.

    A dropped hypothesis's cells are not freed while the search runs: they are handed to the
    *keeper* sequence (the last id) and freed with it at the end.  Freed cells would leave holes
    that llama.cpp fills with later tokens, so a beam's cells would no longer lie in the cache in
    the order of their positions; its attention (which sums over a sequence's cells in cache
    order, in float16) would then differ from the same tokens scored alone (measured: up to 0.5
    nats over an LF).  Kept in order, a beam's search steps and its forced scoring are computed
    identically (docs/paper-notes.md §19)."""

    def __init__(self, cells: Cells) -> None:
        self.cells = cells
        self.keeper = cells.n_seq - 1
        self.free_ids = list(range(cells.n_seq - 2, PROMPT_SEQ, -1))
        self.held: dict[tuple[int, ...], int] = {(): PROMPT_SEQ}

    def take(self) -> int:
        if not self.free_ids:
            raise DecodingError(f"the search needs more than {self.cells.n_seq - 2} sequences")
        return self.free_ids.pop()

    def release(self, seq: int) -> None:
        """Give ``seq``'s id back; its cells stay (on the keeper) until :meth:`release_all`."""
        if seq != PROMPT_SEQ:
            self.cells.copy(seq, self.keeper)
            self.cells.free(seq)
            self.free_ids.append(seq)

    def branch(self, children: list[tuple[int, ...]]) -> dict[tuple[int, ...], int]:
        """The sequences of ``children`` (each a held hypothesis + one token): a parent's first
        child continues on its sequence, the others get copies; childless parents are released."""
        by_parent: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
        for child in children:
            by_parent.setdefault(child[:-1], []).append(child)
        for parent in [p for p in self.held if p not in by_parent]:
            self.release(self.held.pop(parent))
        new: dict[tuple[int, ...], int] = {}
        for parent, kids in by_parent.items():
            src = self.held.pop(parent)
            for i, kid in enumerate(kids):
                if i == 0 and src != PROMPT_SEQ:
                    new[kid] = src
                else:
                    new[kid] = self.take()
                    self.cells.copy(src, new[kid])
        self.held = new
        return new

    def release_all(self) -> None:
        """Free every cell of the search (the prompt's stay)."""
        for seq in self.held.values():
            if seq != PROMPT_SEQ:
                self.cells.free(seq)
                self.free_ids.append(seq)
        self.held = {}
        self.cells.free(self.keeper)
        self.cells.release_padding()


@dataclass
class CellSearch:
    """What :func:`cell_beam_search` returns: the ``k`` sequences (generated ids, finished first by
    sum), the compact next-token rows of every hypothesis it decoded (:func:`compact_row`, keyed by
    the hypothesis; ``()`` is the prompt's), and the log-probs of each rider (``(len, V)``, as
    :func:`cell_forced_logprobs` computes them)."""

    found: list[tuple[int, ...]]
    rows: dict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict)
    riders: list[torch.Tensor] = field(default_factory=list)

    def beam_logprobs(self, token_ids: Sequence[int], vocab_size: int) -> torch.Tensor | None:
        """The ``(len, V)`` log-probs predicting ``token_ids`` rebuilt from the kept rows (None if a
        prefix was not decoded by the search): every value a forced score reads is the search's own
        (:func:`compact_row`), the rest is ``-inf``."""
        ids = tuple(int(t) for t in token_ids)
        out = torch.full((len(ids), vocab_size), -math.inf)
        for j in range(len(ids)):
            kept = self.rows.get(ids[:j])
            if kept is None:
                return None
            out[j, kept[0]] = kept[1]
        return out


def compact_row(processor: GrammarLogitsProcessor, state: Any, row: torch.Tensor,
                top_n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The entries of a next-token log-prob ``row`` that a forced score of any grammatical
    continuation reads (:func:`amp.parser.search.scoring.steps_from_logprobs`): every id the grammar
    allows in ``state`` (the grammar's normaliser), the ids ending the LF there (merged at the end),
    and the ``top_n`` best of the whole row plus as many as those end ids (the raw alternatives,
    before and after the merge).  ``(ids, values)``."""
    vocab_size = int(row.shape[-1])
    cols = processor.allowed(state) if state else torch.empty(0, dtype=torch.long)
    parts = [cols[cols < vocab_size]]
    extra = 0
    if state:
        for _canon, members in processor.masker.end_groups(state):
            parts.append(members[members < vocab_size])
            extra += int(members.numel())
    parts.append(top_k(row, min(vocab_size, top_n + extra))[1])
    ids = torch.unique(torch.cat(parts))
    return ids, row[ids].clone()


class _Riders:
    """Token sequences (LF0, LF1) force-decoded alongside the search, one token per step in its
    batches, so they cost no step of their own while the search runs.

    A rider whose next prefix is a hypothesis the search decodes this step takes that row
    (the same computation, hence the same numbers) and holds no cells; when it leaves the search's
    hypotheses it gets a copy of its parent hypothesis's cells (still held at that point) and
    goes on by itself."""

    def __init__(self, cells: Cells, slots: _Slots, first: torch.Tensor, prompt_len: int,
                 seqs: Sequence[Sequence[int]]) -> None:
        if any(len(s) == 0 for s in seqs):
            raise DecodingError("cannot score an empty token sequence")
        self.cells = cells
        self.toks = [tuple(int(t) for t in s) for s in seqs]
        self.prompt_len = prompt_len
        self.ids = [slots.take() for _ in self.toks]
        self.own = [False] * len(self.toks)  # whether the rider decodes on its own cells yet
        self.rows = [torch.empty(len(t), first.shape[-1], dtype=first.dtype) for t in self.toks]  # (len, V) each
        for rows in self.rows:
            rows[0] = first
        self.done = [1] * len(self.toks)  # rows filled so far
        self._plan: list[tuple[int, tuple[int, ...] | None]] = []

    def _pending(self) -> list[int]:
        return [r for r, done in enumerate(self.done) if done < len(self.toks[r])]

    def plan(self, children: Sequence[tuple[int, ...]], held: dict[tuple[int, ...], int]) -> list[tuple[int, int, list[int]]]:
        """Before the search branches into ``children`` (``held``: the hypotheses decoded last,
        with their sequences): which riders borrow a child's row, and the feeds of the others."""
        decoded = set(children)
        self._plan = []
        feeds: list[tuple[int, int, list[int]]] = []
        for r in self._pending():
            m = self.done[r]
            want = self.toks[r][:m]
            if not self.own[r] and want in decoded:
                self._plan.append((r, want))
                continue
            if not self.own[r]:
                self.cells.copy(held[want[:-1]], self.ids[r])
                self.own[r] = True
            self._plan.append((r, None))
            feeds.append((self.ids[r], self.prompt_len + m - 1, [want[-1]]))
        return feeds

    def take(self, rows_of: dict[tuple[int, ...], torch.Tensor], outs: Sequence[torch.Tensor]) -> None:
        """The rows of this step: borrowed from ``rows_of`` (child -> row), or the riders' ``outs``."""
        fed = iter(outs)
        for r, borrowed in self._plan:
            # (a row is a view of its call's block: its values are copied, the block is not kept)
            self.rows[r][self.done[r]] = rows_of[borrowed] if borrowed is not None else next(fed)[-1]
            self.done[r] += 1

    def result(self) -> list[torch.Tensor]:
        return list(self.rows)


def cell_beam_search(cells: Cells, first: torch.Tensor, prompt_len: int, processor: GrammarLogitsProcessor, *,
                     beams: int, budget: int, eos: Sequence[int], item: int = 0,
                     cancel: Callable[[], bool] | None = None, stats: SearchStats | None = None,
                     riders: Sequence[Sequence[int]] = (), top_n: int | None = None) -> CellSearch:
    """The search of one prompt whose cells are on :data:`PROMPT_SEQ` and whose next-token
    log-probs are ``first``: the ``k`` returned sequences (generated ids, finished first by sum).

    ``riders``: token sequences (LF0 and LF1) force-decoded in the same batches, one token per
    step, and finished alone after the search (their log-probs are those
    :func:`cell_forced_logprobs` gives).  ``top_n``: keep every decoded hypothesis's compact row
    (:func:`compact_row`), from which the returned beams' forced scores are rebuilt without
    decoding them again.  ``processor.tracker`` receives every candidate's summed log-prob under
    prompt index ``item``.  ``cancel`` is checked before every decode step (:class:`SearchCancelled`).
    """
    st = stats if stats is not None else SearchStats()
    vocab_size = int(first.shape[-1])
    keep = max(2, 1 + len(eos)) * beams
    running: list[tuple[tuple[int, ...], np.float32]] = [((), np.float32(0.0))]
    running += [((), np.float32(-np.inf))] * (beams - 1)
    finished: list[tuple[tuple[int, ...], np.float32, bool]] = [((), NEG, False)] * beams
    it = SearchItem(item, prompt_len, -1, running, finished)
    prefixes = processor.prefixes
    dists: dict[tuple[int, tuple[int, ...]], Dist] = {
        (item, ()): candidates(processor, vocab_size, prefixes.state(()), first)}
    out = CellSearch(found=[])
    if top_n is not None:
        out.rows[()] = compact_row(processor, prefixes.state(()), first, top_n)
    slots = _Slots(cells)
    extra = _Riders(cells, slots, first, prompt_len, riders) if riders else None
    st.items += 1
    step = 0
    try:
        while True:
            if cancel is not None and cancel():
                raise SearchCancelled("the search was cancelled")
            if not it.done:
                st.steps += 1
                st.item_steps += 1
                advance(it, dists, processor.tracker, prefixes, prefixes.automaton, beams, keep, budget, step,
                        vocab_size)
                step += 1
            children = [p for p, s in it.running if alive(s)] if not it.done else []
            ride = extra.plan(children, slots.held) if extra is not None else []
            seqs = slots.branch(children) if children else {}
            if not children and not ride:
                break
            outs = cells.decode_last([(seqs[p], prompt_len + len(p) - 1, [p[-1]]) for p in children] + ride)
            st.passes += 1
            st.row_tokens += len(children) + len(ride)
            st.fed_tokens += len(children) + len(ride)
            if extra is not None:
                extra.take({p: lp[-1] for p, lp in zip(children, outs, strict=False)}, outs[len(children):])
            dists = {}
            for p, lp in zip(children, outs, strict=False):
                state = prefixes.state(p)
                dists[(item, p)] = candidates(processor, vocab_size, state, lp[-1])
                if top_n is not None:
                    out.rows[p] = compact_row(processor, state, lp[-1], top_n)
    finally:
        slots.release_all()
        if extra is not None:
            for seq in extra.ids:
                cells.free(seq)
    out.found = [p for p, _s, _f in it.finished]
    out.riders = extra.result() if extra is not None else []
    return out


def cell_forced_logprobs(cells: Cells, first: torch.Tensor, prompt_len: int,
                         seqs: Sequence[Sequence[int]]) -> list[torch.Tensor]:
    """For each token sequence after the prompt on :data:`PROMPT_SEQ`, a ``(len, V)`` tensor of
    the log-probs predicting its tokens: row 0 is ``first``, the rest come from copies of the
    prompt's cells, fed as the search feeds them — one token per sequence and decode, every
    sequence in the same batch — so they equal the search's own log-probs for the same tokens, to
    the bit (:mod:`amp.parser.models.gguf_cells`, batch invariance)."""
    if any(len(s) == 0 for s in seqs):
        raise DecodingError("cannot score an empty token sequence")
    out: list[torch.Tensor] = []
    width = max(1, cells.n_seq - 1)
    for lo in range(0, len(seqs), width):
        chunk = [list(s) for s in seqs[lo : lo + width]]
        ids = [PROMPT_SEQ + 1 + k for k in range(len(chunk))]
        rows: list[list[torch.Tensor]] = [[first] for _ in chunk]
        for seq in ids:
            cells.copy(PROMPT_SEQ, seq)
        try:
            for j in range(max(len(toks) for toks in chunk) - 1):
                live = [k for k, toks in enumerate(chunk) if j < len(toks) - 1]
                outs = cells.decode_last([(ids[k], prompt_len + j, [chunk[k][j]]) for k in live])
                for k, lp in zip(live, outs, strict=True):
                    rows[k].append(lp[-1])
        finally:
            for seq in ids:
                cells.free(seq)
            cells.release_padding()
        out.extend(torch.stack(r) for r in rows)
    return out
