"""Grammar-constrained beam search that skips the work the step-by-step search wastes (issue #16).

The search is *the same search* as ``model.generate(num_beams=k, num_return_sequences=k,
length_penalty=0.0, early_stopping=True)`` with :class:`~amp.parser.search.processors.GrammarLogitsProcessor`
(:mod:`amp.parser.search.decode`): every logical step keeps the top ``2k`` candidates of each prompt
(``max(2, 1 + #eos) · k``, as transformers does), finishes those whose text completes the grammar
(only among the top ``k`` positions), continues the best ``k`` unfinished ones and keeps the
``k`` best finished ones by **summed** raw log-probability in float32, exactly transformers'
``_beam_search`` bookkeeping.  What changes is how the model is asked:

1. **Forced runs in one pass** (jump-forward decoding).  Where the grammar, with variable
   binding, admits exactly one token after a beam's prefix (``" ."``, ``"("``, ``")"``, the rest
   of a predicate name…), the decision is known before the model is asked, so the pass that
   computes a beam's next distribution also feeds the forced tokens after it: one multi-token
   forward gives the distributions of every position of the run.  The logical steps still
   happen one token at a time and take their probabilities from that pass, so beams, scores
   and ranking are those of the step-by-step search (to float rounding: a multi-token pass may
   differ from single-token passes in the last bits).
2. **Finished work stops.**  A prompt leaves the batch (its cache rows are dropped) as soon as
   transformers' own search could no longer change its result: ``k`` beams finished
   (``early_stopping=True``), or no live beam's summed log-prob exceeds the worst finished one
   (log-probs are ≤ 0, so a running sum only decreases: an exact bound for the summed-score
   ranking the search keeps beams by; GNMT's ``alpha`` only re-orders the ``k`` returned beams
   afterwards, :func:`amp.parser.search.decode.gnmt_score`, so it does not enter the bound), or the
   budget is spent.  Candidates come from the grammar's allowed ids only: no full-vocabulary
   top-k.
3. **Filler rows cost nothing.**  transformers starts ``k-1`` beams at ``-1e9`` and carries
   ``-1e9``-penalised finished and ``-inf`` masked candidates as running rows; their sums are
   below every real candidate, so they can never displace one.  Here they are dead slots that
   are never computed; a returned beam can only differ from transformers' where transformers
   returns one of them (an empty or ``-inf`` beam, when fewer than ``k`` real beams finish).

The cache holds one row per beam slot (``k`` rows per prompt), kept by
:class:`amp.parser.search.beam_rows.BeamRows`; only models whose attention layout it can mask take
this path (:func:`supported`), others use ``generate``.  One logical step of the bookkeeping is
:func:`amp.parser.search.beam_step.advance`.  A ``cancel`` callable is checked before every pass
(:class:`~amp.parser.core.errors.SearchCancelled`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from amp.parser.core.errors import DecodingError, SearchCancelled
from amp.parser.models.quantize import output_rows
from amp.parser.search.beam_rows import BeamRows, mask_layout
from amp.parser.search.beam_step import NEG, SearchItem, advance, alive
from amp.parser.search.cancel import current_check, searched
from amp.parser.search.prefix import PromptPrefix
from amp.parser.search.processors import GrammarLogitsProcessor, ScoreTracker

Dist = tuple[torch.Tensor, torch.Tensor]


@dataclass
class SearchStats:
    """What a search cost: logical steps, model passes, tokens fed, forced tokens jumped."""

    steps: int = 0
    passes: int = 0
    row_tokens: int = 0  # rows × width of every pass (holes included)
    fed_tokens: int = 0  # real tokens fed
    forced_tokens: int = 0  # tokens fed ahead because the grammar forced them
    items: int = 0
    item_steps: int = 0  # sum over prompts of the steps each was live

    def add(self, other: SearchStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def supported(model: Any) -> bool:
    """Whether :func:`fast_beam_search` can drive ``model`` (else ``generate`` is used)."""
    return (
        mask_layout(model) is not None
        and getattr(model, "base_model", None) is not None
        and model.get_output_embeddings() is not None
    )


@torch.inference_mode()
def fast_beam_search(
    model: Any,
    prefix: PromptPrefix,
    processor: GrammarLogitsProcessor,
    *,
    beams: int,
    budget: int,
    eos: Sequence[int],
    pad_id: int,
    jump: bool = True,
    jump_rows: int | None = None,
    cancel: Callable[[], bool] | None = None,
    stats: SearchStats | None = None,
) -> list[list[tuple[int, ...]]]:
    """The ``k`` returned sequences (generated ids, finished slots first by sum) per prompt.

    ``processor.tracker`` receives every candidate's summed log-prob, as under ``generate``.
    ``jump=False`` feeds one token per pass (the same search, for comparison).  Runs are fed
    ahead only while the cache holds at most ``jump_rows`` rows (default ``2 · beams``): a pass is
    one forward over every row, so a run makes the other rows compute holes, which pays where
    the pass is bound by streaming the weights (few rows) and not where it is bound by
    arithmetic (a full batch on a CPU).
    """
    layout = mask_layout(model)
    if layout is None:
        raise DecodingError("this model's attention layout is not supported by the fast search")
    search = _Search(model, prefix, processor, layout, beams=beams, budget=budget, eos=eos, pad_id=pad_id,
                     jump=jump, jump_rows=2 * beams if jump_rows is None else jump_rows,
                     stats=stats if stats is not None else SearchStats())
    return search.run(cancel if cancel is not None else current_check())


class _Search:
    """The state of one batched search: the prompts' hypotheses, the rows' cache, the known
    next-token distributions ``(prompt index, hypothesis) -> (allowed ids, log-probs)``."""

    def __init__(self, model: Any, prefix: PromptPrefix, processor: GrammarLogitsProcessor, layout: str, *,
                 beams: int, budget: int, eos: Sequence[int], pad_id: int, jump: bool, jump_rows: int,
                 stats: SearchStats) -> None:
        self.processor = processor
        self.prefixes = processor.prefixes
        self.automaton = processor.masker.automaton
        self.texts = processor.masker.vocab.texts
        self.tracker: ScoreTracker = processor.tracker
        self.beams, self.budget, self.jump, self.jump_rows, self.st = beams, budget, jump, jump_rows, stats
        self.keep = max(2, 1 + len(eos)) * beams
        self.vocab_size = output_rows(model)
        self.items = []
        for b in range(prefix.size):
            running: list[tuple[tuple[int, ...], np.float32]] = [((), np.float32(0.0))]
            running += [((), np.float32(-np.inf))] * (beams - 1)
            finished: list[tuple[tuple[int, ...], np.float32, bool]] = [((), NEG, False)] * beams
            self.items.append(SearchItem(b, prefix.lengths[b], int(prefix.ids[b, -1]), running, finished))
        self.rows = BeamRows(model, prefix, self.items, beams, pad_id, layout)
        self.rows.prompt_width = int(prefix.ids.shape[1]) - 1
        stats.items += len(self.items)
        self.dists: dict[tuple[int, tuple[int, ...]], Dist] = {}
        self.spoken: dict[Any, int | None] = {}

    def run(self, cancel: Callable[[], bool] | None) -> list[list[tuple[int, ...]]]:
        step = 0
        while live := [it for it in self.items if not it.done]:
            if cancel is not None and cancel():
                raise SearchCancelled("the search was cancelled")
            self._compute_distributions(live)
            # -- one logical step per live prompt (transformers' bookkeeping) -------------------------
            self.st.steps += 1
            for it in live:
                self.st.item_steps += 1
                advance(it, self.dists, self.tracker, self.prefixes, self.automaton, self.beams, self.keep,
                        self.budget, step, self.vocab_size)
            step += 1
            for key in [key for key in self.dists if len(key[1]) <= step - 1]:
                del self.dists[key]
            self._drop_finished(live)
        return [[p for p, _s, _f in it.finished] for it in self.items]

    def _drop_finished(self, live: list[SearchItem]) -> None:
        """Prompts whose search ended leave the batch (their cache rows are dropped)."""
        finished_now = [it for it in live if it.done]
        searched(len(finished_now))
        if finished_now and any(not it.done for it in self.items):
            rows = self.rows
            rows.keep([r for r in range(rows.size) if not rows.item_of[r].done])
            for it in self.items:
                it.rows = [r for r, owner in enumerate(rows.item_of) if owner is it]

    # -- the next distribution of every live beam ---------------------------------------------------

    def _compute_distributions(self, live: list[SearchItem]) -> None:
        """Make sure every live beam's next distribution is known: each beam slot takes the row
        that shares the longest fed prefix with it, and the rows that miss tokens are fed (plus
        the forced run after the hypothesis) in one pass."""
        rows = self.rows
        source = list(range(rows.size))
        plans: dict[int, tuple[tuple[int, ...], list[int]]] = {}  # row -> (hyp prefix, tokens to feed)
        truncs: dict[int, int] = {}
        for it in live:
            for j, (p, s) in enumerate(it.running):
                row = it.rows[j]
                if not alive(s):
                    continue
                best, best_len = self._closest_row(it, p)
                source[row] = best
                if (it.index, p) in self.dists:
                    if best_len < len(p) and best_len != len(rows.fed[best] or ()):
                        truncs[row] = best_len
                    continue
                start_tokens = [] if best_len >= 0 else [it.last_prompt_token]
                truncs[row] = best_len
                plans[row] = (p, start_tokens + list(p[max(best_len, 0):]) + self._forced_run(p))
        rows.gather(source)
        for row, keep_n in truncs.items():
            fed = rows.fed[row]
            if fed is None or keep_n < len(fed):
                rows.truncate(row, keep_n)
        if plans:
            self._feed(plans)

    def _closest_row(self, it: SearchItem, p: tuple[int, ...]) -> tuple[int, int]:
        """The row of ``it`` whose fed tokens share the longest prefix with ``p`` (-1: none fed)."""
        best, best_len = it.rows[0], -2
        for r in it.rows:
            fed = self.rows.fed[r]
            if fed is None:
                common = -1
            else:
                common = 0
                lim = min(len(fed), len(p))
                while common < lim and fed[common] == p[common]:
                    common += 1
            if common > best_len:
                best, best_len = r, common
        return best, best_len

    def _feed(self, plans: dict[int, tuple[tuple[int, ...], list[int]]]) -> None:
        """One forward pass over every row; the distributions of every fed position are kept."""
        rows, st = self.rows, self.st
        starts = {}
        for r in range(rows.size):
            fed = rows.fed[r]
            starts[r] = rows.item_of[r].prompt_len - 1 + (0 if fed is None else 1 + len(fed))
        out, row_tokens = rows.run({row: toks for row, (_p, toks) in plans.items()}, starts)
        st.passes += 1
        st.row_tokens += row_tokens
        for row, (p, toks) in plans.items():
            it = rows.item_of[row]
            fed = rows.fed[row]
            first_gen = 1 if fed is None else 0
            st.fed_tokens += len(toks)
            st.forced_tokens += max(0, len(toks) - first_gen - (len(p) - len(fed or ())))
            base = fed or ()
            seq = list(base) + list(toks[first_gen:])
            rows.fed[row] = tuple(seq)
            logp = out[row]
            # position i of the feed predicts the token after prefix seq[: len(base) + i - first_gen + 1]
            for i in range(len(toks)):
                q = tuple(seq[: len(base) + i + 1 - first_gen])
                if len(q) >= len(p) and (it.index, q) not in self.dists:
                    self.dists[(it.index, q)] = self._candidates(self.prefixes.state(q), logp[i])

    def _candidates(self, state: Any, logp: torch.Tensor) -> Dist:
        """(ids, processed log-probs) a row in ``state`` offers, as the processor leaves them."""
        processor = self.processor
        cols = processor.allowed(state)
        if cols.numel() and int(cols[-1]) >= self.vocab_size:
            cols = cols[cols < self.vocab_size]
        vals = logp[cols.to(logp.device)].clone()
        if state:
            for canon, members in processor.masker.end_groups(state):
                m = members.to(logp.device)
                inside = torch.isin(m, cols.to(logp.device))
                member_vals = torch.where(inside, logp[m], torch.full_like(logp[m], -math.inf))
                total = torch.logsumexp(member_vals[None], dim=1)[0]
                hit = torch.isin(cols.to(logp.device), m)
                vals[hit] = -math.inf
                vals[cols.to(logp.device) == canon] = total
        return cols, vals.float().cpu()

    # -- jump-forward: the tokens the grammar forces after a hypothesis -----------------------------

    def _forced_token(self, state: Any) -> int | None:
        """The token to feed ahead in ``state``: where the grammar forces the *text* (every allowed
        token's text is a prefix of the longest one), the longest one (of equal texts, the highest
        id: Gemma's byte-fallback duplicates come first).  A guess only: the search still weighs
        every allowed token, and a beam that takes another one gets its distribution computed."""
        if state in self.spoken:
            return self.spoken[state]
        choice = None
        texts = self.texts
        if state and not self.automaton.is_final(state):
            ids = [i for i in self.processor.allowed(state).tolist() if i < self.vocab_size and texts[i]]
            if ids:
                longest = max(ids, key=lambda i: (len(texts[i] or ""), i))
                if all(texts[longest].startswith(texts[i]) for i in ids):
                    choice = longest
        self.spoken[state] = choice
        return choice

    def _forced_run(self, p: tuple[int, ...]) -> list[int]:
        run: list[int] = []
        if not self.jump or self.rows.size > self.jump_rows:
            return run
        state = self.prefixes.state(p)
        while len(p) + len(run) < self.budget - 1:
            tok = self._forced_token(state)
            if tok is None:
                break
            nxt = self.prefixes.state(p + tuple(run) + (tok,))
            if not nxt or self.automaton.is_final(nxt):
                break
            run.append(tok)
            state = nxt
        return run
