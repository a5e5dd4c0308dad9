"""Grammar-constrained sampling: ``n`` LF strings after a prompt (the raw material of
:func:`amp.evaluation.interpretations.sample_interpretations`).

``model.generate`` with ``do_sample=True``, ``num_return_sequences=n``, no top-k/top-p
truncation, and the same :class:`~amp.parser.search.processors.GrammarLogitsProcessor` and
:class:`~amp.parser.search.processors.GrammarStoppingCriteria` as beam search, after
``torch.manual_seed(seed)``: the same seed, model and settings give the same samples.
A sample that did not finish or does not parse is ``None``.

Like the search, sampling stops at the next step once the check of
:func:`amp.parser.search.cancel.cancel_scope` turns true (:class:`SearchCancelled`): a service
client that went away stops it, and the service's step gate takes turns there
(:mod:`amp.parser.search.fair_share`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from transformers import LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.parser.core import limits
from amp.parser.core.errors import SearchCancelled
from amp.parser.search.cancel import current_check
from amp.parser.search.decode import default_max_new_tokens, eos_ids, make_beam
from amp.parser.search.processors import GrammarLogitsProcessor, GrammarStoppingCriteria
from amp.parser.search.settings import DEFAULT_SEARCH
from amp.parser.search.vocab import check_context, encode_prompt, get_masker


class StepCheck(StoppingCriteria):
    """The cancel check of :func:`~amp.parser.search.cancel.cancel_scope`, called by ``generate``
    after every step: :class:`SearchCancelled` once it turns true (it never stops a sequence)."""

    def __init__(self, check: Callable[[], bool]) -> None:
        self.check = check

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        if self.check():
            raise SearchCancelled("the sampling was cancelled")
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


def sample_texts(model: Any, tokenizer: Any, prompt: str, *, n: int, temperature: float, seed: int,
                 fmt: str = DEFAULT_FORMAT, max_new_tokens: int | None = None,
                 words: OwnWords = NO_WORDS) -> list[str | None]:
    """``n`` grammar-constrained samples at ``temperature`` after ``prompt`` (None = unfinished);
    ``words``: a teacher's own words extending the grammar (:mod:`amp.logic.own_words`)."""
    masker = get_masker(tokenizer, fmt, words=words)
    vocab = masker.vocab
    ids = encode_prompt(tokenizer, prompt)
    eos = eos_ids(model, tokenizer)
    pad_id = vocab.pad_id if vocab.pad_id is not None else (eos[0] if eos else 0)
    budget = max_new_tokens or default_max_new_tokens(tokenizer, prompt)
    limits.check_prompt_tokens([len(ids)])
    check_context(model, len(ids), budget)
    processor = GrammarLogitsProcessor(masker, len(ids), eos, batch_size=1)
    stops: list[StoppingCriteria] = [GrammarStoppingCriteria(processor)]
    check = current_check()
    if check is not None:
        if check():
            raise SearchCancelled("the sampling was cancelled")
        stops.append(StepCheck(check))
    device = getattr(model, "device", torch.device("cpu"))
    torch.manual_seed(seed)
    with torch.inference_mode():
        out = model.generate(
            input_ids=torch.tensor([ids], dtype=torch.long, device=device),
            attention_mask=torch.ones((1, len(ids)), dtype=torch.long, device=device),
            do_sample=True, num_beams=1, num_return_sequences=n, temperature=float(temperature),
            top_k=0, top_p=1.0,
            max_new_tokens=budget,
            logits_processor=LogitsProcessorList([processor]), stopping_criteria=StoppingCriteriaList(stops),
            pad_token_id=pad_id, eos_token_id=eos or None,
        )
    texts: list[str | None] = []
    for row in out[:, len(ids):].tolist():
        beam = make_beam(vocab, masker, row, processor.tracker, 0, constrained=True, fmt=fmt,
                         alpha=DEFAULT_SEARCH.alpha)  # (only the text is kept; the score is unused)
        texts.append(beam.text if beam.finished and beam.parses else None)
    return texts
