"""The front of the cell search for a backend: one engine's prompts, parses, scores and samples.

:class:`CellDecoder` puts :mod:`amp.parser.search.cell_search` together for a backend (the
llama.cpp engine, :mod:`amp.parser.backends.llama`): a prompt that shares its first tokens with
the previous one, or with a saved prefix (:mod:`amp.parser.search.prefix_states`), feeds only the
rest (the prompts of a call in the order of their texts), a cancel
check runs before every decode step, and each
finished prompt is reported to the progress scope (:mod:`amp.parser.search.cancel`).  A
parse-and-score decodes nothing twice (LF0 and LF1 ride in the search's batches, the top beams'
forced scores come from the search's own rows); forced scoring, a beam's steps and sampling run
on the same cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.errors import DecodingError, SearchCancelled
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, TokenStep
from amp.parser.search.cancel import current_check, searched
from amp.parser.search.cell_search import (
    PROMPT_SEQ,
    Cells,
    CellSearch,
    candidates,
    cell_beam_search,
    cell_forced_logprobs,
)
from amp.parser.search.decode import _encoded_pair, _rank, default_max_new_tokens, make_beam
from amp.parser.search.fastsearch import SearchStats
from amp.parser.search.prefix_states import PrefixStates, shared_prefix
from amp.parser.search.processors import GrammarLogitsProcessor
from amp.parser.search.scoring import check_lf, forced_from_logprobs, pair_score, pair_scores_by_prompt
from amp.parser.search.settings import DEFAULT_SEARCH, Ask, SearchSettings
from amp.parser.search.vocab import encode_output, encode_prompt, get_masker

#: The fewest tokens of a prefix worth saving (a shorter one costs one padded call to feed again).
SAVED_PREFIX_MIN = 64


class CellDecoder:
    """Parses, scores and samples on one :class:`Cells` engine with a tokenizer and EOS ids.

    ``context`` is the positions one sequence may hold (the model's training context).  The prompt
    on :data:`PROMPT_SEQ` stays between calls: a prompt sharing its first tokens with the previous
    one feeds only the rest, and the prompts of one call are taken in the order of their texts
    (so neighbours share the most, as :func:`amp.parser.batch.run_batch` orders a sweep; the results
    keep the callers' order).  ``prefixes``: the saved prefixes of earlier prompts
    (:class:`~amp.parser.search.prefix_states.PrefixStates`, a fresh default-bounded one when None),
    put back when one shares more with a new prompt than the held prompt does.
    """

    def __init__(self, cells: Cells, tokenizer: Any, eos: Sequence[int], *, context: int,
                 prefixes: PrefixStates | None = None) -> None:
        self.cells = cells
        self.prefixes = prefixes if prefixes is not None else PrefixStates()
        self.tokenizer = tokenizer
        self.eos = list(eos)
        self.context = context
        self._held: list[int] = []  # the prompt tokens on PROMPT_SEQ
        self._first: torch.Tensor | None = None
        self.stats = SearchStats()
        self.prompt_tokens_fed = 0
        self.prefixes_restored = 0

    # -- the prompt -------------------------------------------------------------------------------

    def prompt(self, ids: list[int]) -> torch.Tensor:
        """Put ``ids`` on :data:`PROMPT_SEQ`; the log-probs after it.

        The tokens it shares with the previous prompt (a sweep's header and examples) keep their
        cells, or, when a saved prefix (:attr:`prefixes`) shares more, that one's cells are put
        back; only the rest is fed.  The engine computes a prompt token's cells the same however
        the prompt is cut into calls (:meth:`Cells.feed_prompt`), and a saved state is put back
        where a fresh feed puts its cells (:meth:`Cells.load_state`), so they are the ones a fresh
        evaluation would compute (tested to the bit)."""
        if ids == self._held and self._first is not None:
            return self._first
        limit = len(ids) - 1  # (the last token is always fed: its row is the first distribution)
        common = min(shared_prefix(ids, self._held), limit)
        self.cells.release_padding()
        saved = self.prefixes.best(ids, limit=limit)
        held, self._held, self._first = self._held, [], None
        if saved is not None and saved[1] > common:
            common = self._put_back(*saved)
        elif (common < len(held) or not held) and not self.cells.truncate(PROMPT_SEQ, common):
            common = 0  # (nothing held, e.g. after a feed that failed half-way: whatever it left is freed)
        out = self._feed(ids, common)
        self._held, self._first = list(ids), out
        return out

    def _put_back(self, key: tuple[int, ...], common: int) -> int:
        """The saved prefix ``key`` on :data:`PROMPT_SEQ`, cut to its first ``common`` tokens (the
        cache cleared first: nothing else holds cells between calls); the tokens kept (0 if the
        engine could not)."""
        data = self.prefixes.get(key)
        self.cells.clear()
        if data is None or not self.cells.load_state(PROMPT_SEQ, data):
            self.cells.clear()
            return 0
        if common < len(key) and not self.cells.truncate(PROMPT_SEQ, common):
            return 0
        self.prefixes_restored += 1
        return common

    def _feed(self, ids: list[int], start: int) -> torch.Tensor:
        """Feed ``ids[start:]`` after the ``start`` tokens :data:`PROMPT_SEQ` holds; on the way, save
        the state of the prompt's first :attr:`Cells.state_window` tokens (or all of them) unless
        saved already.  A feed cut in two gives the cells of one (:meth:`Cells.feed_prompt`)."""
        window = self.cells.state_window
        cut = len(ids) if window is None else min(len(ids), window)
        key = tuple(ids[:cut])
        if key in self.prefixes:
            self.prefixes.get(key)  # (used again: the most recent now)
        elif self.prefixes.max_bytes and cut >= SAVED_PREFIX_MIN and start < cut:
            out = self.cells.feed_prompt(PROMPT_SEQ, start, ids[start:cut])
            self.cells.release_padding()
            self.prompt_tokens_fed += cut - start
            start = cut
            data = self.cells.save_state(PROMPT_SEQ)
            if data is not None:
                self.prefixes.put(key, data)
            if start == len(ids):
                return out
        out = self.cells.feed_prompt(PROMPT_SEQ, start, ids[start:])
        self.cells.release_padding()
        self.prompt_tokens_fed += len(ids) - start
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
        encoded = [encode_prompt(tok, prompt) for prompt, _a, _b in asks]
        budgets = [settings.max_new_tokens or default_max_new_tokens(tok, prompt) for prompt, _a, _b in asks]
        for ids, pair, budget in zip(encoded, pairs, budgets, strict=True):  # every prompt fits, before any work
            self._check(len(ids), max(budget, len(pair[2]), len(pair[3])) if pair is not None else budget)
        done: dict[int, tuple[ParseResult, PairScore | None]] = {}
        for k in sorted(range(len(asks)), key=lambda k: asks[k][0]):  # neighbours share the most prompt (as run_batch)
            pair, ids, budget = pairs[k], encoded[k], budgets[k]
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
            done[k] = self._finish(masker, first, len(ids), ranked, pair, found, record, top_n=top_n,
                                   steps_for=steps_for)
            searched(1)
        return [done[k] for k in range(len(asks))]

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
        return pair_scores_by_prompt(items, lambda prompt, lfs: self.forced(prompt, lfs, fmt=fmt, top_n=top_n,
                                                                             words=words))

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
