"""Grammar-constrained beam search (docs/paper-notes.md §12; docs/decoding-notes.md §0 recommendation (a)).

``model.generate`` runs plain beam search (``num_beams=k``, ``num_return_sequences=k``,
``length_penalty=0.0`` so the search keeps *summed* raw log-probs, ``early_stopping=True``,
``do_sample=False``) with :class:`~amp.parser.search.processors.GrammarLogitsProcessor` and
:class:`~amp.parser.search.processors.GrammarStoppingCriteria`.  transformers 5 moved
``constraints=``/``force_words_ids=``/group beam search to Hub code, so they are never used
(docs/decoding-notes.md §1).  The returned beams are then re-ranked by the GNMT length penalty the
original used (α = 0.7, docs/paper-notes.md §12): ``logprob / (((5 + len) ** α) / (6 ** α))``.  (The
original applied GNMT inside its search; here it only orders the k beams that the summed-score
search kept, which can differ when long and short LFs compete for the last beam slots.)

By default (``AMP_SEARCH=fast``, :func:`~amp.parser.search.settings.search_algorithm`) the constrained search is not run by
``generate`` but by :func:`amp.parser.search.fastsearch.fast_beam_search`: the same search and
bookkeeping (its beams and sums equal ``generate``'s, tested), fed ahead over grammar-forced text,
with prompts leaving the batch once their result is fixed and a cancel check every step.
``generate`` remains the reference (``AMP_SEARCH=generate``), and the path for unconstrained
search and for models whose attention layout the fast search cannot mask.

Beams cut off by ``max_new_tokens`` come back from transformers looking finished (docs/decoding-notes.md
§5 item 2); every beam is therefore re-checked with the automaton and with lark and flagged
``finished``/``parses``; unfinished beams are ranked after all finished ones.

Unconstrained search (``constrained=False``) is plain beam search that stops each beam at its
first newline-carrying token (a text criterion, not EOS); its beams may not parse (flagged).

The prompts run **once** (:mod:`amp.parser.search.prefix`): ``generate`` starts from their KV cache
(repeated per beam) instead of re-running the prompt for every beam, and the forced pass that
gives the top beams their per-token detail — and, in :func:`parse_and_score_batch`, the LF0/LF1
scores of P(LF0) — reuses the same cache.

Results are deterministic for a given model, tokenizer, dtype, device and settings (beams,
alpha, constrained, max_new_tokens, fmt); ``top_n``/``steps_for`` only affect the per-token
detail.  Batched prompts are left-padded; numerically they may differ from single-prompt runs
by float rounding.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Unpack

import torch
from lark.exceptions import LarkError
from transformers import LogitsProcessorList, StoppingCriteriaList

from amp.logic.grammar import lark_parser
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.parser.core import limits
from amp.parser.core.results import Beam, ForcedScore, PairScore, ParseResult, TokenStep
from amp.parser.search.fastsearch import SearchStats, fast_beam_search, supported
from amp.parser.search.prefix import cache_kwarg, prefill, prefixed_logprobs, reorder_only_after
from amp.parser.search.processors import (
    GrammarLogitsProcessor,
    GrammarStoppingCriteria,
    NewlineStoppingCriteria,
    RecordingProcessor,
    ScoreTracker,
)
from amp.parser.search.scoring import check_lf, forced_from_logprobs, forced_score_ids, pair_score
from amp.parser.search.settings import (
    DEFAULT_TOP_N,
    Ask,
    SearchAlgorithm,
    SearchKeywords,
    SearchSettings,
    search_algorithm,
)
from amp.parser.search.vocab import Vocabulary, check_context, encode_output, encode_prompt, frame_lf, get_masker

#: Bounds of the default generation budget (tokens).
MIN_NEW_TOKENS = 64
MAX_NEW_TOKENS = limits.DERIVED_MAX_NEW_TOKENS

_EXAMPLE_LF = re.compile(r"^Computer: ?(\S.*)$", re.MULTILINE)
#: ``(lf0, lf1, ids0, ids1)``: an LF pair to score and its output token ids.
_Pair = tuple[str, str, list[int], list[int]]
#: Sums below this are filler rows (transformers pads beam scores with -1e9; masked rows are -inf).
_FILLER = -1e8

def gnmt_score(logprob: float, length: int, alpha: float) -> float:
    """GNMT length-penalised score (docs/paper-notes.md §12): ``logprob / ((5+len)^α / 6^α)``."""
    if alpha == 0 or length <= 0:
        return logprob
    return logprob / (((5 + length) ** alpha) / (6**alpha))


def default_max_new_tokens(tokenizer: Any, prompt: str) -> int:
    """3 × the token count of the longest example LF in the prompt, within [64, 256].

    Example LFs are the ``Computer: <lf>`` lines of the prompt (docs/paper-notes.md §10 layout), encoded
    as the grammar frames them.  A prompt without examples gets the maximum.
    """
    lfs = _EXAMPLE_LF.findall(prompt)
    if not lfs:
        return MAX_NEW_TOKENS
    longest = max(len(tokenizer(frame_lf(lf.rstrip()), add_special_tokens=False).input_ids) for lf in lfs)
    return max(MIN_NEW_TOKENS, min(MAX_NEW_TOKENS, 3 * longest))


def eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """The end-of-sequence ids of ``model``/``tokenizer`` (generation config and tokenizer), sorted."""
    ids: list[int] = []
    cfg_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (cfg_eos, getattr(tokenizer, "eos_token_id", None)):
        if isinstance(value, int):
            ids.append(value)
        elif isinstance(value, (list, tuple)):
            ids.extend(int(v) for v in value)
    return sorted(set(ids))


def _parses(fmt: str, text: str, words: OwnWords = NO_WORDS) -> bool:
    try:
        lark_parser(fmt, "decoding", words).parse(frame_lf(text))  # type: ignore[arg-type]
    except LarkError:
        return False
    return True


def _cut(vocab: Vocabulary, masker: Any, gen: list[int], *, constrained: bool) -> tuple[list[int], bool]:
    """Generated ids up to the end of the LF; (ids, finished).

    Constrained: up to the grammar's final newline (the automaton; a dead state is unfinished).
    Unconstrained: up to the first token holding a newline.
    """
    automaton = masker.automaton if constrained else None
    state = automaton.initial if automaton is not None else None
    out: list[int] = []
    for tok in gen:
        text = vocab.token_text(tok)
        if text is None:
            break
        out.append(tok)
        if automaton is None:
            if "\n" in text:
                return out, True
            continue
        state = automaton.advance_token(state, text)
        if not state:
            return out, False
        if automaton.is_final(state):
            return out, True
    return out, False


def make_beam(
    vocab: Vocabulary,
    masker: Any,
    gen: list[int],
    tracker: ScoreTracker,
    item: int,
    *,
    constrained: bool,
    fmt: str,
    alpha: float,
) -> Beam:
    """The :class:`Beam` of one generated id sequence: cut at the grammar's end, scored, flagged."""
    ids, finished = _cut(vocab, masker, gen, constrained=constrained)
    raw_text = vocab.text_of(ids)
    if finished:
        # Drop layout after the end (a final "\n\n" token, or text after an unconstrained newline).
        raw_text = raw_text[: raw_text.index("\n") + 1]
    text = raw_text.removeprefix(" ")
    if finished and text.endswith("\n"):
        text = text[:-1]
    recorded = tracker.logprob(tuple(ids), item) if ids else None
    logprob = recorded if recorded is not None and recorded > _FILLER else -math.inf
    parses = finished and _parses(fmt, text, getattr(masker.automaton, "own_words", NO_WORDS))
    return Beam(
        rank=0,
        text=text,
        raw_text=raw_text,
        token_ids=tuple(ids),
        tokens=tuple(vocab.token_display(i) for i in ids),
        logprob=logprob,
        score=gnmt_score(logprob, len(ids), alpha),
        finished=finished,
        parses=parses,
    )


def _rank(beams: list[Beam]) -> tuple[Beam, ...]:
    order = sorted(range(len(beams)), key=lambda i: (not beams[i].finished, -beams[i].score, i))
    return tuple(replace(beams[i], rank=r) for r, i in enumerate(order))


class DecodeOptions(SearchKeywords, total=False):
    """The keywords of :func:`parse_and_score_batch` besides its settings record, for the wrappers."""

    fmt: str
    words: OwnWords
    top_n: int
    steps_for: int
    algorithm: str | None
    cancel: Any
    stats: SearchStats | None


def beam_search_batch(model: Any, tokenizer: Any, prompts: Sequence[str], settings: SearchSettings | None = None,
                      **options: Unpack[DecodeOptions]) -> list[ParseResult]:
    """Beam search for several prompts in one search (left padding): :func:`parse_and_score_batch`
    without LF pairs, the same settings and options."""
    items: list[Ask] = [(p, None, None) for p in prompts]
    return [parse for parse, _pair in parse_and_score_batch(model, tokenizer, items, settings, **options)]


def parse_and_score_batch(
    model: Any,
    tokenizer: Any,
    items: Sequence[Ask],
    settings: SearchSettings | None = None,
    *,
    fmt: str = DEFAULT_FORMAT,
    words: OwnWords = NO_WORDS,
    top_n: int = DEFAULT_TOP_N,
    steps_for: int = 1,
    algorithm: str | None = None,
    cancel: Any = None,
    stats: SearchStats | None = None,
    **changes: Unpack[SearchKeywords],
) -> list[tuple[ParseResult, PairScore | None]]:
    """Beam search after each ``(prompt, lf0, lf1)`` and, where both LFs are given, their P(LF0).

    ``settings`` (:class:`SearchSettings`, the defaults when None; keywords override its fields)
    are the search's beams, α, grammar and budget; ``words`` a teacher's own words that extend the
    decoding grammar (:mod:`amp.logic.own_words`); ``algorithm`` which constrained search runs
    (:func:`~amp.parser.search.settings.search_algorithm`).  ``steps_for``: how many top-ranked beams per prompt get per-token
    ``steps`` (probabilities and top-``top_n`` alternatives, 0 = none).

    One prompt pass for the whole batch (:func:`amp.parser.search.prefix.prefill`); the search starts
    from it, and one forced pass over it scores the top beams' tokens and the LF pairs together.
    The pairs are those :func:`amp.parser.search.scoring.score_pair` returns, to float rounding.  An LF
    outside the grammar raises :class:`DecodingError` before anything is decoded, and prompts over
    :data:`~amp.parser.core.limits.MAX_CALL_PROMPT_TOKENS` together raise
    :class:`~amp.parser.core.errors.RequestTooLarge`
    before the first forward pass.  The search's cost is bounded before this is called: one
    prompt's by ``settings`` (:class:`SearchSettings`), the call's prompts × that by the caller's
    boundary (:class:`~amp.parser.Parser`'s ``parse_many``/``parse_and_score_many``).
    """
    settings = SearchSettings.of(settings, **changes)
    if not items:
        return []
    masker = get_masker(tokenizer, fmt, words=words)
    prompts = [prompt for prompt, _a, _b in items]
    pairs = [_encoded_pair(tokenizer, masker, lf0, lf1) for _prompt, lf0, lf1 in items]
    prompt_ids = [encode_prompt(tokenizer, p) for p in prompts]
    limits.check_prompt_tokens(len(p) for p in prompt_ids)
    eos = eos_ids(model, tokenizer)
    pad_id = masker.vocab.pad_id if masker.vocab.pad_id is not None else (eos[0] if eos else 0)
    width = max(len(p) for p in prompt_ids)
    budget = settings.max_new_tokens or max(default_max_new_tokens(tokenizer, p) for p in prompts)
    check_context(model, width, budget)
    algorithm = search_algorithm(algorithm)
    beams = settings.beams
    if settings.constrained and algorithm is not SearchAlgorithm.GENERATE and supported(model):
        prefix = prefill(model, prompt_ids, pad_id, full_cache=True)
        processor = GrammarLogitsProcessor(masker, width, eos, batch_size=len(prompts))
        found = fast_beam_search(model, prefix, processor, beams=beams, budget=budget, eos=eos, pad_id=pad_id,
                                 jump=algorithm is SearchAlgorithm.FAST, cancel=cancel, stats=stats)
        sequences = [list(seq) for per_prompt in found for seq in per_prompt]
    else:
        prefix = prefill(model, prompt_ids, pad_id)
        processor, sequences = _generate(model, masker, prefix, width, eos, pad_id, beams=beams, budget=budget,
                                         constrained=settings.constrained, batch=len(prompts))
    ranked = [_ranked_beams(masker, processor, sequences, b, settings, fmt) for b in range(len(prompts))]
    record = {**settings.as_dict(), "max_new_tokens": budget, "top_n": top_n, "fmt": fmt}
    return _finish(model, masker, prefix, ranked, pairs, record, prompt_ids, top_n=top_n, steps_for=steps_for)


def _encoded_pair(tokenizer: Any, masker: Any, lf0: str | None, lf1: str | None) -> _Pair | None:
    """``(lf0, lf1, ids0, ids1)`` of an ask with both LFs (checked against the grammar), else None."""
    if lf0 is None or lf1 is None:
        return None
    ids0, ids1 = (encode_output(tokenizer, check_lf(masker, lf)) for lf in (lf0, lf1))
    return lf0, lf1, ids0, ids1


def _ranked_beams(masker: Any, processor: Any, sequences: list[list[int]], b: int, settings: SearchSettings,
                  fmt: str) -> list[Beam]:
    """The ranked beams of prompt ``b`` from the searched sequences (``settings.beams`` per prompt)."""
    beams = settings.beams
    made = [
        make_beam(masker.vocab, masker, sequences[r], processor.tracker, b, constrained=settings.constrained,
                  fmt=fmt, alpha=settings.alpha)
        for r in range(b * beams, (b + 1) * beams)
    ]
    return list(_rank(made))


def _generate(model: Any, masker: Any, prefix: Any, width: int, eos: list[int], pad_id: int, *, beams: int,
              budget: int, constrained: bool, batch: int) -> tuple[Any, list[list[int]]]:
    """The reference search: transformers' ``generate`` with the grammar processor."""
    vocab = masker.vocab
    processor: GrammarLogitsProcessor | RecordingProcessor
    stop: GrammarStoppingCriteria | NewlineStoppingCriteria
    if constrained:
        processor = GrammarLogitsProcessor(masker, width, eos, batch_size=batch)
        stop = GrammarStoppingCriteria(processor)
    else:
        recorder = RecordingProcessor(width, batch_size=batch)
        processor, stop = recorder, NewlineStoppingCriteria(vocab, recorder)
    cache = prefix.cache_for([b for b in range(prefix.size) for _ in range(beams)])
    if cache is not None:
        reorder_only_after(cache, prefix.width - 1)
    with torch.inference_mode():
        out = model.generate(
            input_ids=prefix.ids,
            attention_mask=prefix.mask,
            num_beams=beams,
            num_return_sequences=beams,
            length_penalty=0.0,
            early_stopping=True,
            do_sample=False,
            max_new_tokens=budget,
            logits_processor=LogitsProcessorList([processor]),
            stopping_criteria=StoppingCriteriaList([stop]),
            return_dict_in_generate=True,
            output_scores=False,
            pad_token_id=pad_id,
            eos_token_id=eos or None,
            **({cache_kwarg(model): cache} if cache is not None else {}),
        )
    sequences = out.sequences[:, width:].tolist()
    del out, cache
    return processor, sequences


def _finish(model: Any, masker: Any, prefix: Any, ranked: list[list[Beam]], pairs: list[_Pair | None],
            settings: dict[str, Any], prompt_ids: list[list[int]], *, top_n: int,
            steps_for: int) -> list[tuple[ParseResult, PairScore | None]]:
    """One forced pass for the top beams' steps and the LF pairs; the results with ``settings`` recorded."""
    requests: list[tuple[int, Sequence[int]]] = []
    owners: list[tuple[str, int, int]] = []  # ("beam", prompt, rank) or ("lf0"/"lf1", prompt, 0)
    for b, beams in enumerate(ranked):
        for i, beam in enumerate(beams[: max(0, steps_for)]):
            if beam.token_ids:
                requests.append((b, beam.token_ids))
                owners.append(("beam", b, i))
        pair = pairs[b]
        if pair is not None:
            requests += [(b, pair[2]), (b, pair[3])]
            owners += [("lf0", b, 0), ("lf1", b, 0)]

    def reduce(k: int, lp: torch.Tensor) -> ForcedScore:
        """Request ``k``'s forced score, made while its chunk's rows are alive (one chunk at a time)."""
        kind, b, _i = owners[k]
        ids = requests[k][1]
        if kind == "beam":
            return forced_from_logprobs(masker, masker.vocab.text_of(list(ids)), ids, lp, top_n, False,
                                        settings["constrained"])
        lfs = pairs[b]
        assert lfs is not None
        return forced_from_logprobs(masker, lfs[0] if kind == "lf0" else lfs[1], ids, lp, top_n, True)

    forced: dict[tuple[str, int], ForcedScore] = {}
    for (kind, b, i), fs in zip(owners, prefixed_logprobs(model, prefix, requests, reduce), strict=True):
        if kind == "beam":
            ranked[b][i] = replace(ranked[b][i], steps=fs.steps)
        else:
            forced[(kind, b)] = fs
    return [
        (ParseResult(beams=tuple(beams), constrained=settings["constrained"], fmt=settings["fmt"],
                     settings=dict(settings), prompt_tokens=len(prompt_ids[b])),
         pair_score(forced[("lf0", b)], forced[("lf1", b)]) if pairs[b] is not None else None)
        for b, beams in enumerate(ranked)
    ]


def beam_search(model: Any, tokenizer: Any, prompt: str, settings: SearchSettings | None = None,
                **options: Unpack[DecodeOptions]) -> ParseResult:
    """Grammar-constrained (or plain) beam search for one prompt; returns all ``beams`` beams.

    The prompt should end with ``Computer:`` (docs/paper-notes.md §10); the grammar's leading space is
    the first generated character.  See the module docstring for scores and flags, and
    :func:`parse_and_score_batch` for the settings and options.
    """
    return beam_search_batch(model, tokenizer, [prompt], settings, **options)[0]


def beam_steps(
    model: Any,
    tokenizer: Any,
    prompt: str,
    beam: Beam,
    fmt: str = DEFAULT_FORMAT,
    *,
    top_n: int = DEFAULT_TOP_N,
    constrained: bool = True,
    words: OwnWords = NO_WORDS,
) -> tuple[TokenStep, ...]:
    """Per-token probabilities and alternatives of a beam (a forced pass over its ids).

    ``constrained`` must match the search that produced the beam (end-token merging).
    """
    if not beam.token_ids:
        return ()
    return forced_score_ids(
        model, tokenizer, prompt, [beam.token_ids], fmt=fmt, top_n=top_n, merge_end=constrained, words=words
    )[0].steps


def canonical_ids(tokenizer: Any, lf: str) -> list[int]:
    """The canonical token ids of an LF as generation would produce it (``" " + lf + "\\n"``)."""
    return encode_output(tokenizer, frame_lf(lf))
