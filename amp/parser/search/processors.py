"""Beam-safe grammar processor and stopping criteria for ``model.generate`` (docs/decoding-notes.md §4a).

transformers regathers beam rows every step (docs/decoding-notes.md §1, §5 item 1), so no per-row
matcher is kept: the automaton state of a row is looked up by its **generated-token prefix**
(``tuple(input_ids[row, prompt_len:])``) and computed as parent state + text of the last token.
Reordering, forking, dropping beams and batching several prompts therefore need no handling.

A token that ends the LF and carries more newlines (Gemma's ``"\n\n"``) also ends it; all
tokens ending the LF with the same text are merged into one canonical token carrying their
total probability (:func:`merge_end_groups`).

Rows that cannot continue — an EOS/pad/special token, a dead prefix (a ``-inf`` filler
candidate that beam search still carries, docs/decoding-notes.md §5 item 10), or a row already at the grammar's final
newline — allow **only EOS**, so every row keeps a finite option.  Nothing asserts on a failed
consume.  Masking is applied to the log-probs that beam search hands to processors and does not
renormalise, so beam scores are the model's raw log-probs (docs/decoding-notes.md §5 item 3) — with one deliberate
exception: the token that ends the LF carries the total probability of all tokens that end it
the same way (see above).

:class:`ScoreTracker` records each candidate's summed log-prob (parent sum + the processed
log-prob of its last token, exactly what beam search adds up), so the caller gets per-beam
scores without ``output_scores=True`` — which would keep a ``(beams, |V|)`` float tensor per step
(≈5 MB a step on Gemma's 262k vocabulary).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import cast

import torch
from transformers import LogitsProcessor, StoppingCriteria

from amp.parser.search.automaton import DEAD, State
from amp.parser.search.vocab import VocabMasker, Vocabulary


class PrefixStates:
    """Memo of automaton states keyed by generated-token prefix (shared by processor and stop)."""

    def __init__(self, masker: VocabMasker) -> None:
        self.masker = masker
        self.automaton = masker.automaton
        self.vocab: Vocabulary = masker.vocab
        self._states: dict[tuple[int, ...], State] = {(): self.automaton.initial}

    def state(self, prefix: tuple[int, ...]) -> State:
        """The automaton state after ``prefix`` (``DEAD`` after any special token)."""
        states = self._states
        found = states.get(prefix)
        if found is not None:
            return found
        # Walk back to the longest known prefix, then forward (normally one token).
        n = len(prefix) - 1
        while n > 0 and prefix[:n] not in states:
            n -= 1
        state = states[prefix[:n]]
        texts = self.vocab.texts
        size = self.vocab.size
        for k in range(n, len(prefix)):
            tok = prefix[k]
            text = texts[tok] if 0 <= tok < size else None
            state = DEAD if (text is None or not state) else self.automaton.advance_token(state, text)
            states[prefix[: k + 1]] = state
        return state


def merge_end_groups(
    scores: torch.Tensor, rows: list[int], groups: tuple[tuple[int, torch.Tensor], ...]
) -> None:
    """In place: give each end group's total probability to its canonical token, mask the rest.

    "The LF ends here" is one event however the tokenizer spells the final newline
    (``"\n"`` or ``"\n\n"``…, see :meth:`VocabMasker.end_groups`); merging it keeps the
    distribution normalised and stops beams from filling up with the same LF ended by
    different newline tokens.
    """
    if not groups or not rows:
        return
    r = torch.tensor(rows, dtype=torch.long, device=scores.device)
    for canon, members in groups:
        m = members.to(scores.device)
        total = torch.logsumexp(scores[r][:, m], dim=1)
        scores[r[:, None], m[None, :]] = float("-inf")
        scores[r, canon] = total


class ScoreTracker:
    """Summed log-probs of generated prefixes, recorded from the processor and stop calls.

    The processor call of a step sees every running row and its (processed) log-probs; the
    stopping-criteria call right after sees the selected candidates (row prefix + one token).
    A candidate's sum is its parent's sum plus the parent row's log-prob of the new token.
    Sums depend on the prompt, so they are keyed by (prompt index, prefix): rows are grouped
    by prompt in order (``batch_size`` prompts × beams or × candidates).
    """

    def __init__(self, batch_size: int = 1) -> None:
        self.batch_size = batch_size
        self.sums: dict[tuple[int, tuple[int, ...]], float] = {
            (b, ()): 0.0 for b in range(batch_size)
        }
        self._rows: dict[tuple[int, tuple[int, ...]], int] = {}
        self._scores: torch.Tensor | None = None

    def _keys(self, prefixes: list[tuple[int, ...]]) -> list[tuple[int, tuple[int, ...]]]:
        n = len(prefixes)
        return [(r * self.batch_size // n, p) for r, p in enumerate(prefixes)]

    def observe(self, prefixes: list[tuple[int, ...]], scores: torch.Tensor) -> None:
        self._rows = {key: r for r, key in enumerate(self._keys(prefixes))}
        self._scores = scores

    def candidates(self, prefixes: list[tuple[int, ...]]) -> None:
        if self._scores is None:
            return
        todo = []
        for b, p in self._keys(prefixes):
            parent = (b, p[:-1])
            if p and (b, p) not in self.sums and parent in self._rows and parent in self.sums:
                todo.append((b, p))
        if not todo:
            return
        rows = torch.tensor([self._rows[(b, p[:-1])] for b, p in todo], dtype=torch.long)
        cols = torch.tensor([p[-1] for _b, p in todo], dtype=torch.long)
        values = self._scores[rows.to(self._scores.device), cols.to(self._scores.device)].double().tolist()
        for (b, p), v in zip(todo, values, strict=True):
            self.sums[(b, p)] = self.sums[(b, p[:-1])] + v

    def logprob(self, prefix: tuple[int, ...], item: int = 0) -> float | None:
        """The summed log-prob beam search gave ``prefix`` after prompt ``item`` (None if unseen)."""
        return self.sums.get((item, tuple(prefix)))


class RecordingProcessor(LogitsProcessor):
    """Unconstrained decoding: changes nothing, only feeds the :class:`ScoreTracker`."""

    def __init__(self, prompt_len: int, batch_size: int = 1) -> None:
        self.prompt_len = prompt_len
        self.tracker = ScoreTracker(batch_size)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        self.tracker.observe([tuple(r) for r in input_ids[:, self.prompt_len :].tolist()], scores)
        return scores


class GrammarLogitsProcessor(LogitsProcessor):
    """Sets every token the grammar forbids to ``-inf`` (prefix-keyed, see module docstring).

    ``prompt_len`` is the (padded) prompt length: the generated region of every row starts
    there.  ``eos_ids`` are the ids allowed in dead/finished rows; ``batch_size`` the number of
    prompts (for the :class:`ScoreTracker`).
    """

    def __init__(
        self, masker: VocabMasker, prompt_len: int, eos_ids: Sequence[int], batch_size: int = 1
    ) -> None:
        self.prefixes = PrefixStates(masker)
        self.masker = masker
        self.prompt_len = prompt_len
        self.eos = torch.tensor(sorted(set(eos_ids)), dtype=torch.long)
        self.tracker = ScoreTracker(batch_size)
        self.calls = 0
        self.seconds = 0.0

    def allowed(self, state: State) -> torch.Tensor:
        """Allowed ids in ``state``: the grammar's tokens, or EOS only when none can continue."""
        if not state or self.prefixes.automaton.is_final(state):
            return self.eos
        ids = self.masker.allowed_ids(state)
        return ids if ids.numel() else self.eos

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        t0 = time.perf_counter()
        rows = [tuple(r) for r in input_ids[:, self.prompt_len :].tolist()]
        vocab_size = scores.shape[-1]
        by_state: dict[State, list[int]] = {}
        for r, ids in enumerate(rows):
            by_state.setdefault(self.prefixes.state(ids), []).append(r)
        row_idx: list[torch.Tensor] = []
        col_idx: list[torch.Tensor] = []
        for state, members in by_state.items():
            cols = self.allowed(state)
            if cols.numel() and int(cols[-1]) >= vocab_size:
                cols = cols[cols < vocab_size]
            for r in members:
                row_idx.append(torch.full((cols.numel(),), r, dtype=torch.long))
                col_idx.append(cols)
        out = torch.full_like(scores, float("-inf"))
        if row_idx:
            ri = torch.cat(row_idx).to(scores.device)
            ci = torch.cat(col_idx).to(scores.device)
            out[ri, ci] = scores[ri, ci]
        for state, members in by_state.items():
            if state:
                merge_end_groups(out, members, self.masker.end_groups(state))
        self.tracker.observe(rows, out)
        self.calls += 1
        self.seconds += time.perf_counter() - t0
        return cast(torch.FloatTensor, out)


class GrammarStoppingCriteria(StoppingCriteria):
    """Ends a row exactly when its text completes the grammar (its final ``"\\n"``).

    Works for newline-carrying tokens such as ``')\\n'`` (docs/decoding-notes.md §5 item 6): the test is
    the automaton's final state, not a token id.
    """

    def __init__(self, processor: GrammarLogitsProcessor) -> None:
        self.prefixes = processor.prefixes
        self.prompt_len = processor.prompt_len
        self.tracker = processor.tracker

    def __call__(self, input_ids: torch.LongTensor, scores: object = None, **kwargs: object) -> torch.BoolTensor:
        rows = [tuple(r) for r in input_ids[:, self.prompt_len :].tolist()]
        self.tracker.candidates(rows)
        is_final = self.prefixes.automaton.is_final
        done = [is_final(self.prefixes.state(ids)) for ids in rows]
        return cast(torch.BoolTensor, torch.tensor(done, dtype=torch.bool, device=input_ids.device))


class NewlineStoppingCriteria(StoppingCriteria):
    """Unconstrained decoding: end a row at the first generated token containing ``"\\n"``.

    A text criterion rather than ``eos_token_id=<newline id>``, so merged tokens like
    ``')\\n'`` also stop (docs/decoding-notes.md §5 item 6).
    """

    def __init__(self, vocab: Vocabulary, processor: RecordingProcessor) -> None:
        self.prompt_len = processor.prompt_len
        self.tracker = processor.tracker
        size = vocab.size
        self._has_newline = [t is not None and "\n" in t for t in vocab.texts]
        self._size = size

    def _newline(self, tok: int) -> bool:
        return 0 <= tok < self._size and self._has_newline[tok]

    def __call__(self, input_ids: torch.LongTensor, scores: object = None, **kwargs: object) -> torch.BoolTensor:
        rows = [tuple(r) for r in input_ids[:, self.prompt_len :].tolist()]
        self.tracker.candidates(rows)
        done = [any(self._newline(t) for t in ids) for ids in rows]
        return cast(torch.BoolTensor, torch.tensor(done, dtype=torch.bool, device=input_ids.device))
