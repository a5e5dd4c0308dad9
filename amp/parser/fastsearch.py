"""Grammar-constrained beam search that skips the work the step-by-step search wastes (issue #16).

The search is *the same search* as ``model.generate(num_beams=k, num_return_sequences=k,
length_penalty=0.0, early_stopping=True)`` with :class:`~amp.parser.processors.GrammarLogitsProcessor`
(:mod:`amp.parser.decode`): every logical step keeps the top ``2k`` candidates of each prompt
(``max(2, 1 + #eos) · k``, as transformers does), finishes those whose text completes the grammar
(only among the top ``k`` positions), continues the best ``k`` unfinished ones and keeps the
``k`` best finished ones by **summed** raw log-probability in float32, exactly transformers'
``_beam_search`` bookkeeping.  What changes is how the model is asked:

1. **Forced runs in one pass** (jump-forward decoding).  Where the grammar, with variable
   binding, admits exactly one token after a beam's prefix (``" ."``, ``"("``, ``")"``, the rest
   of a predicate name…), the decision is known before the model is asked, so the pass that
   computes a beam's next distribution also feeds the forced tokens after it: one multi-token
   forward gives the distributions of every position of the run.  The logical steps still
   happen one token at a time and take their probabilities from that pass, so beams, scores
   and ranking are those of the step-by-step search (to float rounding: a multi-token pass may
   differ from single-token passes in the last bits).
2. **Finished work stops.**  A prompt leaves the batch (its cache rows are dropped) as soon as
   transformers' own search could no longer change its result: ``k`` beams finished
   (``early_stopping=True``), or no live beam's summed log-prob exceeds the worst finished one
   (log-probs are ≤ 0, so a running sum only decreases: an exact bound for the summed-score
   ranking the search keeps beams by; GNMT's ``alpha`` only re-orders the ``k`` returned beams
   afterwards, :func:`amp.parser.decode.gnmt_score`, so it does not enter the bound), or the
   budget is spent.  Candidates come from the grammar's allowed ids only: no full-vocabulary
   top-k.
3. **Filler rows cost nothing.**  transformers starts ``k-1`` beams at ``-1e9`` and carries
   ``-1e9``-penalised finished and ``-inf`` masked candidates as running rows; their sums are
   below every real candidate, so they can never displace one.  Here they are dead slots that
   are never computed; a returned beam can only differ from transformers' where transformers
   returns one of them (an empty or ``-inf`` beam, when fewer than ``k`` real beams finish).

The cache holds one row per beam slot (``k`` rows per prompt).  Rows grow in place in
preallocated buffers (no per-step concatenation of the whole cache), rows advance by different
numbers of tokens, so a row's cache may have holes: every pass gets an explicit 4-D attention
mask built from each column's validity and position (sliding-window layers get a window on
positions), which is why only models with full and sliding attention layers take this path
(:func:`supported`); others use ``generate``.  A ``cancel`` callable is checked before every
pass (:class:`~amp.errors.Cancelled`).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import torch

from amp.errors import DecodingError
from amp.parser.cancel import SearchCancelled, current_check, searched
from amp.parser.prefix import PromptPrefix, device_of
from amp.parser.processors import GrammarLogitsProcessor, ScoreTracker

#: Scores at or below this are transformers' filler/penalised rows (real sums are far above).
_JUNK = -1e8
_NEG = np.float32(-1e9)


@dataclass
class SearchStats:
    """What a search cost: logical steps, model passes, tokens fed, forced tokens jumped."""

    steps: int = 0
    passes: int = 0
    row_tokens: int = 0  # rows × width of every pass (holes included)
    fed_tokens: int = 0  # real tokens fed
    forced_tokens: int = 0  # tokens fed ahead because the grammar forced them
    items: int = 0
    item_steps: int = 0  # sum over prompts of the steps each was live

    def add(self, other: SearchStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _mask_layout(model: Any) -> str | None:
    """``"plain"`` (one causal mask), ``"sliding"`` (full + sliding dict) or None (unsupported)."""
    config = getattr(model, "config", None)
    if config is None or getattr(config, "is_encoder_decoder", False):
        return None
    types = set(getattr(config, "layer_types", None) or ())
    window = getattr(config, "sliding_window", None)
    if not types:
        return "plain" if not window else None
    if types == {"full_attention"}:
        return "plain"
    if types <= {"full_attention", "sliding_attention"} and window:
        base: Any = getattr(model, "base_model", None)
        try:
            source = inspect.getsource(type(base).forward)
        except (TypeError, OSError):
            return None
        return "sliding" if "isinstance(causal_mask_mapping := attention_mask, dict)" in source else None
    return None


def supported(model: Any) -> bool:
    """Whether :func:`fast_beam_search` can drive ``model`` (else ``generate`` is used)."""
    return (
        _mask_layout(model) is not None
        and getattr(model, "base_model", None) is not None
        and model.get_output_embeddings() is not None
    )


class _GrowLayer:
    """Keys/values of one layer in preallocated buffers ``(rows, heads, capacity, dim)``."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, extra: int) -> None:
        r, h, n, d = keys.shape
        self.n = n
        self.k = keys.new_empty((r, h, n + extra, d))
        self.v = values.new_empty((r, values.shape[1], n + extra, values.shape[3]))
        self.k[:, :, :n] = keys
        self.v[:, :, :n] = values

    def ensure(self, more: int) -> None:
        cap = self.k.shape[2]
        if self.n + more <= cap:
            return
        new = max(self.n + more, cap + 64)
        for name in ("k", "v"):
            old = getattr(self, name)
            buf = old.new_empty((old.shape[0], old.shape[1], new, old.shape[3]))
            buf[:, :, : self.n] = old[:, :, : self.n]
            setattr(self, name, buf)


def _cache_class() -> type:
    from transformers.cache_utils import Cache, DynamicLayer

    class GrowLayer(DynamicLayer):
        """A :class:`DynamicLayer` over a :class:`_GrowLayer` (writes in place, returns views)."""

        def __init__(self, store: _GrowLayer) -> None:
            super().__init__()
            self.store = store
            self.is_initialized = True
            self.device = store.k.device
            self._sync()

        def _sync(self) -> None:
            s = self.store
            self.keys = s.k[:, :, : s.n]
            self.values = s.v[:, :, : s.n]

        def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any):
            s = self.store
            m = key_states.shape[-2]
            s.ensure(m)
            s.k[:, :, s.n : s.n + m] = key_states
            s.v[:, :, s.n : s.n + m] = value_states
            s.n += m
            self._sync()
            return self.keys, self.values

    class GrowCache(Cache):
        def __init__(self, stores: list[_GrowLayer]) -> None:
            self.stores = stores
            self.layers = [GrowLayer(s) for s in stores]
            self.layer_class_to_replicate = None
            self.offloading = False

        def sync(self) -> None:
            for layer in self.layers:
                cast(Any, layer)._sync()

    return GrowCache


@dataclass
class _Item:
    """The search state of one prompt, as transformers keeps it (float32 sums)."""

    index: int
    prompt_len: int
    last_prompt_token: int
    running: list[tuple[tuple[int, ...], np.float32]]
    finished: list[tuple[tuple[int, ...], np.float32, bool]]
    unsatisfied: bool = True
    done: bool = False
    rows: list[int] = field(default_factory=list)


def _alive(score: np.float32) -> bool:
    return bool(score > _JUNK)


class _Rows:
    """The batched KV cache of all beam slots, with per-column validity and positions."""

    def __init__(self, model: Any, prefix: PromptPrefix, items: list[_Item], beams: int, pad_id: int,
                 layout: str) -> None:
        self.model = model
        self.base = model.base_model
        self.head = model.get_output_embeddings()
        self.softcap = getattr(model.config, "final_logit_softcapping", None)
        self.window = getattr(model.config, "sliding_window", None)
        self.layout = layout
        self.device = device_of(model)
        self.pad_id = pad_id
        params = set(inspect.signature(self.base.forward).parameters)
        self.cache_kw = "cache" if "cache" in params else "past_key_values"
        rows = [it.index for it in items for _ in range(beams)]
        index = torch.tensor(rows, dtype=torch.long, device=self.device)
        head_mask = prefix.mask[:, :-1]
        width = int(head_mask.shape[1])
        stores = []
        if prefix.cache is not None and width:
            for layer in prefix.cache.layers:
                stores.append(_GrowLayer(layer.keys.index_select(0, index), layer.values.index_select(0, index), 64))
        self.cache = _cache_class()(stores) if stores else None
        self.valid = head_mask.index_select(0, index).bool()
        self.pos = (head_mask.long().cumsum(-1) - 1).clamp(min=0).index_select(0, index)
        self.fed: list[tuple[int, ...] | None] = [None] * len(rows)  # None: last prompt token not fed
        self.cols: list[list[int]] = [[] for _ in rows]  # cache column of each fed token (prompt token first)
        self.item_of = [it for it in items for _ in range(beams)]
        for it in items:
            it.rows = [r for r, owner in enumerate(self.item_of) if owner is it]

    @property
    def size(self) -> int:
        return len(self.fed)

    @property
    def width(self) -> int:
        return int(self.valid.shape[1])

    def _columns(self) -> int:
        return self.width

    # -- moving rows ----------------------------------------------------------------------------------

    def gather(self, source: list[int]) -> None:
        """Row ``i`` becomes a copy of row ``source[i]`` (rows of one prompt only)."""
        if source == list(range(self.size)):
            return
        idx = torch.tensor(source, dtype=torch.long, device=self.device)
        shared = self._shared()
        if self.cache is not None:
            for s in self.cache.stores:
                if s.n > shared:
                    s.k[:, :, shared : s.n] = s.k[:, :, shared : s.n].index_select(0, idx)
                    s.v[:, :, shared : s.n] = s.v[:, :, shared : s.n].index_select(0, idx)
            self.cache.sync()
        self.valid = self.valid.index_select(0, idx)
        self.pos = self.pos.index_select(0, idx)
        self.fed = [self.fed[i] for i in source]
        self.cols = [list(self.cols[i]) for i in source]

    def _shared(self) -> int:
        return self.prompt_width

    def keep(self, rows: list[int]) -> None:
        """Drop every row not in ``rows`` (a copy of the whole cache)."""
        idx = torch.tensor(rows, dtype=torch.long, device=self.device)
        if self.cache is not None:
            for s in self.cache.stores:
                s.k = s.k.index_select(0, idx)
                s.v = s.v.index_select(0, idx)
            self.cache.sync()
        self.valid = self.valid.index_select(0, idx)
        self.pos = self.pos.index_select(0, idx)
        self.fed = [self.fed[i] for i in rows]
        self.cols = [self.cols[i] for i in rows]
        self.item_of = [self.item_of[i] for i in rows]

    def truncate(self, row: int, keep: int) -> None:
        """Forget the fed tokens of ``row`` after its first ``keep`` (mark their columns invalid)."""
        fed = self.fed[row]
        if fed is None:
            return
        cols = self.cols[row]
        if keep < 0:  # forget the last prompt token too
            drop, self.fed[row], self.cols[row] = cols, None, []
        else:
            drop, self.fed[row], self.cols[row] = cols[keep + 1 :], fed[:keep], cols[: keep + 1]
        if drop:
            self.valid[row, torch.tensor(drop, dtype=torch.long)] = False

    # -- one pass -------------------------------------------------------------------------------------

    def _mask(self, valid: torch.Tensor, pos: torch.Tensor, qpos: torch.Tensor, qvalid: torch.Tensor,
              dtype: torch.dtype) -> Any:
        kvalid = torch.cat([valid, qvalid], dim=1)
        kpos = torch.cat([pos, qpos], dim=1)
        ok = kvalid[:, None, :] & (kpos[:, None, :] <= qpos[:, :, None])
        low = torch.finfo(dtype).min
        full = torch.zeros(ok.shape, dtype=dtype, device=self.device).masked_fill_(~ok, low)[:, None]
        if self.layout == "plain":
            return full
        assert self.window is not None  # a sliding layout is chosen only for a model with a window
        near = ok & (qpos[:, :, None] - kpos[:, None, :] < self.window)
        sliding = torch.zeros(near.shape, dtype=dtype, device=self.device).masked_fill_(~near, low)[:, None]
        return {"full_attention": full, "sliding_attention": sliding}

    def _forward(self, cache: Any, valid: torch.Tensor, pos: torch.Tensor, feeds: list[list[int]],
                 starts: list[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One forward of ``feeds[i]`` after row ``i`` of ``cache``: (hidden, query validity, positions)."""
        n, width = len(feeds), max(1, max(len(t) for t in feeds))
        ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        qvalid = torch.zeros((n, width), dtype=torch.bool)
        qpos = torch.zeros((n, width), dtype=torch.long)
        for r, toks in enumerate(feeds):
            qpos[r] = starts[r] + torch.arange(width).clamp(max=max(len(toks) - 1, 0))
            if toks:
                ids[r, : len(toks)] = torch.tensor(toks, dtype=torch.long)
                qvalid[r, : len(toks)] = True
        qvalid, qpos = qvalid.to(self.device), qpos.to(self.device)
        dtype = self.head.weight.dtype if self.head.weight.is_floating_point() else torch.float32
        inputs = {"input_ids": ids.to(self.device), "attention_mask": self._mask(valid, pos, qpos, qvalid, dtype),
                  "position_ids": qpos, "use_cache": True}
        if cache is not None:
            inputs[self.cache_kw] = cache
        return self.base(**inputs).last_hidden_state, qvalid, qpos

    def _logprobs(self, hidden: torch.Tensor, where: list[tuple[int, int]]) -> torch.Tensor:
        rows_t = torch.tensor([r for r, _ in where], dtype=torch.long, device=self.device)
        cols_t = torch.tensor([j for _, j in where], dtype=torch.long, device=self.device)
        logits = self.head(hidden[rows_t, cols_t]).float()
        if self.softcap is not None:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return torch.log_softmax(logits, dim=-1)

    @torch.inference_mode()
    def run(self, feeds: dict[int, list[int]], starts: dict[int, int]) -> tuple[dict[int, torch.Tensor], int]:
        """Feed ``feeds[row]`` (from position ``starts[row]``) in one forward over every row (rows
        with fewer tokens get holes); log-probs per fed position, and the row-tokens computed."""
        n = self.size
        toks = [feeds.get(r, []) for r in range(n)]
        hidden, qvalid, qpos = self._forward(self.cache, self.valid, self.pos, toks, [starts[r] for r in range(n)])
        base_col = self.width
        self.valid = torch.cat([self.valid, qvalid], dim=1)
        self.pos = torch.cat([self.pos, qpos], dim=1)
        where = [(r, j) for r in range(n) for j in range(len(toks[r]))]
        logp = self._logprobs(hidden, where)
        out: dict[int, torch.Tensor] = {}
        k = 0
        for r in range(n):
            if toks[r]:
                out[r] = logp[k : k + len(toks[r])]
                k += len(toks[r])
                self.cols[r].extend(base_col + j for j in range(len(toks[r])))
        return out, n * int(qvalid.shape[1])

    prompt_width: int = 0


@torch.inference_mode()
def fast_beam_search(
    model: Any,
    prefix: PromptPrefix,
    processor: GrammarLogitsProcessor,
    *,
    beams: int,
    budget: int,
    eos: Sequence[int],
    pad_id: int,
    jump: bool = True,
    jump_rows: int | None = None,
    cancel: Callable[[], bool] | None = None,
    stats: SearchStats | None = None,
) -> list[list[tuple[int, ...]]]:
    """The ``k`` returned sequences (generated ids, finished slots first by sum) per prompt.

    ``processor.tracker`` receives every candidate's summed log-prob, as under ``generate``.
    ``jump=False`` feeds one token per pass (the same search, for comparison).  Runs are fed
    ahead only while the cache holds at most ``jump_rows`` rows (default ``2 · beams``): a pass is
    one forward over every row, so a run makes the other rows compute holes, which pays where
    the pass is bound by streaming the weights (few rows) and not where it is bound by
    arithmetic (a full batch on a CPU).
    """
    if jump_rows is None:
        jump_rows = 2 * beams
    if cancel is None:
        cancel = current_check()
    layout = _mask_layout(model)
    if layout is None:
        raise DecodingError("this model's attention layout is not supported by the fast search")
    st = stats if stats is not None else SearchStats()
    prefixes = processor.prefixes
    automaton = processor.masker.automaton
    tracker: ScoreTracker = processor.tracker
    keep = max(2, 1 + len(eos)) * beams
    vocab_size = int(model.get_output_embeddings().weight.shape[0])
    items = []
    for b in range(prefix.size):
        running: list[tuple[tuple[int, ...], np.float32]] = [((), np.float32(0.0))]
        running += [((), np.float32(-np.inf))] * (beams - 1)
        finished: list[tuple[tuple[int, ...], np.float32, bool]] = [((), _NEG, False)] * beams
        items.append(_Item(b, prefix.lengths[b], int(prefix.ids[b, -1]), running, finished))
    rows = _Rows(model, prefix, items, beams, pad_id, layout)
    rows.prompt_width = int(prefix.ids.shape[1]) - 1
    st.items += len(items)
    dists: dict[tuple[int, tuple[int, ...]], tuple[torch.Tensor, torch.Tensor]] = {}

    def candidates_of(state: Any, logp: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids, processed log-probs) a row in ``state`` offers, as the processor leaves them."""
        cols = processor.allowed(state)
        if cols.numel() and int(cols[-1]) >= vocab_size:
            cols = cols[cols < vocab_size]
        vals = logp[cols.to(logp.device)].clone()
        if state:
            for canon, members in processor.masker.end_groups(state):
                m = members.to(logp.device)
                inside = torch.isin(m, cols.to(logp.device))
                member_vals = torch.where(inside, logp[m], torch.full_like(logp[m], -math.inf))
                total = torch.logsumexp(member_vals[None], dim=1)[0]
                hit = torch.isin(cols.to(logp.device), m)
                vals[hit] = -math.inf
                vals[cols.to(logp.device) == canon] = total
        return cols, vals.float().cpu()

    texts = processor.masker.vocab.texts
    spoken: dict[Any, int | None] = {}

    def forced_token(state: Any) -> int | None:
        """The token to feed ahead in ``state``: where the grammar forces the *text* (every allowed
        token's text is a prefix of the longest one), the longest one (of equal texts, the highest
        id: Gemma's byte-fallback duplicates come first).  A guess only: the search still weighs
        every allowed token, and a beam that takes another one gets its distribution computed."""
        if state in spoken:
            return spoken[state]
        choice = None
        if state and not automaton.is_final(state):
            ids = [i for i in processor.allowed(state).tolist() if i < vocab_size and texts[i]]
            if ids:
                longest = max(ids, key=lambda i: (len(texts[i] or ""), i))
                if all(texts[longest].startswith(texts[i]) for i in ids):
                    choice = longest
        spoken[state] = choice
        return choice

    def forced_run(p: tuple[int, ...]) -> list[int]:
        run: list[int] = []
        if not jump or rows.size > jump_rows:
            return run
        state = prefixes.state(p)
        while len(p) + len(run) < budget - 1:
            tok = forced_token(state)
            if tok is None:
                break
            nxt = prefixes.state(p + tuple(run) + (tok,))
            if not nxt or automaton.is_final(nxt):
                break
            run.append(tok)
            state = nxt
        return run

    step = 0
    while True:
        live = [it for it in items if not it.done]
        if not live:
            break
        if cancel is not None and cancel():
            raise SearchCancelled("the search was cancelled")
        # -- make sure every live beam's next distribution is known ----------------------------------
        source = list(range(rows.size))
        plans: dict[int, tuple[tuple[int, ...], list[int]]] = {}  # row -> (hyp prefix, tokens to feed)
        truncs: dict[int, int] = {}
        for it in live:
            taken: list[int] = []
            for j, (p, s) in enumerate(it.running):
                row = it.rows[j]
                if not _alive(s):
                    taken.append(row)
                    continue
                best, best_len = it.rows[0], -2
                for r in it.rows:
                    fed = rows.fed[r]
                    if fed is None:
                        common = -1
                    else:
                        common = 0
                        lim = min(len(fed), len(p))
                        while common < lim and fed[common] == p[common]:
                            common += 1
                    if common > best_len:
                        best, best_len = r, common
                source[row] = best
                if (it.index, p) in dists:
                    if best_len < len(p) and best_len != len(rows.fed[best] or ()):
                        truncs[row] = best_len
                    continue
                start_tokens = [] if best_len >= 0 else [it.last_prompt_token]
                todo = start_tokens + list(p[max(best_len, 0):])
                run = forced_run(p)
                truncs[row] = best_len
                plans[row] = (p, todo + run)
        rows.gather(source)
        for row, keep_n in truncs.items():
            fed = rows.fed[row]
            if fed is None or keep_n < len(fed):
                rows.truncate(row, keep_n)
        if plans:
            feeds = {row: toks for row, (_p, toks) in plans.items()}
            starts = {}
            for r in range(rows.size):
                it = rows.item_of[r]
                fed = rows.fed[r]
                starts[r] = it.prompt_len - 1 + (0 if fed is None else 1 + len(fed))
            out, row_tokens = rows.run(feeds, starts)
            st.passes += 1
            st.row_tokens += row_tokens
            for row, (p, toks) in plans.items():
                it = rows.item_of[row]
                fed = rows.fed[row]
                first_gen = 1 if fed is None else 0
                st.fed_tokens += len(toks)
                run_len = len(toks) - first_gen - (len(p) - len(fed or ()))
                st.forced_tokens += max(0, run_len)
                base = fed or ()
                seq = list(base) + [t for t in toks[first_gen:]]
                rows.fed[row] = tuple(seq)
                logp = out[row]
                # position i of the feed predicts the token after prefix seq[: len(base) + i - first_gen + 1]
                for i in range(len(toks)):
                    upto = len(base) + i + 1 - first_gen
                    q = tuple(seq[:upto])
                    if len(q) < len(p):
                        continue
                    if (it.index, q) not in dists:
                        dists[(it.index, q)] = candidates_of(prefixes.state(q), logp[i])
        # -- one logical step per live prompt (transformers' bookkeeping) -----------------------------
        st.steps += 1
        for it in live:
            st.item_steps += 1
            _advance(it, dists, tracker, prefixes, automaton, beams, keep, budget, step, vocab_size)
        step += 1
        for key in [key for key in dists if len(key[1]) <= step - 1]:
            del dists[key]
        finished_now = [it for it in live if it.done]
        searched(len(finished_now))
        if finished_now and any(not it.done for it in items):
            keep_rows = [r for r in range(rows.size) if not rows.item_of[r].done]
            rows.keep(keep_rows)
            for it in items:
                it.rows = [r for r, owner in enumerate(rows.item_of) if owner is it]
    return [[p for p, _s, _f in it.finished] for it in items]


def _advance(it: _Item, dists: dict, tracker: ScoreTracker, prefixes: Any, automaton: Any, beams: int,
             keep: int, budget: int, step: int, vocab_size: int) -> None:
    """One step of transformers' ``_beam_search`` for one prompt (length_penalty 0, early_stopping)."""
    scores: list[torch.Tensor] = []
    flat: list[torch.Tensor] = []
    values: list[torch.Tensor] = []
    for j, (p, s) in enumerate(it.running):
        if not _alive(s):
            continue
        cols, vals = dists[(it.index, p)]
        scores.append(torch.tensor(s, dtype=torch.float32) + vals)
        flat.append(cols + j * vocab_size)
        values.append(vals)
    cands: list[tuple[tuple[int, ...], np.float32]] = []
    if scores:
        allv = torch.cat(scores).numpy()
        allf = torch.cat(flat).numpy()
        raw = torch.cat(values).double().numpy()
        finite = np.flatnonzero(np.isfinite(allv))
        order = finite[np.argsort(-allv[finite], kind="stable")][:keep]
        for i in order.tolist():
            f = int(allf[i])
            p = it.running[f // vocab_size][0]
            q = p + (f % vocab_size,)
            cands.append((q, np.float32(allv[i])))
            parent = tracker.sums.get((it.index, p))
            if parent is not None and (it.index, q) not in tracker.sums:
                tracker.sums[(it.index, q)] = parent + float(raw[i])
    while len(cands) < keep:
        cands.append(((), np.float32(-np.inf)))
    hits = []
    for p, s in cands:
        if s == -np.inf:
            hits.append(False)
            continue
        hits.append(len(p) >= budget or automaton.is_final(prefixes.state(p)))
    # running: top k of the candidates with finished ones pushed down by 1e9
    pen = [np.float32(s + _NEG) if h else s for (p, s), h in zip(cands, hits, strict=True)]
    ranked = sorted(range(len(cands)), key=lambda i: (-float(pen[i]), i))[:beams]
    it.running = [(cands[i][0], pen[i]) for i in ranked]
    # finished: merge the eligible new ones
    full = all(f for _p, _s, f in it.finished)
    merged = list(it.finished)
    for i, ((p, s), h) in enumerate(zip(cands, hits, strict=True)):
        eligible = h and i < beams
        v = s
        if full:
            v = np.float32(v + _NEG)
        if not it.unsatisfied:
            v = np.float32(v + _NEG)
        if not eligible:
            v = np.float32(v + _NEG)
        merged.append((p, v, eligible))
    ranked = sorted(range(len(merged)), key=lambda i: (-float(merged[i][1]), i))[:beams]
    it.finished = [merged[i] for i in ranked]
    # heuristic: can the best running beam still beat the worst finished one?
    all_done = all(f for _p, _s, f in it.finished)
    lowest = min(s for _p, s, _f in it.finished)
    best = it.running[0][1]
    it.unsatisfied = it.unsatisfied and any(bool(best > (lowest if f else _NEG)) for _p, _s, f in it.finished)
    length = step + 1
    no_live = not any(_alive(s) for _p, s in it.running)
    if all_done or not it.unsatisfied or length >= budget or no_live:
        it.done = True
