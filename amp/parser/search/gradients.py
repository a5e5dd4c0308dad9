"""Gradients of the contrast between two readings with respect to the prompt's token embeddings
(docs/paper-notes.md §18): the torch half of :mod:`amp.evaluation.attribution`.

Both LFs are framed and tokenized as forced scoring does (:func:`amp.parser.search.scoring.forced_score`,
``" " + lf + "\\n"``, separately from the prompt).  The **divergence point** is
:func:`amp.parser.search.divergence.divergence` of the two token sequences, so it follows whatever
normalisation of the LFs' tokens lands there.  Two targets ``f`` of the prompt embeddings ``x``
(``P × H``):

* ``divergence`` — ``log p(LF0's token at d) − log p(LF1's token at d)`` given the prompt and the
  shared prefix ``LF[:d]`` (the model's log-odds where it must choose);
* ``sequence`` — ``log P(LF0) − log P(LF1)``, the summed raw token log-probs of the whole forced
  decodes (every token's full-vocabulary log-prob; the end-token merge of forced scoring is left
  out, so this can differ from ``sum_logprob`` by the merged end tokens' mass).

Only the prompt's text tokens are attributed: the leading special tokens (Gemma's ``<bos>``) and
the LF tokens stay as they are in ``x`` and in the baseline.  Attribution of token ``t`` is
``Σ_h (x − b)_{t,h} · g_{t,h}`` with ``g`` the gradient at ``x`` (input × gradient) or its
average along the straight path from the baseline ``b`` to ``x`` at the ``steps`` midpoints
``b + (k − ½)/steps · (x − b)``, k = 1 … steps (integrated gradients, Sundararajan et al. 2017, with
the midpoint rule); the baseline is the zero embedding.  The path runs in batches of
``chunk`` points; between them the cancel check installed with
:func:`amp.parser.search.cancel.cancel_scope` is honoured and ``progress(done, total)`` called.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from amp.logic.own_words import NO_WORDS, OwnWords
from amp.logic.vocabulary import DEFAULT_FORMAT
from amp.parser.core.errors import DecodingError, SearchCancelled
from amp.parser.core.results import TokenStep
from amp.parser.search.cancel import current_check
from amp.parser.search.divergence import divergence
from amp.parser.search.prefix import device_of
from amp.parser.search.scoring import check_lf
from amp.parser.search.vocab import check_context, encode_output, encode_prompt, get_masker

#: What the attribution explains (module docstring).
TARGETS: tuple[str, ...] = ("divergence", "sequence")
#: How: input × gradient, integrated gradients.
METHODS: tuple[str, ...] = ("input_x_gradient", "integrated_gradients")


@dataclass(frozen=True)
class Gradients:
    """The raw outcome: per prompt token its id, character span in the prompt text (``(0, 0)`` for
    a special token), whether it is attributed, and its attribution; ``value`` = f(x),
    ``baseline_value`` = f(b); the divergence index and both readings' token ids there."""

    token_ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]
    attributed: tuple[bool, ...]
    attributions: tuple[float, ...]
    value: float
    baseline_value: float
    divergence: int
    token_lf0: int
    token_lf1: int


def _spans(tokenizer: Any, prompt: str, ids: list[int]) -> list[tuple[int, int]]:
    """Each prompt token's character span, from the fast tokenizer's offsets."""
    try:
        enc = tokenizer(prompt, return_offsets_mapping=True)
    except (NotImplementedError, TypeError, ValueError) as exc:
        raise DecodingError(f"attribution needs a fast tokenizer with character offsets ({exc})") from None
    if list(enc.input_ids) != ids:
        raise DecodingError("the tokenizer's offsets do not describe the prompt's own token ids")
    return [(int(a), int(b)) for a, b in enc["offset_mapping"]]


def _steps(tokenizer: Any, ids: Sequence[int]) -> list[TokenStep]:
    """Token ids as probability-less :class:`TokenStep` s (what :func:`divergence` reads)."""
    return [TokenStep(token=str(i), token_id=int(i), prob=float("nan"), prob_grammar=float("nan")) for i in ids]


def _accepts(model: Any, name: str) -> bool:
    try:
        return name in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


class _Target:
    """f(prompt embeddings) for a batch of embedding rows ``(B, P, H)`` → ``(B,)``."""

    def __init__(self, model: Any, seq0: list[int], seq1: list[int], d: int, target: str) -> None:
        self.model = model
        self.embed = model.get_input_embeddings()
        self.device = device_of(model)
        self.keep = _accepts(model, "logits_to_keep")
        self.seq0, self.seq1, self.d, self.target = seq0, seq1, d, target

    def _logprobs(self, prompt_emb: torch.Tensor, tail: list[int], keep: int) -> torch.Tensor:
        """Log-probs ``(B, keep, V)`` of the last ``keep`` positions of ``prompt + tail``."""
        b = prompt_emb.shape[0]
        parts = [prompt_emb]
        if tail:
            ids = torch.tensor([tail], device=self.device)
            parts.append(self.embed(ids).to(prompt_emb.dtype).expand(b, -1, -1))
        embeds = torch.cat(parts, dim=1)
        kwargs: dict[str, Any] = {"inputs_embeds": embeds, "use_cache": False}
        if self.keep:
            kwargs["logits_to_keep"] = keep
        logits = self.model(**kwargs).logits[:, -keep:].float()
        return torch.log_softmax(logits, dim=-1)

    def __call__(self, prompt_emb: torch.Tensor) -> torch.Tensor:
        if self.target == "divergence":
            lp = self._logprobs(prompt_emb, self.seq0[: self.d], 1)[:, -1]
            return lp[:, self.seq0[self.d]] - lp[:, self.seq1[self.d]]
        total = []
        for seq in (self.seq0, self.seq1):
            lp = self._logprobs(prompt_emb, seq[:-1], len(seq))
            idx = torch.tensor(seq, device=lp.device)
            total.append(lp.gather(-1, idx.view(1, -1, 1).expand(lp.shape[0], -1, 1)).squeeze(-1).sum(-1))
        return total[0] - total[1]


def contrast_gradients(
    model: Any,
    tokenizer: Any,
    prompt: str,
    lf0: str,
    lf1: str,
    *,
    target: str = "divergence",
    method: str = "integrated_gradients",
    steps: int = 16,
    chunk: int = 4,
    fmt: str = DEFAULT_FORMAT,
    words: OwnWords = NO_WORDS,
    progress: Callable[[int, int], None] | None = None,
) -> Gradients:
    """Attribute ``target`` to the prompt's tokens by ``method`` (module docstring).

    Raises :class:`DecodingError` for an LF outside the grammar, for readings whose token
    sequences never part at a token of both (identical, or one a prefix of the other with
    ``target="divergence"``), and :class:`SearchCancelled` when the cancel check fires.  The model
    is used as is (``eval()``); its parameters' gradients are never touched.
    """
    masker = get_masker(tokenizer, fmt, words=words)
    seq0 = encode_output(tokenizer, check_lf(masker, lf0))
    seq1 = encode_output(tokenizer, check_lf(masker, lf1))
    div = divergence(_steps(tokenizer, seq0), _steps(tokenizer, seq1))
    if div.index is None:
        raise DecodingError("LF0 and LF1 are the same token sequence: there is nothing to contrast")
    d = div.index
    if target == "divergence" and (d >= len(seq0) or d >= len(seq1)):
        raise DecodingError("one reading's tokens are a prefix of the other's: they do not part at a token "
                            "(use the sequence target)")
    ids = encode_prompt(tokenizer, prompt)
    check_context(model, len(ids), max(len(seq0), len(seq1)))
    spans = _spans(tokenizer, prompt, ids)
    special = set(getattr(tokenizer, "all_special_ids", ()) or ())
    attributed = [not (i in special and a == b) for i, (a, b) in zip(ids, spans, strict=True)]
    f = _Target(model, seq0, seq1, d, target)
    device = device_of(model)
    with torch.inference_mode(False), torch.enable_grad():
        x = f.embed(torch.tensor([ids], device=device)).detach()
        mask = torch.tensor(attributed, device=device, dtype=x.dtype).view(1, -1, 1)
        base = x * (1 - mask)  # zero embedding on the attributed tokens, the rest as in x
        with torch.no_grad():
            fx, fb = (float(v) for v in f(torch.cat([x, base])))
        if method == "input_x_gradient":
            alphas = [1.0]
        else:
            alphas = [(k + 0.5) / steps for k in range(steps)]
        grad_sum = torch.zeros_like(x[0], dtype=torch.float32)
        if progress is not None:
            progress(0, len(alphas))
        for start in range(0, len(alphas), chunk):
            check = current_check()
            if check is not None and check():
                raise SearchCancelled("attribution cancelled")
            a = torch.tensor(alphas[start:start + chunk], device=device, dtype=x.dtype).view(-1, 1, 1)
            point = (base + a * (x - base)).detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(f(point).sum(), point)
            grad_sum += grad.float().sum(0)
            if progress is not None:
                progress(min(start + chunk, len(alphas)), len(alphas))
        attr = ((x - base)[0].float() * grad_sum / len(alphas)).sum(-1) * mask[0, :, 0].float()
    return Gradients(token_ids=tuple(ids), spans=tuple(spans), attributed=tuple(attributed),
                     attributions=tuple(float(v) for v in attr.tolist()), value=fx, baseline_value=fb,
                     divergence=d, token_lf0=seq0[d] if d < len(seq0) else -1,
                     token_lf1=seq1[d] if d < len(seq1) else -1)
