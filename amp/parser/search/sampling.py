"""Grammar-constrained sampling: ``n`` LF strings after a prompt (the raw material of
:func:`amp.evaluation.interpretations.sample_interpretations`).

``model.generate`` with ``do_sample=True``, ``num_return_sequences=n``, no top-k/top-p
truncation, and the same :class:`~amp.parser.search.processors.GrammarLogitsProcessor` and
:class:`~amp.parser.search.processors.GrammarStoppingCriteria` as beam search, after
``torch.manual_seed(seed)``: the same seed, model and settings give the same samples.
A sample that did not finish or does not parse is ``None``.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LogitsProcessorList, StoppingCriteriaList

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.parser.search.decode import default_max_new_tokens, eos_ids, make_beam
from amp.parser.search.processors import GrammarLogitsProcessor, GrammarStoppingCriteria
from amp.parser.search.settings import DEFAULT_SEARCH
from amp.parser.search.vocab import encode_prompt, get_masker


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
    processor = GrammarLogitsProcessor(masker, len(ids), eos, batch_size=1)
    stop = GrammarStoppingCriteria(processor)
    device = getattr(model, "device", torch.device("cpu"))
    torch.manual_seed(seed)
    with torch.inference_mode():
        out = model.generate(
            input_ids=torch.tensor([ids], dtype=torch.long, device=device),
            attention_mask=torch.ones((1, len(ids)), dtype=torch.long, device=device),
            do_sample=True, num_beams=1, num_return_sequences=n, temperature=float(temperature),
            top_k=0, top_p=1.0,
            max_new_tokens=max_new_tokens or default_max_new_tokens(tokenizer, prompt),
            logits_processor=LogitsProcessorList([processor]), stopping_criteria=StoppingCriteriaList([stop]),
            pad_token_id=pad_id, eos_token_id=eos or None,
        )
    texts: list[str | None] = []
    for row in out[:, len(ids):].tolist():
        beam = make_beam(vocab, masker, row, processor.tracker, 0, constrained=True, fmt=fmt,
                         alpha=DEFAULT_SEARCH.alpha)  # (only the text is kept; the score is unused)
        texts.append(beam.text if beam.finished and beam.parses else None)
    return texts
