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
the LF tokens stay as they are in ``x`` and in the baseline ``x′``
(:class:`~amp.parser.core.attribution_settings.Baseline`: zeros, the pad token's embedding, or
the mean embedding).  Attribution of token ``t`` is ``Σ_h (x − x′)_{t,h} · g_{t,h}`` with ``g``
the gradient at ``x`` (input × gradient) or its average along the straight path from ``x′`` to
``x`` by the **midpoint rule** on ``n`` equal intervals, ``(1/n) Σ_k g((k − ½)/n)``, k = 1 … n
(integrated gradients, Sundararajan et al. 2017; ``n`` gradient passes; never the baseline
itself, where an RMS-normalised model's gradient at zero embeddings is ~1/√ε).  The
**completeness gap** ``|Σ_t attribution_t − (f(x) − f(x′))|`` is 0 for the exact integral; with a
gap target the steps triple (reusing every pass: the midpoints of ``3n`` intervals hold those of
``n``) until the gap is at most that share of ``|f(x) − f(x′)|`` or the next tripling would pass
``max_steps`` — every rung's steps and relative gap are returned.

Memory does not grow with the steps: the path runs in batches of points whose points × tokens
stay within :data:`~amp.parser.core.limits.ATTRIBUTION_PASS_TOKENS`, only one running sum of
gradients (``P × H``) is kept, and the sequence target takes its two readings' gradients in two
backward passes rather than one graph.  Between batches the cancel check installed with
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
from amp.parser.core import limits
from amp.parser.core.attribution_settings import Baseline
from amp.parser.core.errors import DecodingError, SearchCancelled
from amp.parser.core.results import TokenStep
from amp.parser.search.cancel import current_check
from amp.parser.search.divergence import divergence
from amp.parser.search.prefix import device_of
from amp.parser.search.scoring import check_lf
from amp.parser.search.vocab import check_context, encode_output, encode_prompt, get_masker


@dataclass(frozen=True)
class Gradients:
    """The raw outcome: per prompt token its id, character span in the prompt text (``(0, 0)`` for
    a special token), whether it is attributed, and its attribution; ``value`` = f(x),
    ``baseline_value`` = f(x′); the divergence index and both readings' token ids there; the
    steps of the attributions returned (1 for input × gradient) and every rung tried as
    ``(steps, relative completeness gap)``, in order."""

    token_ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]
    attributed: tuple[bool, ...]
    attributions: tuple[float, ...]
    value: float
    baseline_value: float
    divergence: int
    token_lf0: int
    token_lf1: int
    steps: int = 1
    rungs: tuple[tuple[int, float], ...] = ()


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

    def _divergence(self, prompt_emb: torch.Tensor) -> torch.Tensor:
        lp = self._logprobs(prompt_emb, self.seq0[: self.d], 1)[:, -1]
        return lp[:, self.seq0[self.d]] - lp[:, self.seq1[self.d]]

    def _sequence(self, prompt_emb: torch.Tensor, seq: list[int]) -> torch.Tensor:
        lp = self._logprobs(prompt_emb, seq[:-1], len(seq))
        idx = torch.tensor(seq, device=lp.device)
        return lp.gather(-1, idx.view(1, -1, 1).expand(lp.shape[0], -1, 1)).squeeze(-1).sum(-1)

    def terms(self) -> list[tuple[float, Callable[[torch.Tensor], torch.Tensor]]]:
        """f as a signed sum of terms, each one forward pass (so each gets its own backward)."""
        if self.target == "divergence":
            return [(1.0, self._divergence)]
        return [(1.0, lambda e: self._sequence(e, self.seq0)), (-1.0, lambda e: self._sequence(e, self.seq1))]

    def tail(self) -> int:
        """The most LF tokens one forward pass appends to the prompt."""
        return self.d if self.target == "divergence" else max(len(self.seq0), len(self.seq1)) - 1

    def __call__(self, prompt_emb: torch.Tensor) -> torch.Tensor:
        return sum((sign * term(prompt_emb) for sign, term in self.terms()), torch.zeros(()))


def baseline_embeddings(embed: Any, tokenizer: Any, x: torch.Tensor, mask: torch.Tensor,
                        baseline: Baseline) -> torch.Tensor:
    """x′: ``x`` with every attributed position (``mask`` 1) replaced by the baseline's row."""
    with torch.no_grad():
        if baseline is Baseline.ZERO:
            row = torch.zeros_like(x[0, 0])
        elif baseline is Baseline.PAD:
            found = (getattr(tokenizer, name, None) for name in ("pad_token_id", "unk_token_id", "eos_token_id"))
            token = next((i for i in found if i is not None), None)
            if token is None:
                raise DecodingError("the pad baseline needs a pad, unk or end-of-sequence token, and the "
                                    "tokenizer has none (choose the zero or mean baseline)")
            row = embed(torch.tensor([int(token)], device=x.device))[0].to(x.dtype)
        else:  # the mean row, through the embedding module (a scaled embedding scales it too), in chunks
            vocab = int(embed.num_embeddings)
            total = torch.zeros(x.shape[-1], dtype=torch.float64, device=x.device)
            for start in range(0, vocab, 8192):
                block = torch.arange(start, min(start + 8192, vocab), device=x.device)
                total += embed(block).double().sum(0)
            row = (total / vocab).to(x.dtype)
    return x * (1 - mask) + row.view(1, 1, -1) * mask


def _relative(gap: float, delta: float) -> float:
    """The gap as a share of |f(x) − f(x′)| (0 when both are 0, infinite for a gap over no change)."""
    if delta != 0.0:
        return gap / abs(delta)
    return 0.0 if gap == 0.0 else float("inf")




class _Path:
    """The straight path from x′ to x: f at both ends, batched gradient passes along it (cancel
    check and progress between batches) and the attributions from an average gradient."""

    def __init__(self, f: _Target, x: torch.Tensor, base: torch.Tensor, mask: torch.Tensor, per_pass: int,
                 progress: Callable[[int, int], None] | None) -> None:
        self.f, self.x, self.base, self.per_pass, self.progress = f, x, base, per_pass, progress
        with torch.no_grad():
            self.fx, self.fb = (float(f(point)) for point in (x, base))
        self.diff = (x - base)[0].float() * mask[0].float()  # (P, H): 0 on the tokens kept as they are
        self.done = 0

    def gradient_sums(self, alphas: list[float], total: int) -> torch.Tensor:
        """Σ of the gradients of f at ``x′ + α (x − x′)`` for each α, ``per_pass`` points a pass;
        ``total``: the passes planned so far (for progress)."""
        if self.progress is not None and self.done == 0:
            self.progress(0, total)
        out = torch.zeros_like(self.x[0], dtype=torch.float32)
        for start in range(0, len(alphas), self.per_pass):
            check = current_check()
            if check is not None and check():
                raise SearchCancelled("attribution cancelled")
            batch = alphas[start:start + self.per_pass]
            a = torch.tensor(batch, device=self.x.device, dtype=self.x.dtype).view(-1, 1, 1)
            point = (self.base + a * (self.x - self.base)).detach().requires_grad_(True)
            for sign, term in self.f.terms():
                (grad,) = torch.autograd.grad(term(point).sum(), point)
                out += sign * grad.float().sum(0)
                del grad
            self.done += len(batch)
            if self.progress is not None:
                self.progress(self.done, total)
        return out

    def attributions(self, avg: torch.Tensor) -> tuple[torch.Tensor, float]:
        """Per token ``Σ_h (x − x′) · avg``, and the relative completeness gap of their sum."""
        attr = (self.diff * avg).sum(-1)
        delta = self.fx - self.fb
        return attr, _relative(abs(float(attr.double().sum()) - delta), delta)


def _integrate(path: _Path, steps: int, gap_target: float | None,
               top: int) -> tuple[torch.Tensor, int, list[tuple[int, float]]]:
    """Integrated gradients by the midpoint rule from ``steps`` intervals, tripling (each time only
    the new points: the midpoints of ``3m`` intervals hold those of ``m``) while the relative gap is
    above ``gap_target`` and the tripled steps are at most ``top``: the attributions, their steps
    and every rung ``(steps, relative gap)``."""
    n, rungs = steps, []
    total = path.gradient_sums([(k + 0.5) / n for k in range(n)], total=n)
    while True:
        attr, rel = path.attributions(total / n)
        rungs.append((n, rel))
        if gap_target is None or rel <= gap_target or 3 * n > top:
            return attr, n, rungs
        new = [(3 * k + j + 0.5) / (3 * n) for k in range(n) for j in (0, 2)]  # j = 1 is the old midpoint
        total += path.gradient_sums(new, total=3 * n)
        n *= 3


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
    baseline: Baseline = Baseline.ZERO,
    gap_target: float | None = None,
    max_steps: int | None = None,
    chunk: int | None = None,
    fmt: str = DEFAULT_FORMAT,
    words: OwnWords = NO_WORDS,
    progress: Callable[[int, int], None] | None = None,
) -> Gradients:
    """Attribute ``target`` to the prompt's tokens by ``method`` from ``baseline`` (module docstring).

    Integrated gradients start at ``steps``; with a ``gap_target`` they triple while the relative
    completeness gap is above it and the tripled steps are at most ``max_steps`` (default
    ``steps``: no increase).  ``chunk``: points per pass (default: as many as
    :data:`~amp.parser.core.limits.ATTRIBUTION_PASS_TOKENS` allows).  Settings are taken as
    validated (:mod:`amp.evaluation.attribution` checks them).

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
    per_pass = chunk or max(1, limits.ATTRIBUTION_PASS_TOKENS // (len(ids) + f.tail()))
    with torch.inference_mode(False), torch.enable_grad():
        x = f.embed(torch.tensor([ids], device=device)).detach()
        mask = torch.tensor(attributed, device=device, dtype=x.dtype).view(1, -1, 1)
        base = baseline_embeddings(f.embed, tokenizer, x, mask, Baseline(baseline)).detach()
        path = _Path(f, x, base, mask, per_pass, progress)
        if method == "input_x_gradient":
            attr, rel = path.attributions(path.gradient_sums([1.0], total=1))
            n, rungs = 1, [(1, rel)]
        else:
            attr, n, rungs = _integrate(path, steps, gap_target, steps if max_steps is None else max_steps)
    fx, fb = path.fx, path.fb
    return Gradients(token_ids=tuple(ids), spans=tuple(spans), attributed=tuple(attributed),
                     attributions=tuple(float(v) for v in attr.tolist()), value=fx, baseline_value=fb,
                     divergence=d, token_lf0=seq0[d] if d < len(seq0) else -1,
                     token_lf1=seq1[d] if d < len(seq1) else -1, steps=n, rungs=tuple(rungs))
