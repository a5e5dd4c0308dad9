"""The batched KV cache of a beam search's rows, grown in place (for :mod:`amp.parser.search.fastsearch`).

Every beam slot of every prompt is one row of one cache.  Rows grow in preallocated buffers
(no per-step concatenation of the whole cache) and advance by different numbers of tokens, so a
row's cache may have holes: every pass gets an explicit 4-D attention mask built from each
column's validity and position (sliding-window layers get a window on positions), which is why
only models with full and sliding attention layers take the fast path (:func:`mask_layout`).
"""

from __future__ import annotations

import inspect
from typing import Any, cast

import torch

from amp.parser.models.quantize import compute_dtype
from amp.parser.search.prefix import PromptPrefix, device_of


def mask_layout(model: Any) -> str | None:
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
    from transformers.cache_utils import Cache, DynamicLayer  # late: start-up cost (transformers)

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


class BeamRows:
    """The batched KV cache of all beam slots, with per-column validity and positions."""

    def __init__(self, model: Any, prefix: PromptPrefix, items: list[Any], beams: int, pad_id: int,
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
        dtype = compute_dtype(self.model)
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
