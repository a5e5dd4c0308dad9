"""The prompt pass, run once per prompt and shared by beam search and forced scoring.

A few-shot AmP prompt is ~650 tokens and the LFs after it ~40, so on a CPU the prompt pass is
what a parse or a forced score mostly costs — and it used to run several times per item:
``generate`` repeats the prompt once per beam before its prefill, the per-token detail of the
top beam re-ran it, and so did the forced scoring of LF0/LF1.  Here it runs **once**:

* :func:`prefill` runs ``B`` left-padded prompts *without their last token* through the model
  (``logits_to_keep=1``: no prompt logits over the vocabulary are computed) and keeps the KV
  cache — a :class:`PromptPrefix`.  Position ids are ``cumsum(mask) - 1``, as ``generate``
  computes them, so a search that starts from the prefix is the search ``generate`` would
  have run (to float rounding).
* :meth:`PromptPrefix.cache_for` gives a cache whose rows are chosen prompts (repeated as
  needed: ``k`` rows per prompt for beam search, one per LF for scoring) without touching the
  prefix, so one prefix serves any number of later passes.
* :func:`reorder_only_after` stops beam search from copying the shared prompt part of the cache
  at every step (only the generated tokens are reordered).
* :func:`prefixed_logprobs` scores token sequences after chosen prompts: the input of each row
  is the prompt's last token followed by the sequence minus its last token, so row position
  ``j`` predicts token ``j`` of the sequence.  Rows are right-padded (causal attention never
  looks ahead) and chunked so one chunk's float32 logits stay under ~768 MB.  Each chunk is a
  step of the scoring: the check of :func:`amp.parser.search.cancel.cancel_scope` is asked before
  it (:class:`SearchCancelled` once it turns true), so a service client that went away stops a
  forced scoring there and the service's step gate takes turns there (issue #44).  Each request's
  full-vocabulary rows are handed to the caller's ``reduce`` (e.g. a forced score) as soon as its
  chunk is computed and dropped before the next chunk: **one chunk's rows at a time**, whatever
  the number or length of the requests (at the default model's 262,144-entry vocabulary, a
  forced pass at the service's cost bound kept ~34 GB of rows before; issue #44).

The last prompt token is left out of the prefix because ``generate`` needs at least one
uncached input token, and because scoring then gets the first LF token's distribution from
the same batched pass as the others.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import torch

from amp.parser.core.errors import DecodingError, SearchCancelled
from amp.parser.models.quantize import output_rows
from amp.parser.search.cancel import current_check

#: Upper bound on the float32 logits one chunk of a batched forced pass may hold; also the most
#: full-vocabulary rows :func:`prefixed_logprobs` returns unreduced.
CHUNK_BYTES = 768 * 2**20

#: What a caller keeps of one request's ``(len(seq), V)`` log-probs (see :func:`prefixed_logprobs`).
R = TypeVar("R")

#: One scoring request: a prompt row of the prefix and the token sequence scored after it.
Request = tuple[int, Sequence[int]]

#: transformers 5.24 renamed the forward argument ``past_key_values`` to ``cache`` (the old
#: name still works with a deprecation warning).
_CACHE_KWARG = "cache"


def device_of(model: Any) -> torch.device:
    dev = getattr(model, "device", None)
    return dev if isinstance(dev, torch.device) else next(model.parameters()).device


def _params(model: Any) -> set[str]:
    try:
        return set(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        return set()


def cache_kwarg(model: Any) -> str:
    """The name under which ``model.forward`` / ``generate`` take a KV cache."""
    return _CACHE_KWARG if _CACHE_KWARG in _params(model) else "past_key_values"


def forward(model: Any, **inputs: Any) -> Any:
    """``model(**inputs, use_cache=True)``, passing ``cache`` / ``logits_to_keep`` only where accepted."""
    params = _params(model)
    if "cache" in inputs and "cache" not in params:
        inputs["past_key_values"] = inputs.pop("cache")
    if "logits_to_keep" in inputs and "logits_to_keep" not in params:
        inputs.pop("logits_to_keep")
    if "position_ids" in inputs and params and "position_ids" not in params:
        inputs.pop("position_ids")
    return model(**inputs, use_cache=True)


def output_cache(out: Any) -> Any:
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def left_pad(prompt_ids: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids, mask)`` of shape ``(B, longest)`` with the prompts right-aligned."""
    width = max(len(p) for p in prompt_ids)
    ids = torch.full((len(prompt_ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompt_ids), width), dtype=torch.long)
    for r, p in enumerate(prompt_ids):
        ids[r, width - len(p) :] = torch.tensor(list(p), dtype=torch.long)
        mask[r, width - len(p) :] = 1
    return ids, mask


def positions(mask: torch.Tensor) -> torch.Tensor:
    """Position ids of a left-padded batch, as ``generate`` computes them (pads at 0)."""
    return (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)


@dataclass
class PromptPrefix:
    """``B`` left-padded prompts and the KV cache of all their tokens but the last.

    ``cache`` is None when the longest prompt has a single token (nothing to cache).
    """

    ids: torch.Tensor  # (B, W) whole prompts, left-padded
    mask: torch.Tensor  # (B, W)
    lengths: tuple[int, ...]
    cache: Any | None

    @property
    def size(self) -> int:
        return int(self.ids.shape[0])

    @property
    def width(self) -> int:
        return int(self.ids.shape[1])

    def cache_for(self, rows: Sequence[int]) -> Any | None:
        """A new cache holding prompt ``rows[i]`` in batch row ``i`` (repeats allowed).

        The prefix itself is left as it was (cache layers grow by concatenation and rows are
        selected by indexing, so new tensors are made, never written into).
        """
        if self.cache is None:
            return None
        cache = copy.copy(self.cache)
        cache.layers = [copy.copy(layer) for layer in self.cache.layers]
        index = torch.tensor(list(rows), dtype=torch.long, device=self.ids.device)
        if list(rows) != list(range(self.size)):
            for layer in cache.layers:
                if getattr(layer, "is_initialized", False) and layer.keys is not None and layer.keys.numel():
                    layer.keys = layer.keys.index_select(0, index.to(layer.keys.device))
                    layer.values = layer.values.index_select(0, index.to(layer.values.device))
        return cache


def reorder_only_after(cache: Any, shared: int) -> Any:
    """Make beam search's per-step cache reordering copy only what follows the shared prompt.

    ``generate`` reorders the whole KV cache along the batch at every step (``index_select``
    on every layer: a full copy).  The beams of one prompt only ever permute among themselves
    and start from identical copies of the prompt's cache, so the first ``shared`` cached
    tokens are equal across the rows being permuted and need not move: only the tokens added
    since are reordered, in place (they live in tensors the search itself created).  Sliding-
    window layers count what they have seen (``cumulative_length``), so their shorter tensors are
    handled too.  Caches with other layer types are left as they are.  Returns ``cache``.
    """
    from transformers.cache_utils import DynamicLayer  # late: start-up cost (transformers)

    layers = getattr(cache, "layers", None)
    if not layers or not all(isinstance(layer, DynamicLayer) for layer in layers):
        return cache

    def reorder(beam_idx: torch.LongTensor) -> None:
        for layer in layers:
            keys = layer.keys if layer.is_initialized else None
            if keys is None or keys.numel() == 0:
                continue
            seen = getattr(layer, "cumulative_length", None)
            total = seen if isinstance(seen, int) else int(keys.shape[-2])
            n = min(max(total - shared, 0), int(keys.shape[-2]))
            if n:
                idx = beam_idx.to(keys.device)
                layer.keys[..., -n:, :] = layer.keys[..., -n:, :].index_select(0, idx)
                layer.values[..., -n:, :] = layer.values[..., -n:, :].index_select(0, idx)

    cache.reorder_cache = reorder
    return cache


@torch.inference_mode()
def prefill(model: Any, prompt_ids: Sequence[Sequence[int]], pad_id: int, *, full_cache: bool = False) -> PromptPrefix:
    """Run the prompts minus their last token once; see the module docstring.

    ``full_cache``: keep every token in every layer (no sliding-window truncation), as the fast
    search (:mod:`amp.parser.search.fastsearch`) needs; masks still give sliding layers their window.
    """
    if not prompt_ids or any(len(p) == 0 for p in prompt_ids):
        raise DecodingError("every prompt needs at least one token")
    device = device_of(model)
    ids, mask = left_pad(prompt_ids, pad_id)
    ids, mask = ids.to(device), mask.to(device)
    cache = None
    if ids.shape[1] > 1:
        head_mask = mask[:, :-1]
        inputs: dict[str, Any] = {"input_ids": ids[:, :-1], "logits_to_keep": 1}
        if full_cache:
            from transformers import DynamicCache  # late: start-up cost (transformers)

            inputs["cache"] = DynamicCache()
        if bool((head_mask == 0).any()):
            inputs["attention_mask"] = head_mask
            inputs["position_ids"] = positions(head_mask)
        cache = output_cache(forward(model, **inputs))
    return PromptPrefix(ids=ids, mask=mask, lengths=tuple(len(p) for p in prompt_ids), cache=cache)


@overload
def prefixed_logprobs(model: Any, prefix: PromptPrefix, requests: Sequence[Request]) -> list[torch.Tensor]: ...


@overload
def prefixed_logprobs(
    model: Any, prefix: PromptPrefix, requests: Sequence[Request], reduce: Callable[[int, torch.Tensor], R]
) -> list[R]: ...


@torch.inference_mode()
def prefixed_logprobs(
    model: Any,
    prefix: PromptPrefix,
    requests: Sequence[Request],
    reduce: Callable[[int, torch.Tensor], Any] | None = None,
) -> list[Any]:
    """For each ``(prompt row, token sequence)``, ``reduce(index, logprobs)`` of its ``(len(seq), V)``
    float32 log-prob tensor, in request order.

    Row ``j`` of ``logprobs`` holds the log-probs of the vocabulary at the position of token ``j``.
    ``reduce`` runs inside the chunk loop, as soon as the request's chunk is computed, and the
    tensor is dropped when it returns: at any ``reduce`` call only the current chunk's logits and
    the current request's rows are alive (**one chunk's rows at a time**, ~``CHUNK_BYTES``), so the
    memory of a forced pass does not grow with the number or the length of its requests — as long
    as ``reduce`` keeps only what it computes (a :class:`~amp.parser.core.results.ForcedScore`,
    token steps), not the tensor.

    Without ``reduce`` the tensors themselves are returned (tests and small checks): that keeps
    every request's rows at once, so it is refused (:class:`DecodingError`) beyond ``CHUNK_BYTES``.
    """
    if any(len(s) == 0 for _row, s in requests):
        raise DecodingError("cannot score an empty token sequence")
    if any(not 0 <= row < prefix.size for row, _s in requests):
        raise DecodingError("a scoring request names a prompt the prefix does not hold")
    if not requests:
        return []
    vocab = output_rows(model)
    if reduce is None:
        held = sum(len(s) for _r, s in requests) * vocab * 4
        if held > CHUNK_BYTES:
            raise DecodingError(
                f"unreduced log-probs of {len(requests)} sequence(s) would hold {held} bytes, over the "
                f"{CHUNK_BYTES}-byte bound of one chunk: pass a reduce function"
            )
    keep: Callable[[int, torch.Tensor], Any] = reduce if reduce is not None else (lambda _i, lp: lp)
    longest = max(len(s) for _r, s in requests)
    chunk = max(1, CHUNK_BYTES // max(1, longest * vocab * 4))
    results: list[Any] = []
    check = current_check()
    for start in range(0, len(requests), chunk):
        if check is not None and check():
            raise SearchCancelled("the scoring was cancelled")
        members = range(start, min(start + chunk, len(requests)))
        logits = _chunk_logits(model, prefix, [requests[i] for i in members])
        for r, i in enumerate(members):
            results.append(keep(i, torch.log_softmax(logits[r, : len(requests[i][1])].float(), dim=-1)))
        del logits
    return results


def _chunk_logits(model: Any, prefix: PromptPrefix, requests: Sequence[Request]) -> torch.Tensor:
    """The logits ``(len(requests), longest, V)`` of one chunk of :func:`prefixed_logprobs`
    (right-padded rows; the chunk's copy of the prompt cache is dropped on return)."""
    device = prefix.ids.device
    rows = [row for row, _seq in requests]
    width = max(len(seq) for _row, seq in requests)
    batch = torch.zeros((len(requests), width), dtype=torch.long)
    for r, (row, seq) in enumerate(requests):
        tokens = [int(prefix.ids[row, -1])] + [int(t) for t in seq[:-1]]
        batch[r, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
        batch[r, len(tokens) :] = tokens[-1]
    inputs: dict[str, Any] = {"input_ids": batch.to(device)}
    cache = prefix.cache_for(rows)
    if cache is not None:
        inputs["cache"] = cache
    if bool((prefix.mask == 0).any()):
        head = prefix.mask[rows, :-1]
        inputs["attention_mask"] = torch.cat(
            [head, torch.ones((len(requests), width), dtype=head.dtype, device=device)], dim=1
        )
        start_pos = torch.tensor([prefix.lengths[r] - 1 for r in rows], device=device)
        inputs["position_ids"] = start_pos[:, None] + torch.arange(width, device=device)[None, :]
    logits: torch.Tensor = forward(model, **inputs).logits
    return logits
