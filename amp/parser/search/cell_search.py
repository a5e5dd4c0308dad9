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

:class:`CellDecoder` puts it together for a backend: prompts that share whole chunks with the
previous prompt re-evaluate only the rest, a cancel check runs before every decode step, and
each finished prompt is reported to the progress scope (:mod:`amp.parser.search.cancel`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import torch

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.errors import DecodingError, SearchCancelled
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, TokenStep
from amp.parser.search.beam_step import NEG, SearchItem, advance, alive
from amp.parser.search.cancel import current_check, searched
from amp.parser.search.decode import _encoded_pair, _rank, default_max_new_tokens, make_beam
from amp.parser.search.fastsearch import SearchStats
from amp.parser.search.processors import GrammarLogitsProcessor
from amp.parser.search.scoring import check_lf, forced_from_logprobs, pair_score
from amp.parser.search.settings import DEFAULT_SEARCH, Ask, SearchSettings
from amp.parser.search.vocab import encode_output, encode_prompt, get_masker

#: The sequence that holds the current prompt's cells; every other sequence starts as its copy.
PROMPT_SEQ = 0

Dist = tuple[torch.Tensor, torch.Tensor]


class Cells(Protocol):
    """KV cells kept per numbered sequence (:class:`amp.parser.models.gguf_cells.SeqCells`)."""

    n_seq: int

    def copy(self, src: int, dst: int) -> None: ...

    def free(self, seq: int) -> None: ...

    def truncate(self, seq: int, keep: int) -> bool: ...

    def decode(self, feeds: Sequence[tuple[int, int, Sequence[int], bool]]) -> list[torch.Tensor | None]: ...

    def decode_last(self, feeds: Sequence[tuple[int, int, Sequence[int]]]) -> list[torch.Tensor]: ...

    def release_padding(self) -> None: ...


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
    parts.append(row.topk(min(vocab_size, top_n + extra)).indices)
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
        self.rows: list[list[torch.Tensor]] = [[first] for _ in self.toks]
        self._plan: list[tuple[int, tuple[int, ...] | None]] = []

    def _pending(self) -> list[int]:
        return [r for r, rows in enumerate(self.rows) if len(rows) < len(self.toks[r])]

    def plan(self, children: Sequence[tuple[int, ...]], held: dict[tuple[int, ...], int]) -> list[tuple[int, int, list[int]]]:
        """Before the search branches into ``children`` (``held``: the hypotheses decoded last,
        with their sequences): which riders borrow a child's row, and the feeds of the others."""
        decoded = set(children)
        self._plan = []
        feeds: list[tuple[int, int, list[int]]] = []
        for r in self._pending():
            m = len(self.rows[r])
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
            self.rows[r].append(rows_of[borrowed] if borrowed is not None else next(fed)[-1])

    def result(self) -> list[torch.Tensor]:
        return [torch.stack(rows) for rows in self.rows]


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


class CellDecoder:
    """Parses, scores and samples on one :class:`Cells` engine with a tokenizer and EOS ids.

    ``context`` is the positions one sequence may hold (the model's training context); ``chunk``
    the tokens the engine decodes per call (a long feed is split into chunks of it).  The prompt
    on :data:`PROMPT_SEQ` stays between calls: a prompt sharing whole chunks with the previous one
    re-evaluates only the rest.
    """

    def __init__(self, cells: Cells, tokenizer: Any, eos: Sequence[int], *, context: int, chunk: int) -> None:
        self.cells = cells
        self.chunk = chunk
        self.tokenizer = tokenizer
        self.eos = list(eos)
        self.context = context
        self._held: list[int] = []  # the prompt tokens on PROMPT_SEQ
        self._first: torch.Tensor | None = None
        self.stats = SearchStats()
        self.prompt_tokens_fed = 0

    # -- the prompt -------------------------------------------------------------------------------

    def prompt(self, ids: list[int]) -> torch.Tensor:
        """Put ``ids`` on :data:`PROMPT_SEQ`; the log-probs after it.

        The prompt is fed in chunks of ``chunk`` tokens from position 0; the whole chunks it
        shares with the previous prompt (a sweep's header and examples) are kept, so its cells
        are the ones a fresh evaluation would compute."""
        if ids == self._held and self._first is not None:
            return self._first
        common = 0
        lim = min(len(ids) - 1, len(self._held))
        while common < lim and ids[common] == self._held[common]:
            common += 1
        common -= common % self.chunk
        if common < len(self._held) and not self.cells.truncate(PROMPT_SEQ, common):
            common = 0
        self._held, self._first = [], None
        out = self.cells.decode_last([(PROMPT_SEQ, common, ids[common:])])[0][-1]
        self.cells.release_padding()
        self.prompt_tokens_fed += len(ids) - common
        self._held, self._first = list(ids), out
        return out

    def _check(self, prompt_len: int, new_tokens: int) -> None:
        if prompt_len + new_tokens > self.context:
            raise DecodingError(
                f"prompt is {prompt_len} tokens (+ {new_tokens} for the LF), model context is "
                f"{self.context}: use fewer examples or a shorter prompt"
            )

    # -- the calls of a backend -------------------------------------------------------------------

    def parse_and_score(self, asks: Sequence[Ask], settings: SearchSettings, *, fmt: str, top_n: int,
                        words: OwnWords = NO_WORDS, steps_for: int = 1,
                        cancel: Callable[[], bool] | None = None) -> list[tuple[ParseResult, PairScore | None]]:
        """:func:`amp.parser.search.decode.parse_and_score_batch` on this engine, one prompt after
        the other (each one's beams advance together)."""
        if not settings.constrained:
            raise DecodingError("the llama.cpp engine runs the grammar-constrained search only; "
                                "use --engine transformers for an unconstrained search")
        tok = self.tokenizer
        masker = get_masker(tok, fmt, words=words)
        pairs = [_encoded_pair(tok, masker, lf0, lf1) for _p, lf0, lf1 in asks]
        check = cancel if cancel is not None else current_check()
        out: list[tuple[ParseResult, PairScore | None]] = []
        for (prompt, _a, _b), pair in zip(asks, pairs, strict=True):
            ids = encode_prompt(tok, prompt)
            budget = settings.max_new_tokens or default_max_new_tokens(tok, prompt)
            self._check(len(ids), max(budget, len(pair[2]), len(pair[3])) if pair is not None else budget)
            if check is not None and check():
                raise SearchCancelled("the search was cancelled")
            first = self.prompt(ids)
            processor = GrammarLogitsProcessor(masker, len(ids), self.eos, batch_size=1)
            found = cell_beam_search(self.cells, first, len(ids), processor, beams=settings.beams, budget=budget,
                                     eos=self.eos, cancel=check, stats=self.stats,
                                     riders=(pair[2], pair[3]) if pair is not None else (),
                                     top_n=top_n if steps_for > 0 else None)
            made = [make_beam(masker.vocab, masker, list(seq), processor.tracker, 0, constrained=True, fmt=fmt,
                              alpha=settings.alpha) for seq in found.found]
            ranked = list(_rank(made))
            record = {**settings.as_dict(), "max_new_tokens": budget, "top_n": top_n, "fmt": fmt}
            out.append(self._finish(masker, first, len(ids), ranked, pair, found, record, top_n=top_n,
                                    steps_for=steps_for))
            searched(1)
        return out

    def _finish(self, masker: Any, first: torch.Tensor, prompt_len: int, ranked: list[Beam], pair: Any,
                found: CellSearch, record: dict[str, Any], *, top_n: int,
                steps_for: int) -> tuple[ParseResult, PairScore | None]:
        """The top beams' steps from the search's own rows, LF0/LF1 from its riders (a beam whose
        rows were not all kept is decoded again from the prompt cells)."""
        vocab_size = int(first.shape[-1])
        for i, beam in enumerate(ranked[: max(0, steps_for)]):
            if not beam.token_ids:
                continue
            lp = found.beam_logprobs(beam.token_ids, vocab_size)
            if lp is None:
                lp = cell_forced_logprobs(self.cells, first, prompt_len, [beam.token_ids])[0]
            fs = forced_from_logprobs(masker, masker.vocab.text_of(list(beam.token_ids)), beam.token_ids,
                                      lp, top_n, False, True)
            ranked[i] = replace(beam, steps=fs.steps)
        score = None
        if pair is not None:
            f0 = forced_from_logprobs(masker, pair[0], pair[2], found.riders[0], top_n, True)
            f1 = forced_from_logprobs(masker, pair[1], pair[3], found.riders[1], top_n, True)
            score = pair_score(f0, f1)
        result = ParseResult(beams=tuple(ranked), constrained=True, fmt=record["fmt"], settings=dict(record),
                             prompt_tokens=prompt_len)
        return result, score

    def forced(self, prompt: str, lfs: Sequence[str], *, fmt: str, top_n: int, words: OwnWords = NO_WORDS,
               strict: bool = True) -> list[ForcedScore]:
        """Forced scores of ``lfs`` after ``prompt`` (:func:`amp.parser.search.scoring.forced_score`)."""
        masker = get_masker(self.tokenizer, fmt, words=words)
        seqs = [encode_output(self.tokenizer, check_lf(masker, lf)) for lf in lfs]
        ids = encode_prompt(self.tokenizer, prompt)
        self._check(len(ids), max((len(s) for s in seqs), default=0))
        first = self.prompt(ids)
        lps = cell_forced_logprobs(self.cells, first, len(ids), seqs)
        return [forced_from_logprobs(masker, lf, s, lp, top_n, strict) for lf, s, lp in zip(lfs, seqs, lps, strict=True)]

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str, top_n: int,
                    words: OwnWords = NO_WORDS) -> list[PairScore]:
        """P(LF0) of each ``(prompt, lf0, lf1)``; items sharing a prompt share its cells."""
        by_prompt: dict[str, list[int]] = {}
        for i, (prompt, _lf0, _lf1) in enumerate(items):
            by_prompt.setdefault(prompt, []).append(i)
        out: list[PairScore | None] = [None] * len(items)
        for prompt, members in by_prompt.items():
            lfs = [lf for i in members for lf in items[i][1:]]
            scores = self.forced(prompt, lfs, fmt=fmt, top_n=top_n, words=words)
            for k, i in enumerate(members):
                out[i] = pair_score(scores[2 * k], scores[2 * k + 1])
        return [p for p in out if p is not None]

    def beam_steps(self, prompt: str, beam: Beam, *, fmt: str, top_n: int, constrained: bool,
                   words: OwnWords = NO_WORDS) -> tuple[TokenStep, ...]:
        """Per-token probabilities and alternatives of a beam (a forced pass over its ids)."""
        if not beam.token_ids:
            return ()
        masker = get_masker(self.tokenizer, fmt, words=words)
        ids = encode_prompt(self.tokenizer, prompt)
        self._check(len(ids), len(beam.token_ids))
        first = self.prompt(ids)
        lp = cell_forced_logprobs(self.cells, first, len(ids), [beam.token_ids])[0]
        return forced_from_logprobs(masker, masker.vocab.text_of(list(beam.token_ids)), beam.token_ids, lp, top_n,
                                    False, constrained).steps

    def sample(self, prompt: str, *, n: int, temperature: float, seed: int, fmt: str, max_new_tokens: int | None,
               words: OwnWords = NO_WORDS, cancel: Callable[[], bool] | None = None) -> list[str | None]:
        """``n`` grammar-constrained samples at ``temperature`` (None: unfinished or not parsing);
        the same seed gives the same samples.  Sequences sample together, one batch per step."""
        if temperature <= 0:
            raise DecodingError(f"sampling needs a temperature above 0, not {temperature}")
        masker = get_masker(self.tokenizer, fmt, words=words)
        ids = encode_prompt(self.tokenizer, prompt)
        budget = max_new_tokens or default_max_new_tokens(self.tokenizer, prompt)
        self._check(len(ids), budget)
        first = self.prompt(ids)
        gen = torch.Generator().manual_seed(int(seed))
        processor = GrammarLogitsProcessor(masker, len(ids), self.eos, batch_size=1)
        prefixes = processor.prefixes
        check = cancel if cancel is not None else current_check()
        width = max(1, self.cells.n_seq - 1)
        texts: list[str | None] = []
        for lo in range(0, n, width):
            count = min(width, n - lo)
            seqs = list(range(PROMPT_SEQ + 1, PROMPT_SEQ + 1 + count))
            hyps: list[tuple[int, ...]] = [()] * count
            dists = [first] * count
            live = list(range(count))
            for s in seqs:
                self.cells.copy(PROMPT_SEQ, s)
            try:
                for _step in range(budget):
                    if not live:
                        break
                    if check is not None and check():
                        raise SearchCancelled("the sampling was cancelled")
                    for r in live:
                        cols, vals = candidates(processor, int(first.shape[-1]), prefixes.state(hyps[r]), dists[r])
                        probs = torch.softmax(vals.double() / float(temperature), dim=0)
                        tok = int(cols[int(torch.multinomial(probs, 1, generator=gen))])
                        hyps[r] = hyps[r] + (tok,)
                    live = [r for r in live if prefixes.state(hyps[r]) and not prefixes.automaton.is_final(
                        prefixes.state(hyps[r])) and len(hyps[r]) < budget]
                    if live:
                        outs = self.cells.decode_last([(seqs[r], len(ids) + len(hyps[r]) - 1, [hyps[r][-1]])
                                                       for r in live])
                        for r, lp in zip(live, outs, strict=True):
                            dists[r] = lp[-1]
            finally:
                for s in seqs:
                    self.cells.free(s)
                self.cells.release_padding()
            for h in hyps:
                beam = make_beam(masker.vocab, masker, list(h), processor.tracker, 0, constrained=True, fmt=fmt,
                                 alpha=DEFAULT_SEARCH.alpha)  # (only the text is kept)
                texts.append(beam.text if beam.finished and beam.parses else None)
        return texts
