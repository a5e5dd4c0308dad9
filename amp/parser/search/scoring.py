"""Forced decoding: per-token probabilities of given LFs after a prompt (docs/paper-notes.md §12).

The LF is framed as the decoding grammar produces it, ``" " + lf + "\\n"`` (docs/paper-notes.md §9), and
tokenized **separately** from the prompt (:func:`amp.parser.search.vocab.encode_output`), exactly as
generation produces it.  Unlike the original script (docs/paper-notes.md §12, "Alignment quirk") every
LF token is scored, and the token carrying the final newline counts as the LF's end (the
original scored an EOS and its metric dropped it; we have no EOS step).

Per token we report the raw probability (softmax over the whole vocabulary) and the
**grammar-renormalised** probability (softmax over the tokens the grammar allows at that
position, mask from the automaton state before the token), plus the top-n alternatives under
both.  Several LFs after one prompt are scored in **one batched forward that shares the
prompt**: the prompt runs once (:mod:`amp.parser.search.prefix`), its KV cache is repeated to the
batch and the right-padded LF continuations run together; right padding needs no attention
mask because causal attention never looks ahead.  :func:`forced_from_logprobs` turns log-probs
into a :class:`ForcedScore`, so :func:`amp.parser.search.decode.parse_and_score_batch` can score LF0/LF1
on the prompt pass its beam search already made (a parse and its P(LF0) share one pass).
:func:`forced_score_independent` is the plain one-sequence-at-a-time reference.

Results are deterministic for a given model, tokenizer, dtype and device (no sampling); batched
and independent scoring agree to float rounding (~1e-5 in float32).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.unknown_words import unknown_word_message
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.parser.core.errors import DecodingError
from amp.parser.core.results import ForcedScore, PairScore, TokenAlternative, TokenStep, min_prob_ratio
from amp.parser.search.automaton import DEAD, State
from amp.parser.search.prefix import R, device_of, prefill, prefixed_logprobs
from amp.parser.search.processors import merge_end_groups
from amp.parser.search.settings import DEFAULT_TOP_N
from amp.parser.search.top_k import top_k
from amp.parser.search.vocab import VocabMasker, check_context, encode_output, encode_prompt, frame_lf, get_masker


@torch.inference_mode()
def continuation_logprobs(model: Any, prompt_ids: Sequence[int], seqs: Sequence[Sequence[int]],
                          reduce: Callable[[int, torch.Tensor], R]) -> list[R]:
    """For each sequence, ``reduce(index, logprobs)`` of its ``(len(seq), V)`` float32 tensor of
    log-probs predicting its tokens.

    Runs the prompt once (:func:`amp.parser.search.prefix.prefill`) and scores the batch of
    continuations on copies of its KV cache (:func:`amp.parser.search.prefix.prefixed_logprobs`),
    reducing each sequence's rows as soon as its chunk is computed: one chunk's full-vocabulary
    rows are held at a time, however many or long the sequences.
    """
    if not prompt_ids:
        raise DecodingError("forced scoring needs at least one prompt token")
    if any(len(s) == 0 for s in seqs):
        raise DecodingError("cannot score an empty token sequence")
    check_context(model, len(prompt_ids), max((len(s) for s in seqs), default=0))
    prefix = prefill(model, [list(prompt_ids)], pad_id=0)
    return prefixed_logprobs(model, prefix, [(0, s) for s in seqs], reduce)


@torch.inference_mode()
def independent_logprobs(model: Any, prompt_ids: Sequence[int], seq: Sequence[int]) -> torch.Tensor:
    """Reference implementation: one full forward over ``prompt + seq``, no cache sharing."""
    device = device_of(model)
    check_context(model, len(prompt_ids), len(seq))
    ids = torch.tensor([list(prompt_ids) + list(seq)], device=device)
    logits = model(input_ids=ids).logits[0].float()
    p = len(prompt_ids)
    return torch.log_softmax(logits[p - 1 : p - 1 + len(seq)], dim=-1)


def _alternatives(masker: VocabMasker, values: torch.Tensor, ids: torch.Tensor, shift: float = 0.0) -> tuple[TokenAlternative, ...]:
    vocab = masker.vocab
    return tuple(
        TokenAlternative(token=vocab.token_display(int(i)), token_id=int(i), prob=math.exp(float(v) - shift))
        for v, i in zip(values.tolist(), ids.tolist(), strict=True)
        if v != -math.inf
    )


@torch.inference_mode()
def steps_from_logprobs(
    masker: VocabMasker,
    logprobs: torch.Tensor,
    token_ids: Sequence[int],
    *,
    top_n: int = DEFAULT_TOP_N,
    strict: bool = False,
    merge_end: bool = True,
    what: str = "",
) -> tuple[tuple[TokenStep, ...], list[float], list[float]]:
    """Token steps plus the raw and grammar log-probs of ``token_ids`` given their log-probs.

    ``strict``: a token the grammar does not allow raises :class:`DecodingError` (canonical
    LFs); otherwise its grammar probability is NaN (and stays NaN after it, the state is dead).
    ``merge_end``: at positions where the LF can end, the tokens ending it with the same text
    (``"\n"``, ``"\n\n"``, …) count as one event carried by the canonical token, as in
    constrained beam search (:func:`amp.parser.search.processors.merge_end_groups`).
    """
    automaton = masker.automaton
    vocab = masker.vocab
    device = logprobs.device
    n = len(token_ids)
    ids_t = torch.tensor(list(token_ids), dtype=torch.long, device=device)
    raw = logprobs[torch.arange(n, device=device), ids_t].double().tolist()
    k = max(0, min(top_n, logprobs.shape[-1]))
    top_v, top_i = top_k(logprobs, k) if k else (logprobs[:, :0], logprobs[:, :0].long())
    state: State = automaton.initial
    steps: list[TokenStep] = []
    grammar: list[float] = []
    for j, tok in enumerate(token_ids):
        allowed = _allowed_ids(masker, state, logprobs.shape[-1])
        row = logprobs[j]
        merged = _end_merged(masker, state, tok, row) if merge_end else None
        if merged is not None:
            row = merged
            raw[j] = float(row[tok])
            if k:
                top_v[j], top_i[j] = top_k(row, k)
        ok = _is_allowed(allowed, tok)
        if not ok and strict:
            raise DecodingError(
                f"{what or 'the LF'} is outside the grammar: token {j} "
                f"{vocab.token_display(tok)!r} is not allowed after "
                f"{vocab.text_of(list(token_ids[:j]))!r}"
            )
        g, alts_g = _grammar_step(masker, row, allowed, raw[j] if ok else None, top_n)
        alts = _alternatives(masker, top_v[j], top_i[j]) if k else ()
        steps.append(TokenStep(token=vocab.token_display(tok), token_id=int(tok), prob=math.exp(raw[j]),
                               prob_grammar=math.exp(g) if not math.isnan(g) else math.nan,
                               alternatives=alts, alternatives_grammar=alts_g))
        grammar.append(g)
        text = vocab.token_text(tok)
        state = automaton.advance_token(state, text) if (state and text is not None) else DEAD
    return tuple(steps), raw, grammar


def _allowed_ids(masker: VocabMasker, state: State, vocab_size: int) -> torch.Tensor:
    """The sorted token ids the grammar allows in ``state`` (none in the dead state), within the
    model's vocabulary (a tokenizer may know more ids than the model's head has rows)."""
    allowed = masker.allowed_ids(state) if state else torch.empty(0, dtype=torch.long)
    if allowed.numel() and int(allowed[-1]) >= vocab_size:
        allowed = allowed[allowed < vocab_size]
    return allowed


def _end_merged(masker: VocabMasker, state: State, tok: int, row: torch.Tensor) -> torch.Tensor | None:
    """``row`` with the tokens that end the LF the same way merged into their canonical token
    (:func:`amp.parser.search.processors.merge_end_groups`); None where nothing merges, or where ``tok``
    is a non-canonical end token (an unconstrained beam keeps its own probability)."""
    groups = masker.end_groups(state) if state else ()
    if not groups or any(tok != canon and bool((members == tok).any()) for canon, members in groups):
        return None
    merged = row.clone()[None]
    merge_end_groups(merged, [0], groups)
    return merged[0]


def _is_allowed(allowed: torch.Tensor, tok: int) -> bool:
    """Whether ``tok`` is among the sorted ``allowed`` ids."""
    pos = int(torch.searchsorted(allowed, tok)) if allowed.numel() else 0
    return allowed.numel() > 0 and pos < allowed.numel() and int(allowed[pos]) == tok


def _grammar_step(masker: VocabMasker, row: torch.Tensor, allowed: torch.Tensor, raw: float | None,
                  top_n: int) -> tuple[float, tuple[TokenAlternative, ...]]:
    """The grammar-renormalised log-prob of the token whose raw log-prob is ``raw`` (NaN when it is
    None: the token is outside the grammar) and the top-``top_n`` alternatives under the mask."""
    if not allowed.numel():
        return math.nan, ()
    sub = row[allowed.to(row.device)]
    lse = min(0.0, float(torch.logsumexp(sub.double(), dim=0)))
    g = min(0.0, raw - lse) if raw is not None else math.nan
    kg = min(top_n, sub.numel())
    if not kg:
        return g, ()
    gv, gi = sub.topk(kg)
    return g, _alternatives(masker, gv, allowed[gi.cpu()], lse)


def forced_from_logprobs(
    masker: VocabMasker,
    lf: str,
    ids: Sequence[int],
    logprobs: torch.Tensor,
    top_n: int,
    strict: bool,
    merge_end: bool = True,
) -> ForcedScore:
    """A :class:`ForcedScore` of ``ids`` (the tokens of ``lf``) from their log-probs ``(len, V)``."""
    steps, raw, grammar = steps_from_logprobs(
        masker, logprobs, ids, top_n=top_n, strict=strict, merge_end=merge_end, what=repr(lf)
    )
    n = len(ids)
    total = math.fsum(raw)
    return ForcedScore(
        lf=lf,
        token_ids=tuple(int(i) for i in ids),
        tokens=tuple(s.token for s in steps),
        steps=steps,
        sum_logprob=total,
        mean_logprob=total / n,
        sum_logprob_grammar=math.fsum(grammar),
        min_prob=math.exp(min(raw)),
        min_prob_grammar=math.exp(min(grammar)) if not any(math.isnan(g) for g in grammar) else math.nan,
    )


def check_lf(masker: VocabMasker, lf: str) -> str:
    """``lf`` framed for decoding; :class:`DecodingError` saying where if the grammar refuses it."""
    framed = frame_lf(lf)
    automaton = masker.automaton
    state = automaton.initial
    for pos, ch in enumerate(framed):
        state = automaton.step(state, ch)
        if not state:
            violation = automaton.binding_violation(framed)
            if violation is not None:
                at, var, kind = violation
                if kind == "free":
                    raise DecodingError(
                        f"the LF {lf!r} uses variable {var!r} at character {at - 1} before "
                        f"quantifying it (free variable): the decoding grammar only accepts LFs "
                        f"whose variables are quantified earlier in the text"
                    )
                raise DecodingError(
                    f"the LF {lf!r} quantifies variable {var!r} a second time at character "
                    f"{at - 1}: each variable may be quantified only once"
                )
            unknown = unknown_word_message(lf, automaton.fmt, automaton.own_words)
            if unknown is not None:
                raise DecodingError(f"the LF {lf!r} cannot be scored: {unknown}")
            raise DecodingError(
                f"the LF {lf!r} is outside the decoding grammar: character {pos - 1} ({ch!r}) "
                f"cannot follow {framed[1:pos]!r}"
            )
    if not automaton.is_final(state):
        raise DecodingError(f"the LF {lf!r} is incomplete: the decoding grammar expects more text")
    return framed


def forced_score(
    model: Any,
    tokenizer: Any,
    prompt: str,
    lfs: Sequence[str],
    *,
    fmt: str = DEFAULT_FORMAT,
    top_n: int = DEFAULT_TOP_N,
    words: OwnWords = NO_WORDS,
) -> list[ForcedScore]:
    """Forced-decode each LF after ``prompt`` in one batched forward sharing the prompt.

    Raises :class:`DecodingError` for an LF outside the decoding grammar (every canonical token
    of a grammatical LF is in the mask; asserted per token).  ``words``: a teacher's own words
    extending the decoding grammar (:mod:`amp.logic.own_words`).
    """
    masker = get_masker(tokenizer, fmt, words=words)
    framed = [check_lf(masker, lf) for lf in lfs]
    seqs = [encode_output(tokenizer, f) for f in framed]
    prompt_ids = encode_prompt(tokenizer, prompt)
    return continuation_logprobs(
        model, prompt_ids, seqs, lambda i, lp: forced_from_logprobs(masker, lfs[i], seqs[i], lp, top_n, True))


def forced_score_independent(
    model: Any, tokenizer: Any, prompt: str, lf: str, *, fmt: str = DEFAULT_FORMAT, top_n: int = DEFAULT_TOP_N,
    words: OwnWords = NO_WORDS,
) -> ForcedScore:
    """:func:`forced_score` for one LF without cache sharing (a cross-check for tests)."""
    masker = get_masker(tokenizer, fmt, words=words)
    ids = encode_output(tokenizer, check_lf(masker, lf))
    lp = independent_logprobs(model, encode_prompt(tokenizer, prompt), ids)
    return forced_from_logprobs(masker, lf, ids, lp, top_n, True)


def forced_score_ids(
    model: Any,
    tokenizer: Any,
    prompt: str,
    seqs: Sequence[Sequence[int]],
    *,
    fmt: str = DEFAULT_FORMAT,
    top_n: int = DEFAULT_TOP_N,
    merge_end: bool = True,
    words: OwnWords = NO_WORDS,
) -> list[ForcedScore]:
    """Forced scores of given token sequences (e.g. beams, possibly non-canonical or outside
    the grammar: grammar probabilities are then NaN from the first disallowed token on).

    ``lf`` of each result is the decoded text of its ids.  ``merge_end`` as in constrained
    search (pass False for unconstrained beams, whose search used the raw token probabilities).
    """
    masker = get_masker(tokenizer, fmt, words=words)
    size = masker.vocab.size
    for k, seq in enumerate(seqs):
        bad = [t for t in seq if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < size]
        if bad:
            raise DecodingError(f"sequence {k} has token ids outside this model's vocabulary (0 … {size - 1}): "
                                f"{', '.join(repr(t) for t in bad[:5])}")
    prompt_ids = encode_prompt(tokenizer, prompt)
    vocab = masker.vocab
    return continuation_logprobs(
        model, prompt_ids, seqs,
        lambda i, lp: forced_from_logprobs(masker, vocab.text_of(list(seqs[i])), seqs[i], lp, top_n, False, merge_end))


def total_prob_ratio(s0: float, s1: float) -> float:
    """``exp(s0) / (exp(s0) + exp(s1))`` from summed log-probs, computed stably."""
    if math.isinf(s0) and math.isinf(s1) and s0 < 0 and s1 < 0:
        return math.nan
    d = s1 - s0
    if d > 700:
        return 0.0
    return 1.0 / (1.0 + math.exp(d))


def pair_score(f0: ForcedScore, f1: ForcedScore) -> PairScore:
    """P(LF0) from two forced scores: normalised minimum probability (paper §2) and total."""
    return PairScore(
        lf0=f0,
        lf1=f1,
        p_lf0=min_prob_ratio(f0.min_prob, f1.min_prob),
        p_lf0_total=total_prob_ratio(f0.sum_logprob, f1.sum_logprob),
    )


def score_pair(
    model: Any, tokenizer: Any, prompt: str, lf0: str, lf1: str, *, fmt: str = DEFAULT_FORMAT, top_n: int = DEFAULT_TOP_N,
    words: OwnWords = NO_WORDS,
) -> PairScore:
    """P(LF0) for an ambiguous sentence: both LFs forced after the *same* prompt, in one batch.

    (The original scored LF0 and LF1 under different random prompts, docs/paper-notes.md §11; here the
    caller decides the prompt.)
    """
    f0, f1 = forced_score(model, tokenizer, prompt, [lf0, lf1], fmt=fmt, top_n=top_n, words=words)
    return pair_score(f0, f1)


def score_pairs(
    model: Any,
    tokenizer: Any,
    items: Sequence[tuple[str, str, str]],
    *,
    fmt: str = DEFAULT_FORMAT,
    top_n: int = DEFAULT_TOP_N,
    words: OwnWords = NO_WORDS,
) -> list[PairScore]:
    """:func:`score_pair` for many ``(prompt, lf0, lf1)`` items; items sharing a prompt share
    one forward pass (all their LFs are scored together)."""
    return pair_scores_by_prompt(
        items, lambda prompt, lfs: forced_score(model, tokenizer, prompt, lfs, fmt=fmt, top_n=top_n, words=words))


def pair_scores_by_prompt(items: Sequence[tuple[str, str, str]],
                          force: Callable[[str, list[str]], Sequence[ForcedScore]]) -> list[PairScore]:
    """The pair score of each ``(prompt, lf0, lf1)``, in order, forcing every distinct prompt once:
    ``force(prompt, [lf0, lf1, lf0', lf1', …])`` scores the LFs of all items sharing that prompt
    together (one forward pass or one set of prompt cells), and consecutive scores pair up."""
    by_prompt: dict[str, list[int]] = {}
    for i, (prompt, _lf0, _lf1) in enumerate(items):
        by_prompt.setdefault(prompt, []).append(i)
    out: list[PairScore | None] = [None] * len(items)
    for prompt, members in by_prompt.items():
        scores = force(prompt, [lf for i in members for lf in items[i][1:]])
        for k, i in enumerate(members):
            out[i] = pair_score(scores[2 * k], scores[2 * k + 1])
    return [p for p in out if p is not None]
