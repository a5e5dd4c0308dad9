"""The model's hidden states on a sentence, per layer, for the ambiguity probes (docs/paper-notes.md §22).

The sentence is placed in the zero-shot prompt of docs/paper-notes.md §10 as the test utterance
(:func:`probe_prompt`): for every sentence of one ambiguity type the *same* prompt — the
zero-shot prompt of the type's first ambiguous pair in pool order — with only the test sentence
swapped, so the context cannot tell an ambiguous sentence from an unambiguous one (both classes of
a type read the same examples; the types are balanced between the classes).

One forward pass with ``output_hidden_states=True`` gives ``L + 1`` states per token (the
embeddings, then each of the ``L`` blocks).  The **sentence's tokens** are those whose character
span (the fast tokenizer's offsets) overlaps the test sentence in the rendered prompt; two
poolings (:class:`Pooling`) of each layer's states over them:

* ``last`` — the state of the sentence's last token (it has read the whole sentence, and nothing
  of the ``Computer:`` cue yet);
* ``mean`` — the mean of the states over the sentence's tokens.

Only the transformers engine keeps the weights in this process and returns every layer's states.
llama-cpp-python's embeddings API (``Llama.embed``/``create_embedding``) returns the last layer
only (pooled or per token), so on llama.cpp, a remote or an API backend :func:`hidden_states`
raises :class:`~amp.detection.errors.ProbeError` naming the engine to use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from amp.data.generate import pairs
from amp.detection.errors import ProbeError
from amp.parser.core.errors import SearchCancelled
from amp.parser.engines import TRANSFORMERS
from amp.prompts import zero_shot_prompt

if TYPE_CHECKING:
    from amp.parser.models.loading import LoadedModel
    from amp.parser.parser import Parser

__all__ = ["Pooling", "SentenceStates", "hidden_states", "probe_prompt", "probe_weights", "sentence_states",
           "sentence_token_span", "state_count"]


class Pooling(StrEnum):
    """How a layer's states over the sentence's tokens become one vector (module docstring)."""

    LAST = "last"
    MEAN = "mean"


@dataclass(frozen=True)
class SentenceStates:
    """One sentence's pooled states: ``pooled[p]`` is an ``(L + 1, H)`` float32 array per
    :class:`Pooling` ``p`` (row 0 the embeddings); ``first``/``last`` the sentence's token
    positions in the prompt (inclusive), ``tokens`` the prompt's length in tokens."""

    pooled: dict[Pooling, np.ndarray]
    first: int
    last: int
    tokens: int

    @property
    def layers(self) -> int:
        """``L + 1``: how many states each pooling holds (embeddings and every block)."""
        return int(next(iter(self.pooled.values())).shape[0])


@lru_cache(maxsize=16)
def _type_prompt(type_id: str) -> Any:
    found = pairs(type_id)
    if not found:
        raise ProbeError(f"ambiguity type {type_id!r} has no ambiguous pair to build its zero-shot prompt from")
    return zero_shot_prompt(found[0])


def probe_prompt(sentence: str, type_id: str) -> str:
    """The prompt text the probes read ``sentence`` in: the zero-shot prompt of ``type_id``'s first
    pair with ``sentence`` as its test utterance (module docstring)."""
    return str(_type_prompt(type_id).with_test(sentence).render())


def sentence_token_span(offsets: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """The first and last token (inclusive) whose character span overlaps ``[start, end)``;
    special tokens (span ``(0, 0)``) never do.  :class:`ProbeError` when none does."""
    inside = [i for i, (a, b) in enumerate(offsets) if b > a and a < end and b > start]
    if not inside:
        raise ProbeError(f"no token of the prompt covers characters {start}–{end} (the test sentence)")
    return inside[0], inside[-1]


def sentence_states(model: Any, tokenizer: Any, prompt: str, sentence: str) -> SentenceStates:
    """Both poolings of every layer's states over ``sentence``'s tokens in ``prompt`` (its last
    occurrence there: the test utterance); one forward pass, no gradients."""
    import torch  # late: start-up cost (torch)

    start = prompt.rfind(sentence)
    if not sentence or start < 0:
        raise ProbeError(f"the sentence {sentence!r} is not in its prompt")
    try:
        enc = tokenizer(prompt, return_offsets_mapping=True)
    except (NotImplementedError, TypeError, ValueError) as exc:
        raise ProbeError(f"the probes need a fast tokenizer with character offsets ({exc})") from None
    offsets = [(int(a), int(b)) for a, b in enc["offset_mapping"]]
    first, last = sentence_token_span(offsets, start, start + len(sentence))
    device = next(model.parameters()).device
    ids = torch.tensor([list(enc.input_ids)], device=device)
    with torch.inference_mode():
        out = model(input_ids=ids, output_hidden_states=True, use_cache=False)
    states = torch.stack([h[0] for h in out.hidden_states]).float()  # (L + 1, T, H)
    pooled = {Pooling.LAST: states[:, last].cpu().numpy(),
              Pooling.MEAN: states[:, first:last + 1].mean(dim=1).cpu().numpy()}
    return SentenceStates(pooled=pooled, first=first, last=last, tokens=len(offsets))


def probe_weights(parser: Parser) -> LoadedModel:
    """The parser's loaded model whose hidden states the probes read (loading it now);
    :class:`ProbeError`, before any load, on a backend or engine that keeps no per-layer states here
    (module docstring)."""
    backend = parser.backend
    if backend.kind != "in-process":
        raise ProbeError(f"the probes read the model's hidden states, which the {backend.kind} backend does not "
                         "return (choose a local model)")
    engine = backend.capabilities().engine
    lm = parser.load() if engine == TRANSFORMERS else None
    if lm is None:
        raise ProbeError(f"the probes read every layer's hidden states, which the {engine} engine does not give "
                         f"(llama.cpp's embeddings API returns the last layer only): use the {TRANSFORMERS} engine "
                         f"(--engine {TRANSFORMERS}; in the app, Engine: {TRANSFORMERS})")
    return lm


def state_count(parser: Parser) -> int | None:
    """``L + 1`` of the parser's model from its config (loading it now), or None where the config does
    not say; :class:`ProbeError` as :func:`probe_weights`."""
    config = getattr(probe_weights(parser).model, "config", None)
    config = getattr(config, "text_config", None) or config
    layers = getattr(config, "num_hidden_layers", None)
    return int(layers) + 1 if isinstance(layers, int) else None


def hidden_states(
    parser: Parser, sentences: Sequence[tuple[str, str]], *,
    progress: Callable[[int, int], None] | None = None, cancelled: Callable[[], bool] | None = None,
) -> list[SentenceStates]:
    """:func:`sentence_states` of every ``(sentence, type)`` in :func:`probe_prompt`, in order.

    ``progress(done, total)`` after each sentence; ``cancelled()`` is asked before each and stops
    the run with :class:`~amp.parser.core.errors.SearchCancelled`."""
    lm = probe_weights(parser)
    out: list[SentenceStates] = []
    total = len(sentences)
    if progress is not None:
        progress(0, total)
    for i, (sentence, type_id) in enumerate(sentences):
        if cancelled is not None and cancelled():
            raise SearchCancelled("probe states cancelled")
        with lm.lock:
            out.append(sentence_states(lm.model, lm.tokenizer, probe_prompt(sentence, type_id), sentence))
        if progress is not None:
            progress(i + 1, total)
    return out
